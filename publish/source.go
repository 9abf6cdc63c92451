package publish

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/versions"
)

// Ref names one provider version at a target, as clusterctl's provider URL
// does: the provider, the version, and the components file clusterctl reads.
type Ref struct {
	ID      provider.ID
	Version string
	// Components names the components file (the last element of a provider
	// URL); "" means the conventional name for the provider type, else the
	// one *components*.yaml the version holds.
	Components string
}

func (r Ref) String() string { return r.ID.Label() + " " + r.Version }

// Source reads what a target holds: the other half of Publisher (the shape
// of clusterctl's Repository and oras-go's ReadOnlyTarget). mirror reads
// from one target and publishes to another; verify and diff read any target
// the same way. Backends implement the three calls; what clusterctl reads
// of a version (Files, Read) is chosen here, once for every backend.
type Source interface {
	// Versions lists the published versions of a provider (drafts, bare
	// tags and half-written ones left out), in no particular order, as the
	// target names them: with or without the v, as clusterctl lists them.
	// Which is the newest, and which came before, is package versions'
	// answer (Repository asks it).
	Versions(ctx context.Context, id provider.ID) ([]string, error)
	// List lists the files the target holds for one provider version with
	// their size and sha256 (SHA256 "" when the target reports none),
	// without downloading them where the target can. A version the target
	// does not hold is an error for which errors.Is(err, ErrNotFound).
	List(ctx context.Context, ref Ref) (map[string]Remote, error)
	// Fetch downloads the named files of one provider version. A name the
	// version does not hold is an error for which errors.Is(err, ErrNotFound).
	Fetch(ctx context.Context, ref Ref, names ...string) ([]release.File, error)
}

// ErrNotFound is the error a Source wraps when a provider, version or file
// is not there. It is versions.ErrNotFound: a version a source does not
// hold is passed over when the newest is chosen, as clusterctl passes
// over it.
var ErrNotFound = versions.ErrNotFound

// Files lists the files clusterctl reads of one provider version, among
// those the source holds: metadata.yaml, the components file (which it
// names), every cluster-template*.yaml and clusterclass-*.yaml. Other files
// (checksums.txt, other components variants, binaries) are left out: they
// are not part of what clusterctl reads. A version without metadata.yaml or
// its components file is an error for which errors.Is(err, ErrNotFound).
func Files(ctx context.Context, src Source, ref Ref) (components string, files map[string]Remote, err error) {
	components, files, _, err = listFiles(ctx, src, ref)
	return components, files, err
}

// listFiles lists a version and picks what clusterctl reads of it; all is
// the whole listing.
func listFiles(ctx context.Context, src Source, ref Ref) (components string, files, all map[string]Remote, err error) {
	all, err = src.List(ctx, ref)
	if err != nil {
		return "", nil, nil, err
	}
	components, names, err := clusterctlFiles(ref, slices.Sorted(maps.Keys(all)))
	if err != nil {
		return "", nil, nil, fmt.Errorf("%s: %w", ref, err)
	}
	files = make(map[string]Remote, len(names))
	for _, n := range names {
		files[n] = all[n]
	}
	return components, files, all, nil
}

// ReleaseFiles lists the files of one provider version that a copy of the
// release holds: what clusterctl reads (Files) and the other assets the
// version's checksums.txt names (a script, a variables file, a ClusterClass
// example published beside the templates), as they are. checksums.txt itself
// and components files clusterctl does not read are left out, as in Files;
// a version without checksums.txt has no other assets to tell. copy, when
// not nil, lists what a copy of the version already holds: when it holds
// every other file the source lists, with the same sha256, those are the
// assets and checksums.txt is not downloaded.
func ReleaseFiles(ctx context.Context, src Source, ref Ref, copy map[string]Remote) (components string, files map[string]Remote, err error) {
	components, files, all, err := listFiles(ctx, src, ref)
	if err != nil {
		return "", nil, err
	}
	if _, ok := all[release.ChecksumsFile]; !ok {
		return components, files, nil
	}
	if copy != nil {
		held := true
		others := map[string]Remote{}
		for n, r := range all {
			if _, in := files[n]; in || !otherAsset(n) {
				continue
			}
			c, ok := copy[n]
			held = held && ok && r.SHA256 != "" && c.SHA256 == r.SHA256
			others[n] = r
		}
		if held {
			maps.Copy(files, others)
			return components, files, nil
		}
	}
	got, err := src.Fetch(ctx, ref, release.ChecksumsFile)
	if err != nil {
		return "", nil, err
	}
	sums, _ := release.ParseChecksums(got[0].Data) // a line it cannot read names no asset
	for _, n := range slices.Sorted(maps.Keys(sums)) {
		r, listed := all[n]
		if _, have := files[n]; have || !listed || !otherAsset(n) {
			continue
		}
		if r.SHA256 == "" {
			r.SHA256 = sums[n] // what the release says the file is
		}
		files[n] = r
	}
	return components, files, nil
}

// otherAsset says whether a file a version lists beside what clusterctl
// reads may be one of its assets: not checksums.txt or the provenance
// (which describe the release), not a components file (another provider's
// in a shared release, or a variant clusterctl does not read).
func otherAsset(name string) bool {
	components := strings.Contains(name, "components") && strings.HasSuffix(name, ".yaml")
	return name != release.ChecksumsFile && name != ProvenanceFile && !components
}

// Read downloads the files clusterctl reads of one provider version (see
// Files), checks each against the sha256 the source listed, and returns the
// version as clusterctl reads it. have holds files already downloaded (by
// name), which are taken as they are.
func Read(ctx context.Context, src Source, ref Ref, have ...release.File) (*release.Provider, error) {
	components, files, err := Files(ctx, src, ref)
	if err != nil {
		return nil, err
	}
	return read(ctx, src, ref, components, files, have)
}

// ReadRelease downloads the files of ReleaseFiles, as Read does: the version
// as a copy of the release holds it (mirror).
func ReadRelease(ctx context.Context, src Source, ref Ref, have ...release.File) (*release.Provider, error) {
	components, files, err := ReleaseFiles(ctx, src, ref, nil)
	if err != nil {
		return nil, err
	}
	return read(ctx, src, ref, components, files, have)
}

func read(ctx context.Context, src Source, ref Ref, components string, files map[string]Remote, have []release.File) (*release.Provider, error) {
	var names []string
	for n := range files {
		if !slices.ContainsFunc(have, func(f release.File) bool { return f.Name == n }) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	got, err := src.Fetch(ctx, ref, names...)
	if err != nil {
		return nil, err
	}
	p := &release.Provider{ID: ref.ID, Version: ref.Version, ComponentsFile: components}
	for _, f := range slices.Concat(have, got) {
		r, ok := files[f.Name]
		if !ok {
			continue
		}
		if r.SHA256 != "" && r.SHA256 != f.SHA256() {
			return nil, fmt.Errorf("%s: %s was downloaded with sha256 %s, the target lists %s (another job writing?): re-run",
				ref, f.Name, ShortSum(f.SHA256()), ShortSum(r.SHA256))
		}
		if err := p.Add(f.Name, f.Data); err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
	}
	return p, nil
}

// ReadCertManager reads cert-manager's release at version from src as
// clusterctl reads it: the one manifest file its URL names.
func ReadCertManager(ctx context.Context, src Source, version, file string) (*release.Provider, error) {
	files, err := ReadFiles(ctx, src, Ref{ID: provider.CertManager, Version: version}, file)
	if err != nil {
		return nil, err
	}
	return &release.Provider{ID: provider.CertManager, Version: version, ComponentsFile: file, Files: files, NoChecksums: true}, nil
}

// ReadFiles downloads the named files of one provider version and checks
// each against the sha256 the source lists, whatever they are (cert-manager's
// release holds no metadata.yaml).
func ReadFiles(ctx context.Context, src Source, ref Ref, names ...string) ([]release.File, error) {
	all, err := src.List(ctx, ref)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := all[n]; !ok {
			return nil, fmt.Errorf("%s has no file %s: %w", ref, n, ErrNotFound)
		}
	}
	got, err := src.Fetch(ctx, ref, names...)
	if err != nil {
		return nil, err
	}
	for _, f := range got {
		if want := all[f.Name].SHA256; want != "" && want != f.SHA256() {
			return nil, fmt.Errorf("%s: %s was downloaded with sha256 %s, the target lists %s (another job writing?): re-run",
				ref, f.Name, ShortSum(f.SHA256()), ShortSum(want))
		}
	}
	return got, nil
}

// clusterctlFiles picks, among the names a target lists for one provider
// version, the files clusterctl reads. The components file is the one ref
// names, else the one release.Load would pick.
func clusterctlFiles(ref Ref, names []string) (components string, files []string, err error) {
	components = ref.Components
	if components == "" {
		if components, err = release.ComponentsFile(ref.ID, names); err != nil {
			return "", nil, fmt.Errorf("%w: %w", err, ErrNotFound)
		}
	}
	if !slices.Contains(names, components) {
		return "", nil, fmt.Errorf("no components file %s among %s: %w", components, strings.Join(names, ", "), ErrNotFound)
	}
	if !slices.Contains(names, provider.MetadataFile) {
		return "", nil, fmt.Errorf("no %s: clusterctl cannot install a release without it: %w", provider.MetadataFile, ErrNotFound)
	}
	for _, n := range names {
		switch {
		case n == provider.MetadataFile, n == components, IsTemplate(n):
			files = append(files, n)
		}
	}
	slices.Sort(files)
	return components, slices.Compact(files), nil
}

// IsTemplate says whether clusterctl reads a file as a flavor
// (cluster-template[-<flavor>].yaml) or a ClusterClass (clusterclass-*.yaml).
func IsTemplate(name string) bool { return release.IsTemplate(name) }
