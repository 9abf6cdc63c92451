package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	gh "github.com/google/go-github/v82/github"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// find returns the published release for tag, or else the oldest draft for
// it, or nil. The by-tag endpoint never returns drafts, so drafts are found
// by listing: the first page of releases is read alongside the by-tag
// lookup, and further pages only when by-tag finds nothing.
func (g *Target) find(ctx context.Context, tag string) (*ghRelease, error) {
	listCtx, cancel := context.WithCancel(ctx)
	var (
		wg      sync.WaitGroup
		first   []*gh.RepositoryRelease
		next    int
		listErr error
	)
	wg.Go(func() { first, next, listErr = g.releasesPage(listCtx, 1) })
	defer func() { cancel(); wg.Wait() }()

	rr, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gh.RepositoryRelease, error) {
		r, _, err := g.c.Repositories.GetReleaseByTag(ctx, g.o.Owner, g.o.Repo, tag)
		return r, g.convert(err)
	})
	var se *publish.StatusError
	switch {
	case err == nil:
		return toRelease(rr), nil // the published release wins; the listing is cancelled
	case errors.As(err, &se) && se.Status == http.StatusNotFound:
	default:
		return nil, g.hint(fmt.Errorf("look up release %s of %s/%s: %w", tag, g.o.Owner, g.o.Repo, err))
	}
	wg.Wait()
	if listErr != nil {
		return nil, g.hint(fmt.Errorf("look for a draft release %s of %s/%s: %w", tag, g.o.Owner, g.o.Repo, listErr))
	}
	d, err := g.oldestDraft(ctx, tag, first, next)
	if err != nil {
		return nil, g.hint(fmt.Errorf("look for a draft release %s of %s/%s: %w", tag, g.o.Owner, g.o.Repo, err))
	}
	if d != nil {
		g.progress("resuming draft release %s (id %d)", tag, d.id)
	}
	return d, nil
}

func (g *Target) findDraft(ctx context.Context, tag string) (*ghRelease, error) {
	page, next, err := g.releasesPage(ctx, 1)
	if err != nil {
		return nil, err
	}
	return g.oldestDraft(ctx, tag, page, next)
}

// oldestDraft returns the oldest draft for tag in the releases list, given
// a page already read and the number of the next one (0: none).
func (g *Target) oldestDraft(ctx context.Context, tag string, page []*gh.RepositoryRelease, next int) (*ghRelease, error) {
	var found *gh.RepositoryRelease
	for {
		for _, r := range page {
			// The oldest draft wins, so every run picks the same one.
			if r.GetDraft() && r.GetTagName() == tag && (found == nil || r.GetID() < found.GetID()) {
				found = r
			}
		}
		if next == 0 {
			break
		}
		var err error
		if page, next, err = g.releasesPage(ctx, next); err != nil {
			return nil, err
		}
	}
	if found == nil {
		return nil, nil
	}
	return toRelease(found), nil
}

// releasesPage reads one page of the repository's releases, newest first,
// and returns the next page's number (0: none).
func (g *Target) releasesPage(ctx context.Context, page int) ([]*gh.RepositoryRelease, int, error) {
	opts := &gh.ListOptions{PerPage: 100, Page: page}
	rs, resp, err := doResp(ctx, g, func(ctx context.Context) ([]*gh.RepositoryRelease, *gh.Response, error) {
		return g.c.Repositories.ListReleases(ctx, g.o.Owner, g.o.Repo, opts)
	})
	if err != nil {
		return nil, 0, err
	}
	return rs, resp.NextPage, nil
}

func (g *Target) create(ctx context.Context, tag string, rel *release.Release) (*ghRelease, error) {
	body, err := g.notes(ctx, tag)
	if err != nil {
		return nil, err
	}
	in := &gh.RepositoryRelease{TagName: gh.Ptr(tag), Name: gh.Ptr(g.title(tag)), Draft: gh.Ptr(true)}
	if body != "" {
		in.Body = gh.Ptr(body)
	}
	if g.o.Commitish != "" {
		in.TargetCommitish = gh.Ptr(g.o.Commitish)
	}
	if g.prerelease(tag) {
		in.Prerelease = gh.Ptr(true)
	}
	attempt := 0
	r, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*ghRelease, error) {
		attempt++
		if attempt > 1 {
			// The last attempt may have created the draft before failing.
			if d, err := g.findDraft(ctx, tag); err != nil || d != nil {
				return d, err
			}
		}
		r, _, err := g.c.Repositories.CreateRelease(ctx, g.o.Owner, g.o.Repo, in)
		if err != nil {
			return nil, g.convert(err)
		}
		return toRelease(r), nil
	})
	if err != nil {
		return nil, g.hint(fmt.Errorf("create draft release %s in %s/%s: %w", tag, g.o.Owner, g.o.Repo, err))
	}
	g.progress("created draft release %s (id %d)", tag, r.id)
	return r, nil
}

// checkTarget warns when --target is given for a tag that already exists:
// GitHub keeps the tag where it is and ignores the target.
func (g *Target) checkCommitish(ctx context.Context, tag string, r *ghRelease, sum *publish.Summary) error {
	if g.o.Commitish == "" {
		return nil
	}
	if r != nil && !r.draft {
		g.warn(sum, "%s %s is ignored: release %s is published, its tag exists", option.Flag(ctx, option.Target), g.o.Commitish, tag)
		return nil
	}
	ref, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gh.Reference, error) {
		ref, _, err := g.c.Git.GetRef(ctx, g.o.Owner, g.o.Repo, "tags/"+tag)
		return ref, g.convert(err)
	})
	var se *publish.StatusError
	switch {
	case err == nil:
		g.warn(sum, "%s %s is ignored: tag %s already exists (at %s) and GitHub publishes the release on it as it is",
			option.Flag(ctx, option.Target), g.o.Commitish, tag, ref.GetObject().GetSHA())
	case errors.As(err, &se) && se.Status == http.StatusNotFound:
		// The tag is created when the release is published.
	default:
		return g.hint(fmt.Errorf("look up tag %s of %s/%s: %w", tag, g.o.Owner, g.o.Repo, err))
	}
	return nil
}

// publish turns the draft into a release; GitHub creates the tag now, from
// Target or the default branch.
func (g *Target) publish(ctx context.Context, r *ghRelease) error {
	edit := &gh.RepositoryRelease{Draft: gh.Ptr(false)}
	if r.prerelease {
		edit.MakeLatest = gh.Ptr("false")
	}
	rr, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gh.RepositoryRelease, error) {
		rr, _, err := g.c.Repositories.EditRelease(ctx, g.o.Owner, g.o.Repo, r.id, edit)
		return rr, g.convert(err)
	})
	if err != nil {
		return g.hint(fmt.Errorf("publish draft release %s (all assets are uploaded and checked; re-run to publish): %w", r.tag, err))
	}
	nr := toRelease(rr)
	r.draft, r.htmlURL, r.immutable = nr.draft, nr.htmlURL, nr.immutable
	g.progress("published the draft release %s", r.tag) // its URL is the summary's
	return nil
}

// embeddedAssetsMax bounds the asset list a release object carries that is
// taken as complete. The REST docs state no cap for it (lists of 54 are seen
// whole); a list this long is read again from the paginated assets endpoint.
const embeddedAssetsMax = 50

// toRelease keeps the assets the release object lists, when there are few
// enough to trust the list is whole (else assets stays nil: not known).
// They are the state compared before writing; the read back after the
// uploads always lists the assets anew.
func toRelease(r *gh.RepositoryRelease) *ghRelease {
	out := &ghRelease{id: r.GetID(), tag: r.GetTagName(), name: r.GetName(), body: r.GetBody(), draft: r.GetDraft(),
		prerelease: r.GetPrerelease(), immutable: r.GetImmutable(), htmlURL: r.GetHTMLURL()}
	if len(r.Assets) < embeddedAssetsMax {
		out.assets = map[string]*gh.ReleaseAsset{}
		for _, a := range r.Assets {
			out.assets[a.GetName()] = a
		}
	}
	return out
}
