package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/capirepo/capirepo/publish"
)

// client is the registry client of a publisher or reader: every call goes
// through one retry policy and sees the same credentials and transport.
type client struct {
	keychain  authn.Keychain
	transport http.RoundTripper
	retry     publish.Retry
	plainHTTP bool
	secrets   []string
	// answeredPlain is set once the registry answered a plain-HTTP
	// request: go-containerregistry falls back to HTTP for localhost and
	// private addresses without being told, so a registry reached without
	// --plain-http may be plain-HTTP all the same.
	answeredPlain atomic.Bool
}

// statusTransport turns the replies worth another try (429, 408, 5xx) into
// a publish.StatusError carrying the server's Retry-After, so the retry
// policy sees the wait the registry asked for; go-containerregistry's own
// errors do not keep reply headers.
type statusTransport struct {
	inner http.RoundTripper
	now   func() time.Time
	plain *atomic.Bool // set when a plain-HTTP request got an answer
}

func (t *statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.inner.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if req.URL.Scheme == "http" && t.plain != nil {
		t.plain.Store(true)
	}
	s := resp.StatusCode
	if s == http.StatusTooManyRequests || s == http.StatusRequestTimeout || s >= 500 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		msg := strings.TrimSpace(string(body))
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		// The client puts the method and URL in front.
		e := errors.New(resp.Status)
		if msg != "" {
			e = fmt.Errorf("%w: %s", e, msg)
		}
		return nil, publish.StatusErrorFrom(s, resp.Header, t.now(), e)
	}
	return resp, nil
}

func newClient(keychain authn.Keychain, base http.RoundTripper, r *publish.Retry, plainHTTP bool, secrets []string) *client {
	if keychain == nil {
		keychain = authn.NewMultiKeychain() // anonymous
	}
	// Every wait has a bound and no redirect carries a credential to
	// another origin: the transport of every registry call of capirepo.
	base = publish.RegistryTransport(base, publish.HTTPOptions{})
	c := &client{keychain: keychain, plainHTTP: plainHTTP, secrets: secrets}
	c.retry = publish.DefaultRetry()
	if r != nil {
		c.retry = *r
	}
	now := c.retry.Now
	if now == nil {
		now = time.Now
	}
	c.transport = &statusTransport{inner: base, now: now, plain: &c.answeredPlain}
	return c
}

// options are the go-containerregistry options of one call: its own retries
// are off (the policy of publish/retry.go retries whole calls instead).
func (c *client) options(ctx context.Context) []remote.Option {
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(c.keychain),
		remote.WithTransport(c.transport),
		remote.WithRetryPredicate(func(error) bool { return false }),
		remote.WithRetryStatusCodes(),
		remote.WithUserAgent("capirepo"),
	}
}

func (c *client) nameOptions() []name.Option {
	if c.plainHTTP {
		return []name.Option{name.Insecure}
	}
	return nil
}

// repository parses REGISTRY/PATH. A path without a registry host would
// silently mean Docker Hub to go-containerregistry and fail in the
// operator, so it is refused.
func (c *client) repository(repo string) (name.Repository, error) {
	first, _, _ := strings.Cut(repo, "/")
	if !strings.ContainsAny(first, ".:") && first != "localhost" {
		return name.Repository{}, fmt.Errorf("%q: want REGISTRY/PATH with the registry host first, e.g. registry.example.com/capi", repo)
	}
	r, err := name.NewRepository(repo, c.nameOptions()...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("%q: %w", repo, err)
	}
	return r, nil
}

// do runs op under the retry policy.
func (c *client) do(ctx context.Context, op func(ctx context.Context) error) error {
	return c.retry.Do(ctx, op)
}

// isNotFound reports whether a registry said the manifest or repository
// is not there.
func isNotFound(err error) bool {
	var te *transport.Error
	if errors.As(err, &te) {
		if te.StatusCode == http.StatusNotFound {
			return true
		}
		for _, d := range te.Errors {
			if d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode {
				return true
			}
		}
	}
	return false
}

// getManifest fetches the manifest a tag points at; ok is false when there
// is none.
func (c *client) getManifest(ctx context.Context, ref name.Reference) (raw []byte, mt string, digest v1.Hash, ok bool, err error) {
	err = c.do(ctx, func(ctx context.Context) error {
		d, gerr := remote.Get(ref, c.options(ctx)...)
		if gerr != nil {
			if isNotFound(gerr) {
				return publish.Permanent(gerr)
			}
			return gerr
		}
		raw, mt, digest, ok = d.Manifest, string(d.MediaType), d.Digest, true
		return nil
	})
	if err != nil && isNotFound(err) {
		return nil, "", v1.Hash{}, false, nil
	}
	return raw, mt, digest, ok, c.redact(err)
}

// fetchBlob reads one blob of repo, of the size its descriptor gives
// (what names it), and checks its digest. A blob that goes on past its
// size is cut off, not read into memory, and not retried.
func (c *client) fetchBlob(ctx context.Context, repo name.Repository, what string, d v1.Descriptor) ([]byte, error) {
	var out []byte
	// Not publish.ReadLimit: the token exchange a registry asks for goes
	// out with the same context, and its reply may be larger than the blob.
	err := c.do(ctx, func(ctx context.Context) error {
		l, err := remote.Layer(repo.Digest(d.Digest.String()), c.options(ctx)...)
		if err != nil {
			return err
		}
		rc, err := l.Compressed() // verifies the digest as it reads
		if err != nil {
			return err
		}
		defer func() { _ = rc.Close() }()
		out, err = publish.LimitedReadAll(rc, what, d.Size)
		var big *publish.TooLargeError
		var slow *publish.TransferTimeoutError
		if errors.As(err, &big) || errors.As(err, &slow) {
			return publish.Permanent(err)
		}
		return err
	})
	return out, c.redact(err)
}

// listTags lists a repository's tags; none when the repository is not there.
func (c *client) listTags(ctx context.Context, repo name.Repository) ([]string, error) {
	var tags []string
	err := c.do(ctx, func(ctx context.Context) error {
		var err error
		tags, err = remote.List(repo, c.options(ctx)...)
		if err != nil && isNotFound(err) {
			return publish.Permanent(err)
		}
		return err
	})
	if err != nil && isNotFound(err) {
		return nil, nil
	}
	return tags, c.redact(err)
}

// write pushes an artifact's blobs (those the registry lacks) and then its
// manifest under its tag.
func (c *client) write(ctx context.Context, ref name.Reference, a *Artifact) error {
	img, err := a.Image()
	if err != nil {
		return err
	}
	return c.redact(c.do(ctx, func(ctx context.Context) error {
		return remote.Write(ref, img, c.options(ctx)...)
	}))
}

// redact keeps every credential capirepo holds out of an error's text,
// whatever a library put there.
func (c *client) redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	red := msg
	for _, s := range c.secrets {
		if s != "" {
			red = strings.ReplaceAll(red, s, "[REDACTED]")
		}
	}
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
