package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	gh "github.com/google/go-github/v82/github"

	"github.com/capirepo/capirepo/publish"
)

func isAlreadyExists(err error) bool {
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	return slices.ContainsFunc(er.Errors, func(e gh.Error) bool { return e.Code == "already_exists" })
}

// doResp runs a listing call under the retry policy and keeps its response
// for the pagination links.
func doResp[T any](ctx context.Context, g *Target, call func(context.Context) (T, *gh.Response, error)) (T, *gh.Response, error) {
	var resp *gh.Response
	v, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (T, error) {
		v, r, err := call(ctx)
		resp = r
		return v, g.convert(err)
	})
	return v, resp, err
}

// convert turns go-github's errors into the retry policy's terms: rate
// limits become waits until the reset or the Retry-After, other replies a
// StatusError, network errors stay as they are.
func (g *Target) convert(err error) error {
	if err == nil {
		return nil
	}
	now := g.retry.Now()
	var rl *gh.RateLimitError
	if errors.As(err, &rl) {
		return &publish.StatusError{Status: http.StatusForbidden, RateLimited: true, RetryAfter: publish.UntilReset(rl.Rate.Reset.Time, now), Err: err}
	}
	var ab *gh.AbuseRateLimitError
	if errors.As(err, &ab) {
		wait := time.Minute // GitHub: without Retry-After, wait at least a minute
		if ab.RetryAfter != nil {
			wait = *ab.RetryAfter
		}
		if ab.Response != nil {
			if d := publish.RetryAfterHeader(ab.Response.Header, now); d > 0 {
				wait = d
			} else if d := publish.RateLimitReset(ab.Response.Header.Get("X-Ratelimit-Reset"), now); d > 0 {
				wait = d
			}
		}
		return &publish.StatusError{Status: http.StatusForbidden, RateLimited: true, RetryAfter: wait, Err: err}
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return publish.StatusErrorFrom(er.Response.StatusCode, er.Response.Header, now, err)
	}
	return err
}

// hint adds what to do to the errors of a publish people can fix.
func (g *Target) hint(err error) error {
	return publish.Hint(err, func(se *publish.StatusError) string {
		switch se.Status {
		case http.StatusUnauthorized:
			return fmt.Sprintf("the token was refused; set GITHUB_TOKEN to a token that can write releases (contents: write) of %s/%s", g.o.Owner, g.o.Repo)
		case http.StatusNotFound:
			return g.notFound()
		case http.StatusForbidden:
			if !se.RateLimited {
				return fmt.Sprintf("the token may not write releases of %s/%s (it needs contents: write)", g.o.Owner, g.o.Repo)
			}
		}
		return ""
	})
}

// readHint adds what to do to the errors of a read people can fix.
func (g *Target) readHint(err error) error {
	return publish.Hint(err, func(se *publish.StatusError) string {
		switch se.Status {
		case http.StatusUnauthorized:
			return fmt.Sprintf("the token was refused; set GITHUB_TOKEN to a token that can read %s/%s, or unset it for a public repository", g.o.Owner, g.o.Repo)
		case http.StatusNotFound:
			return g.notFound()
		}
		return ""
	})
}

func (g *Target) notFound() string {
	return fmt.Sprintf("repository %s/%s does not exist or the token cannot see it", g.o.Owner, g.o.Repo)
}
