package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/google/go-github/v82/github"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// GitHubReader reads the published releases of one repository through the
// REST API: the releases list for versions, the assets endpoint for the
// bytes, so one API base URL serves github.com, GitHub Enterprise and the
// test fakes. It shares the publisher's client, retry policy, listing and
// download code (the publisher reads back through the same calls).
type GitHubReader struct {
	*GitHub

	mu       sync.Mutex
	versions []string // cached: one repository serves several providers (cluster-api)
	releases map[string]*ghRelease
}

var _ Source = (*GitHubReader)(nil)

// NewGitHubReader checks the options (Owner, Repo, APIURL, Token,
// HTTPClient, Retry, Progress are used) and returns a reader.
func NewGitHubReader(o GitHubOptions) (*GitHubReader, error) {
	g, err := NewGitHub(o)
	if err != nil {
		return nil, err
	}
	return &GitHubReader{GitHub: g}, nil
}

// Versions lists the tags of the repository's published releases. Drafts
// are left out, and tags without a release never appear in the list. The
// list is the same for every provider the repository serves and is read once.
func (r *GitHubReader) Versions(ctx context.Context, _ provider.ID) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
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
func (r *GitHubReader) List(ctx context.Context, ref Ref) (map[string]Remote, error) {
	rel, err := r.published(ctx, ref.Version)
	if err != nil {
		return nil, err
	}
	return remotes(&ghRelease{assets: rel.assets}), nil
}

// Fetch downloads the named assets of the published release of the version.
func (r *GitHubReader) Fetch(ctx context.Context, ref Ref, names ...string) ([]release.File, error) {
	rel, err := r.published(ctx, ref.Version)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if rel.assets[n] == nil {
			return nil, fmt.Errorf("github release %s of %s/%s has no asset %s: %w", ref.Version, r.o.Owner, r.o.Repo, n, ErrNotFound)
		}
	}
	return r.download(ctx, rel, names)
}

// published finds the published release of a tag with its full asset
// list. A release found is kept for the reader's life (one run).
func (r *GitHubReader) published(ctx context.Context, tag string) (*ghRelease, error) {
	r.mu.Lock()
	rel, ok := r.releases[tag]
	r.mu.Unlock()
	if ok {
		return rel, nil
	}
	rr, err := DoValue(ctx, r.retry, func(ctx context.Context) (*github.RepositoryRelease, error) {
		rr, _, err := r.c.Repositories.GetReleaseByTag(ctx, r.o.Owner, r.o.Repo, tag)
		return rr, r.convert(err)
	})
	var se *StatusError
	switch {
	case errors.As(err, &se) && se.Status == http.StatusNotFound:
		return nil, fmt.Errorf("%s/%s has no published release %s: %w", r.o.Owner, r.o.Repo, tag, ErrNotFound)
	case err != nil:
		return nil, r.readHint(fmt.Errorf("read release %s of %s/%s: %w", tag, r.o.Owner, r.o.Repo, err))
	}
	rel = toRelease(rr)
	if rel.assets == nil {
		if err := r.listAssets(ctx, rel); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	if r.releases == nil {
		r.releases = map[string]*ghRelease{}
	}
	r.releases[tag] = rel
	r.mu.Unlock()
	return rel, nil
}

// download reads the named assets (publish.Read checks them against the
// digests GitHub reports).
func (r *GitHubReader) download(ctx context.Context, rel *ghRelease, names []string) ([]release.File, error) {
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

// readHint says what to do about the errors of a read.
func (r *GitHubReader) readHint(err error) error {
	var se *StatusError
	if !errors.As(err, &se) {
		return err
	}
	switch se.Status {
	case http.StatusUnauthorized:
		return fmt.Errorf("%w: the token was refused; set GITHUB_TOKEN to a token that can read %s/%s, or unset it for a public repository", err, r.o.Owner, r.o.Repo)
	case http.StatusNotFound:
		return fmt.Errorf("%w: repository %s/%s does not exist or the token cannot see it", err, r.o.Owner, r.o.Repo)
	}
	return err
}

// downloadBytes reads an asset's bytes through the API (octet-stream
// Accept header), following GitHub's redirect to its storage.
func (g *GitHub) downloadBytes(ctx context.Context, a *github.ReleaseAsset) ([]byte, error) {
	return DoValue(ctx, g.retry, func(ctx context.Context) ([]byte, error) {
		rc, _, err := g.c.Repositories.DownloadReleaseAsset(ctx, g.o.Owner, g.o.Repo, a.GetID(), g.hc)
		if err != nil {
			return nil, g.convert(err)
		}
		defer func() { _ = rc.Close() }()
		return io.ReadAll(rc)
	})
}
