package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	gh "github.com/google/go-github/v82/github"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// Versions lists the tags of the repository's published releases. Drafts
// are left out, and tags without a release never appear in the list. The
// list is the same for every provider the repository serves and is read once.
func (r *Target) Versions(ctx context.Context, _ provider.ID) ([]string, error) {
	r.readMu.Lock()
	defer r.readMu.Unlock()
	if r.versions != nil {
		return slices.Clone(r.versions), nil
	}
	var out []string
	for page := 1; page != 0; {
		rs, next, err := r.releasesPage(ctx, page)
		if err != nil {
			return nil, r.readHint(fmt.Errorf("list releases of %s/%s: %w", r.o.Owner, r.o.Repo, err))
		}
		for _, rel := range rs {
			if !rel.GetDraft() && rel.GetTagName() != "" {
				out = append(out, rel.GetTagName())
			}
		}
		page = next
	}
	r.versions = out
	return slices.Clone(out), nil
}

// List returns the assets of the published release of the version, with
// the size and sha256 GitHub reports for each (no sha256 from servers that
// report no digest). One release holds every provider of the repository.
func (r *Target) List(ctx context.Context, ref publish.Ref) (map[string]publish.Remote, error) {
	rel, err := r.published(ctx, ref.Version)
	if err != nil {
		return nil, err
	}
	return remotes(&ghRelease{assets: rel.assets}), nil
}

// Fetch downloads the named assets of the published release of the version.
func (r *Target) Fetch(ctx context.Context, ref publish.Ref, names ...string) ([]release.File, error) {
	rel, err := r.published(ctx, ref.Version)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if rel.assets[n] == nil {
			return nil, fmt.Errorf("github release %s of %s/%s has no asset %s: %w", ref.Version, r.o.Owner, r.o.Repo, n, publish.ErrNotFound)
		}
	}
	return r.fetch(ctx, rel, names)
}

// published finds the published release of a tag with its full asset
// list. A release found is kept for the reader's life (one run).
func (r *Target) published(ctx context.Context, tag string) (*ghRelease, error) {
	r.readMu.Lock()
	rel, ok := r.releases[tag]
	r.readMu.Unlock()
	if ok {
		return rel, nil
	}
	rr, err := publish.DoValue(ctx, r.retry, func(ctx context.Context) (*gh.RepositoryRelease, error) {
		rr, _, err := r.c.Repositories.GetReleaseByTag(ctx, r.o.Owner, r.o.Repo, tag)
		return rr, r.convert(err)
	})
	var se *publish.StatusError
	switch {
	case errors.As(err, &se) && se.Status == http.StatusNotFound:
		return nil, fmt.Errorf("%s/%s has no published release %s: %w", r.o.Owner, r.o.Repo, tag, publish.ErrNotFound)
	case err != nil:
		return nil, r.readHint(fmt.Errorf("read release %s of %s/%s: %w", tag, r.o.Owner, r.o.Repo, err))
	}
	rel = toRelease(rr)
	if rel.assets == nil {
		if err := r.listAssets(ctx, rel); err != nil {
			return nil, err
		}
	}
	r.readMu.Lock()
	if r.releases == nil {
		r.releases = map[string]*ghRelease{}
	}
	r.releases[tag] = rel
	r.readMu.Unlock()
	return rel, nil
}

// fetch reads the named assets (publish.Read checks them against the
// digests GitHub reports).
func (r *Target) fetch(ctx context.Context, rel *ghRelease, names []string) ([]release.File, error) {
	out := make([]release.File, 0, len(names))
	for _, n := range names {
		data, err := r.downloadBytes(ctx, rel.assets[n])
		if err != nil {
			return nil, r.readHint(fmt.Errorf("download %s of release %s of %s/%s: %w", n, rel.tag, r.o.Owner, r.o.Repo, err))
		}
		out = append(out, release.File{Name: n, Data: data})
	}
	return out, nil
}

// downloadBytes reads an asset's bytes through the API (octet-stream
// Accept header), following GitHub's redirect to its storage. It reads at
// most the size GitHub lists for the asset (and no asset over
// publish.MaxReplySize): a reply that goes on is cut off, not retried.
func (g *Target) downloadBytes(ctx context.Context, a *gh.ReleaseAsset) ([]byte, error) {
	what, size := a.GetName(), int64(a.GetSize())
	if size > publish.MaxReplySize {
		return nil, fmt.Errorf("%s is listed at %d bytes, more than capirepo reads of one file (%d)", what, size, publish.MaxReplySize)
	}
	ctx = publish.ReadLimit(ctx, what, size)
	return publish.DoValue(ctx, g.retry, func(ctx context.Context) ([]byte, error) {
		rc, _, err := g.c.Repositories.DownloadReleaseAsset(ctx, g.o.Owner, g.o.Repo, a.GetID(), g.hc)
		if err != nil {
			return nil, g.convert(err)
		}
		defer func() { _ = rc.Close() }()
		data, err := publish.LimitedReadAll(rc, what, size)
		if stopped(err) {
			return nil, publish.Permanent(err)
		}
		return data, err
	})
}

// stopped says a download was cut off for its size or its time: trying
// again would read the same.
func stopped(err error) bool {
	var big *publish.TooLargeError
	var slow *publish.TransferTimeoutError
	return errors.As(err, &big) || errors.As(err, &slow)
}
