package configmap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// Target writes a release's ConfigMaps and Provider resources into one file
// (Render), and reads such a file back by the operator's rules: the
// Provider resource of a provider selects its ConfigMaps (a publish.Source).
type Target struct {
	// File is the file written and read.
	File string
	// Namespace is Options.Namespace of Render.
	Namespace string
}

var (
	_ publish.Target  = (*Target)(nil)
	_ publish.Planner = (*Target)(nil)
)

// Planned names the one file Publish writes.
func (t *Target) Planned(*release.Release) ([]string, error) {
	return []string{filepath.Base(t.File)}, nil
}

// Publish renders the release and writes the file atomically; a file that
// already holds the same bytes is left alone.
func (t *Target) Publish(ctx context.Context, rel *release.Release) (*publish.Summary, error) {
	data, _, err := Render(rel, Options{Namespace: t.Namespace})
	if err != nil {
		return nil, err
	}
	sum := &publish.Summary{Kind: "configmap", URL: t.File, Version: rel.Version, Uploaded: []string{}, Skipped: []string{}, Replaced: []string{}}
	name := filepath.Base(t.File)
	old, err := os.ReadFile(t.File)
	switch {
	case err == nil && string(old) == string(data):
		sum.Skipped = append(sum.Skipped, name)
		return sum, nil
	case err == nil:
		sum.Replaced = append(sum.Replaced, name)
	case errors.Is(err, fs.ErrNotExist):
		sum.Uploaded = append(sum.Uploaded, name)
	default:
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := fsafe.WriteFileAtomic(t.File, data); err != nil {
		return nil, err
	}
	sum.BytesUploaded = int64(len(data))
	return sum, nil
}

// Clusterctl says that clusterctl reads no ConfigMaps: cluster-api-operator
// does, by the rules the Source follows.
func (t *Target) Clusterctl() publish.Reach {
	return publish.Reach{Why: "clusterctl cannot read ConfigMaps", Reader: "the operator"}
}

// resource reads the file and finds the Provider resource of a provider.
func (t *Target) resource(id provider.ID) (*File, Resource, error) {
	data, err := fsafe.ReadFile(t.File)
	if err != nil {
		return nil, Resource{}, err
	}
	f, err := Parse(t.File, data)
	if err != nil {
		return nil, Resource{}, err
	}
	i := slices.IndexFunc(f.Resources, func(r Resource) bool { return r.ID == id })
	if i < 0 {
		return nil, Resource{}, fmt.Errorf("%s: no Provider resource for %s: %w", t.File, id.Label(), publish.ErrNotFound)
	}
	return f, f.Resources[i], nil
}

// Versions lists the versions of the ConfigMaps a provider's resource selects.
func (t *Target) Versions(_ context.Context, id provider.ID) ([]string, error) {
	f, r, err := t.resource(id)
	if err != nil {
		return nil, err
	}
	return listVersions(f, r)
}

// load reads one version as the operator would install it.
func (t *Target) load(ref publish.Ref) (*release.Provider, error) {
	f, r, err := t.resource(ref.ID)
	if err != nil {
		return nil, err
	}
	vs, err := listVersions(f, r)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(vs, ref.Version) {
		return nil, fmt.Errorf("%s: no ConfigMap of %s %s: %w", t.File, ref.ID.Label(), ref.Version, publish.ErrNotFound)
	}
	r.Version = ref.Version
	return Load(f, r)
}

// List lists the metadata and components of one version.
func (t *Target) List(_ context.Context, ref publish.Ref) (map[string]publish.Remote, error) {
	p, err := t.load(ref)
	if err != nil {
		return nil, err
	}
	out := map[string]publish.Remote{}
	for _, f := range p.Files {
		out[f.Name] = publish.Remote{Name: f.Name, Size: int64(len(f.Data)), SHA256: f.SHA256()}
	}
	return out, nil
}

// Fetch reads the named files of one version.
func (t *Target) Fetch(_ context.Context, ref publish.Ref, names ...string) ([]release.File, error) {
	p, err := t.load(ref)
	if err != nil {
		return nil, err
	}
	out := make([]release.File, 0, len(names))
	for _, n := range names {
		f, ok := p.File(n)
		if !ok {
			return nil, fmt.Errorf("%s: %s %s has no %s: %w", t.File, ref.ID.Label(), ref.Version, n, publish.ErrNotFound)
		}
		out = append(out, f)
	}
	return out, nil
}
