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
)

// maxFileSize bounds one file read back from a registry.
const maxFileSize = 256 << 20

// artifactRepository is where the publisher puts (and reads) a provider.
func (p *Publisher) artifactRepository(id provider.ID) string {
	switch {
	case p.o.SingleArtifact:
		return p.o.Repository
	case p.o.Format == FormatProposal:
		return p.o.Repository + "/" + ProposalName(id)
	}
	return p.o.Repository + "/" + id.Label()
}

// Versions lists the tags of the provider's repository that are versions.
func (p *Publisher) Versions(ctx context.Context, label string) ([]string, error) {
	id, err := provider.ParseLabel(label)
	if err != nil {
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
		if _, err := provider.ParseVersion(t); err == nil && strings.HasPrefix(t, "v") {
			out = append(out, t)
		}
	}
	return out, nil
}

// Read reads one provider version back by the operator's rules: the
// metadata and components it would pick, plus the templates and
// ClusterClasses of the artifact, under the names the release gave them.
func (p *Publisher) Read(ctx context.Context, label, version string) (*release.Provider, error) {
	id, err := provider.ParseLabel(label)
	if err != nil {
		return nil, err
	}
	ref, err := name.NewTag(p.artifactRepository(id)+":"+version, p.c.nameOptions()...)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", label, version, err)
	}
	m, err := p.manifest(ctx, ref)
	if err != nil {
		return nil, err
	}
	return p.readProvider(ctx, ref.Context(), m, id, version)
}

// ReadReference reads every provider an artifact holds, given as the
// operator takes it (REGISTRY/PATH/NAME:TAG) or pinned by digest: one
// provider for an artifact named after its label or carrying the proposal's
// provider annotations, each provider with versioned file names for an
// artifact of several. The version is the tag, else the manifest's
// org.opencontainers.image.version.
func (p *Publisher) ReadReference(ctx context.Context, reference string) ([]*release.Provider, error) {
	ref, err := name.ParseReference(reference, p.c.nameOptions()...)
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
		pr, err := p.readProvider(ctx, ref.Context(), m, id, version)
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
func (p *Publisher) manifest(ctx context.Context, ref name.Reference) (*v1.Manifest, error) {
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

func isTemplate(n string) bool {
	return strings.HasSuffix(n, ".yaml") && (strings.HasPrefix(n, "cluster-template") || strings.HasPrefix(n, "clusterclass-"))
}

// readProvider reads one provider out of a manifest.
func (p *Publisher) readProvider(ctx context.Context, repo name.Repository, m *v1.Manifest, id provider.ID, version string) (*release.Provider, error) {
	if len(m.Layers) == 1 && m.Layers[0].Annotations[AnnotationTitle] == "" && isTarGzip(m.Layers[0].MediaType) {
		return p.readProposal(ctx, repo, m.Layers[0], id, version)
	}
	blobs := map[v1.Hash][]byte{}
	fetch := func(d v1.Descriptor) ([]byte, error) {
		if b, ok := blobs[d.Digest]; ok {
			return b, nil
		}
		if d.Size > maxFileSize {
			return nil, fmt.Errorf("%s: layer %s is %d bytes, more than a provider file may be", repo, d.Annotations[AnnotationTitle], d.Size)
		}
		b, err := p.c.fetchBlob(ctx, repo, d.Digest)
		if err != nil {
			return nil, fmt.Errorf("%s: read %s: %w", repo, d.Annotations[AnnotationTitle], err)
		}
		blobs[d.Digest] = b
		return b, nil
	}
	candidates := []string{operator.FullMetadataFile(id, version), operator.MetadataFile,
		operator.FullComponentsFile(id, version), operator.TypedComponentsFile(id.Type), operator.ComponentsFile}
	files := map[string][]byte{}
	byTitle := map[string]v1.Descriptor{}
	for _, l := range m.Layers {
		t := l.Annotations[AnnotationTitle]
		if t == "" || !slices.Contains(candidates, t) {
			continue
		}
		b, err := fetch(l)
		if err != nil {
			return nil, err
		}
		files[t], byTitle[t] = b, l
	}
	metaTitle, compTitle, err := operator.Select(files, id, version)
	if err != nil {
		return nil, err
	}
	pr := &release.Provider{ID: id, Version: version}
	if err := pr.Add(operator.MetadataFile, files[metaTitle]); err != nil {
		return nil, err
	}
	pr.ComponentsFile = id.DefaultComponentsFile()
	if n := byTitle[compTitle].Annotations[AnnotationFile]; n != "" {
		pr.ComponentsFile = n
	}
	if err := pr.Add(pr.ComponentsFile, files[compTitle]); err != nil {
		return nil, fmt.Errorf("%s: components: %w", repo, err)
	}
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
		if owner != "" && owner != id.Label() || !isTemplate(n) {
			continue
		}
		b, err := fetch(l)
		if err != nil {
			return nil, err
		}
		if err := pr.Add(n, b); err != nil {
			return nil, fmt.Errorf("%s: layer %s: %w", repo, t, err)
		}
	}
	return pr, nil
}

func isTarGzip(mt types.MediaType) bool {
	return mt == types.OCILayer || mt == types.DockerLayer
}

// readProposal reads the files of a proposal-layout artifact out of its one
// tar+gzip layer.
func (p *Publisher) readProposal(ctx context.Context, repo name.Repository, l v1.Descriptor, id provider.ID, version string) (*release.Provider, error) {
	if l.Size > maxFileSize {
		return nil, fmt.Errorf("%s: layer of %d bytes is too large", repo, l.Size)
	}
	b, err := p.c.fetchBlob(ctx, repo, l.Digest)
	if err != nil {
		return nil, fmt.Errorf("%s: read layer: %w", repo, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: layer: %w", repo, err)
	}
	tr := tar.NewReader(io.LimitReader(zr, maxFileSize))
	pr := &release.Provider{ID: id, Version: version}
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: layer: %w", repo, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		n := path.Clean(h.Name)
		if n != operator.MetadataFile && !strings.Contains(n, "components") && !isTemplate(n) {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		if err := pr.Add(n, data); err != nil {
			return nil, fmt.Errorf("%s: layer: %w", repo, err)
		}
		names = append(names, n)
	}
	if _, ok := pr.File(operator.MetadataFile); !ok {
		return nil, fmt.Errorf("%s: the layer holds no %s", repo, operator.MetadataFile)
	}
	if pr.ComponentsFile, err = release.ComponentsFile(id, names); err != nil {
		return nil, fmt.Errorf("%s: %w", repo, err)
	}
	return pr, nil
}
