package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/operator"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/versions"
)

// maxFileSize bounds one file read back from a registry.
const maxFileSize = 256 << 20

// artifactRepository is where the publisher puts (and reads) a provider.
func (p *Target) artifactRepository(id provider.ID) string {
	switch {
	case p.o.SingleArtifact:
		return p.o.Repository
	case p.o.Format == FormatProposal:
		return p.o.Repository + "/" + ProposalName(id)
	}
	return p.o.Repository + "/" + id.Label()
}

// Versions lists the tags of the provider's repository that clusterctl
// would take as versions (versions.Parse: with or without the v). A tag
// without the v is listed too, as clusterctl lists such a tag or folder,
// so the choice of the newest sees what clusterctl sees; the choice asks
// for it as v<semver>, which this repository does not hold, and passes
// over it.
func (p *Target) Versions(ctx context.Context, id provider.ID) ([]string, error) {
	if err := provider.CheckName(id.Name); err != nil {
		return nil, err
	}
	repo, err := p.c.repository(p.artifactRepository(id))
	if err != nil {
		return nil, err
	}
	tags, err := p.c.listTags(ctx, repo)
	if err != nil {
		return nil, fmt.Errorf("list tags of %s: %w", repo, err)
	}
	var out []string
	for _, t := range tags {
		if _, ok := versions.Parse(t); ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// List lists one provider version as the operator reads it: the metadata
// and components it would pick, plus the templates and ClusterClasses of
// the artifact, under the names the release gave them, with the layer
// digests as their sha256.
func (p *Target) List(ctx context.Context, ref publish.Ref) (map[string]publish.Remote, error) {
	a, err := p.open(ctx, ref)
	if err != nil {
		return nil, err
	}
	out := map[string]publish.Remote{}
	for n, e := range a.files {
		out[n] = publish.Remote{Name: n, Size: e.size, SHA256: e.sha256}
	}
	return out, nil
}

// Fetch reads the named files of one provider version.
func (p *Target) Fetch(ctx context.Context, ref publish.Ref, names ...string) ([]release.File, error) {
	a, err := p.open(ctx, ref)
	if err != nil {
		return nil, err
	}
	return a.fetch(ctx, names...)
}

// open finds one provider version's artifact and lists its files.
func (p *Target) open(ctx context.Context, ref publish.Ref) (*artifactFiles, error) {
	if err := provider.CheckName(ref.ID.Name); err != nil {
		return nil, err
	}
	tag, err := name.NewTag(p.artifactRepository(ref.ID)+":"+ref.Version, p.c.nameOptions()...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	m, err := p.manifest(ctx, tag)
	if err != nil {
		return nil, err
	}
	return p.files(ctx, tag.Context(), m, ref.ID, ref.Version)
}

// ReadReference reads every provider an artifact holds, given as the
// operator takes it (REGISTRY/PATH/NAME:TAG, with http:// in front for a
// plain-HTTP registry) or pinned by digest: one
// provider for an artifact named after its label or carrying the proposal's
// provider annotations, each provider with versioned file names for an
// artifact of several. The version is the tag, else the manifest's
// org.opencontainers.image.version.
func (p *Target) ReadReference(ctx context.Context, reference string) ([]*release.Provider, error) {
	opts := p.c.nameOptions()
	if r, ok := strings.CutPrefix(reference, "http://"); ok { // the operator's plain-HTTP form, as Reference prints it
		reference, opts = r, []name.Option{name.Insecure}
	}
	ref, err := name.ParseReference(reference, opts...)
	if err != nil {
		return nil, fmt.Errorf("%q: want REGISTRY/PATH/NAME:VERSION: %w", reference, err)
	}
	m, err := p.manifest(ctx, ref)
	if err != nil {
		return nil, err
	}
	version := m.Annotations[AnnotationVersion]
	if t, ok := ref.(name.Tag); ok {
		version = t.TagStr()
	}
	if _, err := provider.ParseVersion(version); err != nil {
		return nil, fmt.Errorf("%s: no version: tag the reference with the provider version: %w", reference, err)
	}
	ids, err := providersOf(ref.Context(), m, version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", reference, err)
	}
	var out []*release.Provider
	for _, id := range ids {
		a, err := p.files(ctx, ref.Context(), m, id, version)
		if err != nil {
			return nil, err
		}
		pr, err := publish.Read(ctx, a, publish.Ref{ID: id, Version: version, Components: a.components})
		if err != nil {
			return nil, err
		}
		out = append(out, pr)
	}
	return out, nil
}

// providersOf says which providers an artifact holds.
func providersOf(repo name.Repository, m *v1.Manifest, version string) ([]provider.ID, error) {
	if n := m.Annotations[AnnotationProviderName]; n != "" {
		for _, t := range provider.Types() {
			if operator.ProposalType(t) == m.Annotations[AnnotationProviderType] {
				return []provider.ID{{Name: n, Type: t}}, nil
			}
		}
	}
	last := path.Base(repo.RepositoryStr())
	if last == ProposalName(provider.ID{Name: provider.CoreProviderName, Type: provider.Types()[0]}) {
		last = provider.CoreProviderName
	}
	if id, err := provider.ParseLabel(last); err == nil {
		return []provider.ID{id}, nil
	}
	// Several providers: <type>-<name>-<version>-components.yaml.
	var ids []provider.ID
	suffix := "-" + version + "-components.yaml"
	for _, l := range m.Layers {
		rest, ok := strings.CutSuffix(l.Annotations[AnnotationTitle], suffix)
		if !ok {
			continue
		}
		for _, t := range provider.Types() {
			if n, ok := strings.CutPrefix(rest, operator.Type(t)+"-"); ok && provider.CheckName(n) == nil {
				ids = append(ids, provider.ID{Name: n, Type: t})
			}
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("cannot tell which provider the artifact holds: its name %q is no provider label and no layer is titled <type>-<name>-%s-components.yaml", last, version)
	}
	return ids, nil
}

// manifest fetches and parses the manifest a reference points at.
func (p *Target) manifest(ctx context.Context, ref name.Reference) (*v1.Manifest, error) {
	raw, mt, _, ok, err := p.c.getManifest(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ref, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", ref, publish.ErrNotFound)
	}
	if types.MediaType(mt).IsIndex() {
		return nil, fmt.Errorf("%s is an image index, not a provider artifact", ref)
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: manifest: %w", ref, err)
	}
	return &m, nil
}

// artifactFiles is one provider's files in one artifact, by the names the
// release gave them, and where their bytes are. It is a publish.Source of
// that one version.
type artifactFiles struct {
	p          *Target
	repo       name.Repository
	components string
	files      map[string]artifactFile
}

// artifactFile is a layer (the operator layout) or a file already unpacked
// from the one tar+gzip layer (the proposal layout).
type artifactFile struct {
	layer  v1.Descriptor
	data   []byte
	size   int64
	sha256 string
}

func (a *artifactFiles) Versions(context.Context, provider.ID) ([]string, error) {
	return nil, errors.New("one artifact holds one version")
}

func (a *artifactFiles) List(context.Context, publish.Ref) (map[string]publish.Remote, error) {
	out := map[string]publish.Remote{}
	for n, e := range a.files {
		out[n] = publish.Remote{Name: n, Size: e.size, SHA256: e.sha256}
	}
	return out, nil
}

func (a *artifactFiles) Fetch(ctx context.Context, _ publish.Ref, names ...string) ([]release.File, error) {
	return a.fetch(ctx, names...)
}

func (a *artifactFiles) fetch(ctx context.Context, names ...string) ([]release.File, error) {
	out := make([]release.File, 0, len(names))
	for _, n := range names {
		e, ok := a.files[n]
		if !ok {
			return nil, fmt.Errorf("%s holds no %s: %w", a.repo, n, publish.ErrNotFound)
		}
		if e.data == nil {
			if e.layer.Size > maxFileSize {
				return nil, fmt.Errorf("%s: layer %s is %d bytes, more than a provider file may be", a.repo, e.layer.Annotations[AnnotationTitle], e.layer.Size)
			}
			b, err := a.p.c.fetchBlob(ctx, a.repo, e.layer.Annotations[AnnotationTitle], e.layer)
			if err != nil {
				return nil, fmt.Errorf("%s: read %s: %w", a.repo, e.layer.Annotations[AnnotationTitle], err)
			}
			e.data = b
		}
		out = append(out, release.File{Name: n, Data: e.data})
	}
	return out, nil
}

// files lists one provider's files in a manifest as the operator reads
// them: the metadata and components it would pick (renamed to metadata.yaml
// and the components file the release named), and the templates and
// ClusterClasses of the artifact that belong to the provider.
func (p *Target) files(ctx context.Context, repo name.Repository, m *v1.Manifest, id provider.ID, version string) (*artifactFiles, error) {
	a := &artifactFiles{p: p, repo: repo, files: map[string]artifactFile{}}
	if len(m.Layers) == 1 && m.Layers[0].Annotations[AnnotationTitle] == "" && isTarGzip(m.Layers[0].MediaType) {
		return a, p.unpackProposal(ctx, a, m.Layers[0], id)
	}
	layer := func(l v1.Descriptor) artifactFile {
		e := artifactFile{layer: l, size: l.Size}
		if l.Digest.Algorithm == "sha256" { // the layers hold the files as they are
			e.sha256 = l.Digest.Hex
		}
		return e
	}
	candidates := []string{operator.FullMetadataFile(id, version), operator.MetadataFile,
		operator.FullComponentsFile(id, version), operator.TypedComponentsFile(id.Type), operator.ComponentsFile}
	sizes := map[string]int64{}
	byTitle := map[string]v1.Descriptor{}
	for _, l := range m.Layers {
		if t := l.Annotations[AnnotationTitle]; t != "" && slices.Contains(candidates, t) {
			sizes[t], byTitle[t] = l.Size, l
		}
	}
	metaTitle, compTitle, err := operator.Select(sizes, id, version)
	if err != nil {
		return nil, err
	}
	a.files[operator.MetadataFile] = layer(byTitle[metaTitle])
	a.components = id.DefaultComponentsFile()
	if n := byTitle[compTitle].Annotations[AnnotationFile]; n != "" {
		a.components = n
	}
	if err := provider.CheckFileName("components file", a.components); err != nil {
		return nil, fmt.Errorf("%s: %w", repo, err)
	}
	a.files[a.components] = layer(byTitle[compTitle])
	for _, l := range m.Layers {
		t := l.Annotations[AnnotationTitle]
		if t == "" || slices.Contains(candidates, t) {
			continue
		}
		owner := l.Annotations[AnnotationProvider]
		n := l.Annotations[AnnotationFile]
		if n == "" {
			n = t
		}
		if owner != "" && owner != id.Label() || !publish.IsTemplate(n) {
			continue
		}
		if err := provider.CheckFileName("layer "+t, n); err != nil {
			return nil, fmt.Errorf("%s: %w", repo, err)
		}
		a.files[n] = layer(l)
	}
	return a, nil
}

func isTarGzip(mt types.MediaType) bool {
	return mt == types.OCILayer || mt == types.DockerLayer
}

// unpackProposal lists the files of a proposal-layout artifact: the one
// tar+gzip layer is read and unpacked.
func (p *Target) unpackProposal(ctx context.Context, a *artifactFiles, l v1.Descriptor, id provider.ID) error {
	repo := a.repo
	if l.Size > maxFileSize {
		return fmt.Errorf("%s: layer of %d bytes is too large", repo, l.Size)
	}
	b, err := p.c.fetchBlob(ctx, repo, "layer "+l.Digest.String(), l)
	if err != nil {
		return fmt.Errorf("%s: read layer: %w", repo, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s: layer: %w", repo, err)
	}
	tr := tar.NewReader(io.LimitReader(zr, maxFileSize))
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: layer: %w", repo, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		n := path.Clean(h.Name)
		if n != operator.MetadataFile && !strings.Contains(n, "components") && !publish.IsTemplate(n) {
			continue
		}
		if err := provider.CheckFileName("file name", n); err != nil {
			return fmt.Errorf("%s: layer: %w", repo, err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		f := release.File{Name: n, Data: data}
		a.files[n] = artifactFile{data: data, size: int64(len(data)), sha256: f.SHA256()}
		names = append(names, n)
	}
	if _, ok := a.files[operator.MetadataFile]; !ok {
		return fmt.Errorf("%s: the layer holds no %s", repo, operator.MetadataFile)
	}
	if a.components, err = release.ComponentsFile(id, names); err != nil {
		return fmt.Errorf("%s: %w", repo, err)
	}
	return nil
}
