package release

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/capirepo/capirepo/provider"
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

	semver *version.Version
}

// ClusterctlVersion says whether clusterctl takes a folder name or tag as
// a version: its local repository lists every sub-folder of <label>/ whose
// name k8s.io/apimachinery's version.ParseSemantic accepts (with or
// without a leading v, pre-releases too), and installs the highest
// (cmd/clusterctl/client/repository: repository_local.go GetVersions,
// repository_versions.go latestPatchRelease).
func ClusterctlVersion(name string) bool {
	_, err := version.ParseSemantic(name)
	return err == nil
}

// ScanLabel lists the version folders clusterctl reads below one
// provider's folder, dir (<root>/<label>), oldest first by clusterctl's
// order. A missing dir holds none. Entries whose names clusterctl does not
// take as versions are left out, as clusterctl leaves them out; those it
// takes that capirepo cannot read carry an Err.
func ScanLabel(dir string, id provider.ID) ([]VersionFolder, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []VersionFolder
	for _, e := range entries {
		if !ClusterctlVersion(e.Name()) || e.Type().IsRegular() {
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
	sv := version.MustParseSemantic(name)
	f := VersionFolder{ID: id, Version: name, Dir: dir, semver: sv}
	switch {
	case mode&fs.ModeSymlink != 0:
		f.Err = fmt.Errorf("%s is a symbolic link: clusterctl reads it as version %s of %s when asked for that version; capirepo does not follow links in a repository: replace it with the folder itself, or remove it", dir, name, id.Label())
	case mode.IsDir():
		if _, err := provider.ParseVersion(name); err != nil {
			f.Err = fmt.Errorf("%s: clusterctl reads this folder as version %s of %s (it takes any name version.ParseSemantic accepts, and installs the highest), but a release version is v<semver>, which capirepo checks: rename it to %s, or remove it", dir, name, id.Label(), canonical(sv))
		}
	default:
		f.Err = fmt.Errorf("%s is not a folder (%s): clusterctl takes its name as version %s of %s; remove it", dir, mode.Type(), name, id.Label())
	}
	return f
}

// byVersion orders folders as clusterctl orders their versions.
func byVersion(a, b VersionFolder) int {
	switch {
	case a.semver.LessThan(b.semver):
		return -1
	case b.semver.LessThan(a.semver):
		return 1
	}
	return strings.Compare(a.Version, b.Version)
}

// canonical is the v<semver> spelling of a version.
func canonical(sv *version.Version) string {
	s := sv.String()
	if !strings.HasPrefix(s, "v") {
		s = "v" + s
	}
	return s
}

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
	if id, err := provider.ParseLabel(filepath.Base(filepath.Dir(abs))); err == nil && ClusterctlVersion(filepath.Base(abs)) {
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
	sorted := slices.Clone(vs)
	slices.SortStableFunc(sorted, byVersion)
	var out []string
	for _, v := range sorted {
		if !slices.Contains(out, v.Version) {
			out = append(out, v.Version)
		}
	}
	return out
}
