package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/versions"
)

// resolve turns a requested version (vX.Y.Z, latest, latest-N) into the
// published versions to mirror, oldest first, as clusterctl resolves them
// (versions.Resolve).
func (m *mirror) resolve(ctx context.Context, p *MirroredProvider, want string) ([]string, error) {
	w, _ := versions.ParseWant(want) // checked by selectProviders
	out, err := versions.Resolve(ctx, m.repository(p), w)
	switch {
	case errors.Is(err, versions.ErrNoRelease):
		return nil, fmt.Errorf("no published release at %s is tagged with a semantic version and holds a metadata.yaml", p.Source)
	case !w.Latest && errors.Is(err, versions.ErrNotFound):
		return nil, fmt.Errorf("%s is not a published release at %s (drafts and tags without a release are not mirrored)", want, p.Source)
	case err != nil:
		return nil, fmt.Errorf("resolve %s at %s: %w", want, p.Source, err)
	}
	return out, nil
}

// mirrorRepository is a provider's source as the version choice reads it;
// the metadata.yaml it reads is kept for the copy.
type mirrorRepository struct {
	*publish.Repository
	m *mirror
	p *MirroredProvider
}

func (m *mirror) repository(p *MirroredProvider) mirrorRepository {
	return mirrorRepository{
		Repository: &publish.Repository{Source: p.reader, IDs: []provider.ID{p.id}, Components: p.components,
			Skipped: func(tag string, err error) { m.logf("%s: skipping %s: %v", p.Label, tag, err) }},
		m: m, p: p,
	}
}

// Metadata reads one version's metadata.yaml alone, once, so resolving
// latest downloads no components and the copy does not download it again.
func (r mirrorRepository) Metadata(ctx context.Context, v string) ([]byte, error) {
	r.m.mu.Lock()
	data, ok := r.p.meta[v]
	r.m.mu.Unlock()
	if ok {
		return data, nil
	}
	data, err := r.Repository.Metadata(ctx, v)
	if err != nil {
		return nil, err
	}
	r.m.mu.Lock()
	r.p.meta[v] = data
	r.m.mu.Unlock()
	return data, nil
}
