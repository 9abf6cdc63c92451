package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish/operator"
	"github.com/capirepo/capirepo/release"
)

// Format is an artifact layout.
type Format string

const (
	// FormatOperator is the layout cluster-api-operator reads: one layer
	// per file, titled with the operator's file names.
	FormatOperator Format = "operator"
	// FormatProposal is the layout of Cluster API's provisional proposal
	// (docs/proposals/20260804-provider-manifests-as-oci-artifacts.md): one
	// tar+gzip layer with the release files. The operator cannot read it.
	FormatProposal Format = "proposal"
)

// Media types.
const (
	// ArtifactType is the artifactType of an operator-layout manifest:
	// capirepo's own vendor type, so registries and tools can tell these
	// artifacts apart from images and from other tools' artifacts.
	ArtifactType = "application/vnd.capirepo.cluster-api.provider.v1"
	// YAMLMediaType is the media type of every YAML file layer (RFC 9512).
	YAMLMediaType types.MediaType = "application/yaml"
	// BinaryMediaType is the media type of a layer that is not YAML.
	BinaryMediaType types.MediaType = "application/octet-stream"
)

// Annotations.
const (
	AnnotationTitle   = "org.opencontainers.image.title"
	AnnotationVersion = "org.opencontainers.image.version"
	AnnotationSource  = "org.opencontainers.image.source"
	AnnotationCreated = "org.opencontainers.image.created"
	// The proposal's provider annotations, on every single-provider manifest.
	AnnotationProviderType = "cluster-api.sigs.k8s.io/provider-type"
	AnnotationProviderName = "cluster-api.sigs.k8s.io/provider-name"
	// AnnotationFile is a layer's file name in the release (as clusterctl
	// names it) when its title is another name, so a read-back restores it.
	AnnotationFile = "io.github.capirepo.file"
	// AnnotationProvider is the provider label of a layer in an artifact
	// that holds several providers.
	AnnotationProvider = "io.github.capirepo.provider"
)

// emptyConfig is the OCI empty descriptor's content, the config of an artifact.
var emptyConfig = []byte("{}")

// Meta is what goes into every manifest besides the files.
type Meta struct {
	// Source is the repository URL (org.opencontainers.image.source); "" leaves it out.
	Source string
	// Created is org.opencontainers.image.created, from SOURCE_DATE_EPOCH;
	// the zero time leaves it out, so rebuilding never changes the digest.
	Created time.Time
}

// Layer is one blob of an artifact.
type Layer struct {
	Title       string
	MediaType   types.MediaType
	Data        []byte
	Annotations map[string]string
}

// Artifact is one manifest with its config and layers, ready to push.
type Artifact struct {
	// Repository is REGISTRY/PATH[/NAME] and Tag the version.
	Repository, Tag string
	// Providers are the providers the artifact holds.
	Providers []provider.ID
	Version   string

	ArtifactType string
	ConfigType   types.MediaType
	Config       []byte
	Layers       []Layer
	Annotations  map[string]string
}

func digestOf(b []byte) v1.Hash {
	sum := sha256.Sum256(b)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
}

// Manifest returns the OCI image manifest, the same bytes for the same artifact.
func (a *Artifact) Manifest() ([]byte, error) {
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  a.ArtifactType,
		Config:        v1.Descriptor{MediaType: a.ConfigType, Size: int64(len(a.Config)), Digest: digestOf(a.Config)},
		Layers:        make([]v1.Descriptor, 0, len(a.Layers)),
		Annotations:   a.Annotations,
	}
	if string(a.Config) == string(emptyConfig) {
		// The empty descriptor may carry its two bytes inline.
		m.Config.Data = emptyConfig
	}
	for _, l := range a.Layers {
		ann := map[string]string{}
		maps.Copy(ann, l.Annotations)
		if l.Title != "" {
			ann[AnnotationTitle] = l.Title
		}
		if len(ann) == 0 {
			ann = nil
		}
		m.Layers = append(m.Layers, v1.Descriptor{MediaType: l.MediaType, Size: int64(len(l.Data)), Digest: digestOf(l.Data), Annotations: ann})
	}
	return json.Marshal(m) // map keys are sorted: stable bytes
}

// Digest is the manifest's digest, the artifact's identity in the registry.
func (a *Artifact) Digest() (v1.Hash, error) {
	b, err := a.Manifest()
	if err != nil {
		return v1.Hash{}, err
	}
	return digestOf(b), nil
}

// Titles maps each layer title to its sha256 hex.
func (a *Artifact) Titles() map[string]string {
	out := map[string]string{}
	for _, l := range a.Layers {
		out[l.Title] = digestOf(l.Data).Hex
	}
	return out
}

func mediaTypeOf(name string) types.MediaType {
	if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
		return YAMLMediaType
	}
	return BinaryMediaType
}

func baseAnnotations(version string, meta Meta) map[string]string {
	ann := map[string]string{AnnotationVersion: version}
	if meta.Source != "" {
		ann[AnnotationSource] = meta.Source
	}
	if !meta.Created.IsZero() {
		ann[AnnotationCreated] = meta.Created.UTC().Format(time.RFC3339)
	}
	return ann
}

// ProviderArtifact is one provider's artifact in the operator's layout:
// metadata.yaml, the components titled <type>-components.yaml (the
// operator's type name, whatever the file is called in the release), then
// every other file under its own name, templates and ClusterClasses included.
func ProviderArtifact(repo string, p *release.Provider, meta Meta) (*Artifact, error) {
	a := &Artifact{
		Repository: repo + "/" + p.Label(), Tag: p.Version, Version: p.Version, Providers: []provider.ID{p.ID},
		ArtifactType: ArtifactType, ConfigType: types.OCIEmptyJSON, Config: emptyConfig,
		Annotations: baseAnnotations(p.Version, meta),
	}
	a.Annotations[AnnotationProviderType] = operator.ProposalType(p.ID.Type)
	a.Annotations[AnnotationProviderName] = p.ID.Name
	md, ok := p.File(operator.MetadataFile)
	if !ok {
		return nil, fmt.Errorf("%s %s: no %s", p.Label(), p.Version, operator.MetadataFile)
	}
	comp := p.Components()
	if comp.Name == "" {
		return nil, fmt.Errorf("%s %s: no components file", p.Label(), p.Version)
	}
	a.Layers = append(a.Layers,
		Layer{Title: operator.MetadataFile, MediaType: YAMLMediaType, Data: md.Data},
		renamed(operator.TypedComponentsFile(p.ID.Type), comp, nil))
	taken := map[string]bool{operator.MetadataFile: true, a.Layers[1].Title: true}
	for _, f := range p.Files {
		if f.Name == md.Name || f.Name == comp.Name {
			continue
		}
		if taken[f.Name] {
			return nil, fmt.Errorf("%s %s: the file %s has the name the operator reads the components from: rename it", p.Label(), p.Version, f.Name)
		}
		a.Layers = append(a.Layers, Layer{Title: f.Name, MediaType: mediaTypeOf(f.Name), Data: f.Data})
	}
	return a, nil
}

// renamed is a layer titled title holding f, with f's own name kept in an
// annotation when it differs.
func renamed(title string, f release.File, ann map[string]string) Layer {
	l := Layer{Title: title, MediaType: mediaTypeOf(f.Name), Data: f.Data, Annotations: map[string]string{}}
	maps.Copy(l.Annotations, ann)
	if title != f.Name {
		l.Annotations[AnnotationFile] = f.Name
	}
	if len(l.Annotations) == 0 {
		l.Annotations = nil
	}
	return l
}

// ReleaseArtifact is one artifact at REGISTRY/PATH:<version> holding every
// provider of a release under the operator's versioned names:
// <type>-<name>-<version>-metadata.yaml and -components.yaml, which the
// operator tries first, and the other files as <type>-<name>-<version>-<file>.
// Each Provider resource then points at the same reference.
func ReleaseArtifact(repo string, rel *release.Release, meta Meta) (*Artifact, error) {
	a := &Artifact{
		Repository: repo, Tag: rel.Version, Version: rel.Version,
		ArtifactType: ArtifactType, ConfigType: types.OCIEmptyJSON, Config: emptyConfig,
		Annotations: baseAnnotations(rel.Version, meta),
	}
	for _, p := range rel.Providers {
		a.Providers = append(a.Providers, p.ID)
		md, ok := p.File(operator.MetadataFile)
		if !ok {
			return nil, fmt.Errorf("%s %s: no %s", p.Label(), p.Version, operator.MetadataFile)
		}
		comp := p.Components()
		own := map[string]string{AnnotationProvider: p.Label()}
		a.Layers = append(a.Layers,
			renamed(operator.FullMetadataFile(p.ID, p.Version), md, own),
			renamed(operator.FullComponentsFile(p.ID, p.Version), comp, own))
		prefix := strings.TrimSuffix(operator.FullMetadataFile(p.ID, p.Version), "metadata.yaml")
		for _, f := range p.Files {
			if f.Name != md.Name && f.Name != comp.Name {
				a.Layers = append(a.Layers, renamed(prefix+f.Name, f, own))
			}
		}
	}
	seen := map[string]bool{}
	for _, l := range a.Layers {
		if seen[l.Title] {
			return nil, fmt.Errorf("release %s: two files would both be titled %s in one artifact", rel.Version, l.Title)
		}
		seen[l.Title] = true
	}
	return a, nil
}

// ProposalName is the artifact name the proposal gives a provider,
// {type}-{name}: the provider label, except core-cluster-api for the core.
func ProposalName(id provider.ID) string {
	if id.Label() == provider.CoreProviderName {
		return "core-" + provider.CoreProviderName
	}
	return id.Label()
}

// ProposalArtifact is one provider's artifact in the proposal's layout: a
// standard image manifest with a single tar+gzip layer holding the release
// files under their own names, no artifactType, and the proposal's
// annotations. The operator cannot read it.
func ProposalArtifact(repo string, p *release.Provider, meta Meta) (*Artifact, error) {
	tgz, diffID, err := tarGzip(p.Files, meta.Created)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", p.Label(), p.Version, err)
	}
	// An image config's created is the Unix epoch without SOURCE_DATE_EPOCH
	// (as image/ does), not Go's year 1.
	created := time.Unix(0, 0).UTC()
	if !meta.Created.IsZero() {
		created = meta.Created.UTC()
	}
	cfg := v1.ConfigFile{Created: v1.Time{Time: created}, RootFS: v1.RootFS{Type: "layers", DiffIDs: []v1.Hash{diffID}}}
	config, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	a := &Artifact{
		Repository: repo + "/" + ProposalName(p.ID), Tag: p.Version, Version: p.Version, Providers: []provider.ID{p.ID},
		ConfigType: types.OCIConfigJSON, Config: config,
		Layers:      []Layer{{MediaType: types.OCILayer, Data: tgz}},
		Annotations: baseAnnotations(p.Version, meta),
	}
	a.Annotations[AnnotationTitle] = ProposalName(p.ID)
	a.Annotations[AnnotationProviderType] = operator.ProposalType(p.ID.Type)
	a.Annotations[AnnotationProviderName] = p.ID.Name
	return a, nil
}

// tarGzip packs files at the root of a tar, in name order, with fixed
// owners, modes and times, and gzips it without a name or time in the
// header: the same files give the same bytes. It returns the uncompressed
// tar's digest too (the image config's diff_id).
func tarGzip(files []release.File, mtime time.Time) ([]byte, v1.Hash, error) {
	if mtime.IsZero() {
		mtime = time.Unix(0, 0)
	}
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b release.File) int { return strings.Compare(a.Name, b.Name) })
	var t bytes.Buffer
	tw := tar.NewWriter(&t)
	for _, f := range sorted {
		if err := tw.WriteHeader(&tar.Header{Name: path.Clean(f.Name), Mode: 0o644, Size: int64(len(f.Data)),
			ModTime: mtime.UTC(), Typeflag: tar.TypeReg}); err != nil {
			return nil, v1.Hash{}, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, v1.Hash{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, v1.Hash{}, err
	}
	var z bytes.Buffer
	zw, err := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if err != nil {
		return nil, v1.Hash{}, err
	}
	if _, err := zw.Write(t.Bytes()); err != nil {
		return nil, v1.Hash{}, err
	}
	if err := zw.Close(); err != nil {
		return nil, v1.Hash{}, err
	}
	return z.Bytes(), digestOf(t.Bytes()), nil
}
