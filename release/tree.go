package release

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
	"github.com/capirepo/capirepo/versions"
)

// VersionFolder is a folder of a repository tree that clusterctl reads as
// a version of a provider: <root>/<label>/<version>/.
type VersionFolder struct {
	ID provider.ID
	// Version is the folder's name, as clusterctl asks for it.
	Version string
	Dir     string
	// Err says why capirepo cannot read the folder as a release, which
	// clusterctl would still read; nil when it can.
	Err error

	// listed: clusterctl's local repository lists it as a version (a
	// folder; it does not list a link, which it reads when asked for it).
	listed bool
}

// ScanLabel lists the version folders clusterctl reads below one
// provider's folder, dir (<root>/<label>), oldest first (versions.Compare).
// clusterctl's local repository lists every sub-folder of <label>/ whose
// name it takes as a version (versions.Parse: with or without a leading
// v, pre-releases too; repository_local.go GetVersions). A missing dir
// holds none. Entries whose names clusterctl does not take as versions are
// left out, as clusterctl leaves them out; those it takes that capirepo
// cannot read carry an Err.
func ScanLabel(dir string, id provider.ID) ([]VersionFolder, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []VersionFolder
	for _, e := range entries {
		if _, ok := versions.Parse(e.Name()); !ok || e.Type().IsRegular() {
			continue // a file named like a version: clusterctl finds no folder there
		}
		out = append(out, versionFolder(filepath.Join(dir, e.Name()), id, e.Type()))
	}
	slices.SortStableFunc(out, byVersion)
	return out, nil
}

// versionFolder judges one entry clusterctl takes as a version.
func versionFolder(dir string, id provider.ID, mode fs.FileMode) VersionFolder {
	name := filepath.Base(dir)
	v, _ := versions.Parse(name)
	f := VersionFolder{ID: id, Version: name, Dir: dir, listed: mode.IsDir()}
	switch {
	case mode&fs.ModeSymlink != 0:
		f.Err = fmt.Errorf("%s is a symbolic link: clusterctl reads it as version %s of %s when asked for that version; capirepo does not follow links in a repository: replace it with the folder itself, or remove it", dir, name, id.Label())
	case mode.IsDir():
		if _, err := provider.ParseVersion(name); err != nil {
			f.Err = fmt.Errorf("%s: clusterctl reads this folder as version %s of %s (it lists any name version.ParseSemantic accepts, and asks for it as %s: its latest fails when it is the newest, and so does an upgrade to it), but a release version is v<semver>, which capirepo checks: rename it to %s, or remove it", dir, name, id.Label(), v.Tag(), v.Tag())
		}
	default:
		f.Err = fmt.Errorf("%s is not a folder (%s): clusterctl takes its name as version %s of %s; remove it", dir, mode.Type(), name, id.Label())
	}
	return f
}

// byVersion orders folders oldest first.
func byVersion(a, b VersionFolder) int { return versions.Compare(a.Version, b.Version) }

// ScanTree lists the version folders of a repository tree (a dist folder,
// a clusterctl local repository or overrides folder): root/<label>/<version>
// for every provider label, as ScanLabel finds them; or root itself, when
// it is one <label>/<version> folder. Folders that are no provider label
// (bin, flat, ...) are not looked into; no version folder at all is none.
func ScanTree(root string) ([]VersionFolder, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if id, err := provider.ParseLabel(filepath.Base(filepath.Dir(abs))); err == nil && isVersion(filepath.Base(abs)) {
		if fi, err := os.Stat(abs); err == nil && fi.IsDir() { // named by the user: a link is followed
			return []VersionFolder{versionFolder(root, id, fi.Mode())}, nil
		}
	}
	labels, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read repository folder: %w", err)
	}
	var out []VersionFolder
	for _, l := range labels {
		id, err := provider.ParseLabel(l.Name())
		if err != nil || !l.IsDir() {
			continue
		}
		vs, err := ScanLabel(filepath.Join(root, l.Name()), id)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// Unreadable joins the errors of the folders capirepo cannot read: each
// is a version clusterctl would read and no check has looked at.
func Unreadable(vs []VersionFolder) error {
	var errs []error
	for _, v := range vs {
		errs = append(errs, v.Err)
	}
	return errors.Join(errs...)
}

// Readable returns the folders capirepo can read.
func Readable(vs []VersionFolder) []VersionFolder {
	return slices.DeleteFunc(slices.Clone(vs), func(v VersionFolder) bool { return v.Err != nil })
}

// Versions returns the distinct versions of the folders, oldest first.
func Versions(vs []VersionFolder) []string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Version
	}
	return versions.Sorted(names)
}

// Newest is the newest of the folders' versions as clusterctl orders them
// (versions.Newest: the newest release, else the newest pre-release),
// without reading them: the version a lint, diff or verify of a tree takes
// when none is given; "" for none.
func Newest(vs []VersionFolder) string { return versions.Newest(Versions(vs)) }

// Latest is the version of the folders clusterctl's local repository
// installs for latest (versions.Latest): the newest release, else the
// newest pre-release, of the five newest holding a metadata.yaml; the
// newest patch of another series when that release's metadata.yaml maps
// this Cluster API's contract to it. A folder capirepo cannot read that
// the choice reaches is its error (Find), where clusterctl fails on it.
func Latest(vs []VersionFolder) (string, error) {
	return versions.Latest(context.Background(), folders(vs))
}

// Find is the folder of version tag among vs, as clusterctl asks for it
// (v<semver>). A folder capirepo cannot read is its error: one of that
// name (a link, no folder), or, where there is no folder of that name, one
// of the same version without the v, which clusterctl lists and then
// looks for as tag, and fails. None is an error wrapping
// versions.ErrNotFound.
func Find(vs []VersionFolder, tag string) (VersionFolder, error) {
	for _, f := range vs {
		if f.Version == tag && f.Err == nil {
			return f, nil
		}
	}
	for _, f := range vs {
		if v, _ := versions.Parse(f.Version); f.Err != nil && (f.Version == tag || v.Tag() == tag) {
			return VersionFolder{}, f.Err
		}
	}
	return VersionFolder{}, fmt.Errorf("no folder of version %s: %w", tag, versions.ErrNotFound)
}

// folders are version folders as the version choice reads them.
type folders []VersionFolder

func (vs folders) Versions(context.Context) ([]string, error) { return Listed(vs), nil }

// Listed are the versions of the folders clusterctl's local repository
// lists (GetVersions): folders, with or without the v; not links, which it
// reads only when asked for them.
func Listed(vs []VersionFolder) []string {
	var names []string
	for _, f := range vs {
		if f.listed {
			names = append(names, f.Version)
		}
	}
	return names
}

func (vs folders) Holds(ctx context.Context, tag string) error {
	_, err := vs.Metadata(ctx, tag)
	return err
}

func (vs folders) Metadata(_ context.Context, tag string) ([]byte, error) {
	f, err := Find(vs, tag)
	if err != nil {
		return nil, err
	}
	data, err := fsafe.ReadFile(filepath.Join(f.Dir, provider.MetadataFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no %s: %w", f.Dir, provider.MetadataFile, versions.ErrNotFound)
	}
	return data, err
}

func isVersion(name string) bool {
	_, ok := versions.Parse(name)
	return ok
}
