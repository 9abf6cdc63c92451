package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/release"
)

// folder is a DIR verify reads: a repository tree (a dist folder, a
// clusterctl local repository, a capirepo mirror folder) or one
// <label>/<version> folder of one, which clusterctl reads through file://
// URLs; or a flat folder of release assets (a GitHub release download, the
// kustomize CLI + cp pipeline's out/), which it cannot, so its files are
// read into memory and handed to clusterctl from there.
type folder struct {
	path string
	// versions are the version folders clusterctl reads of a tree that
	// capirepo can read, all every one it reads; nil for a flat folder.
	versions, all []release.VersionFolder
	// unreadable says which version folders clusterctl reads besides and
	// capirepo cannot (a name without the v, a link), each by name: no
	// check looks at them, so verify fails on them; nil when none.
	unreadable error
	// flat is a flat folder's release.
	flat *release.Release
}

// openFolder finds what a DIR holds. A version folder clusterctl would read
// and capirepo cannot (a name without the v, a link) is kept as an error by
// name (unreadable): the others are still verified, and clusterctl's
// latest is said with every folder it lists in view. A tree of such
// folders alone is an error.
func openFolder(ctx context.Context, path, version string, log io.Writer) (*folder, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is a file: pass the folder that holds it", path)
	}
	tree, err := release.ScanTree(path)
	if err != nil {
		return nil, err
	}
	f := &folder{path: path, versions: release.Readable(tree), all: tree, unreadable: release.Unreadable(tree)}
	if len(f.versions) > 0 {
		return f, nil
	}
	if f.unreadable != nil {
		return nil, f.unreadable
	}
	rel, notes, err := release.Read(path, release.ReadOptions{Version: version, Doing: "verifying"})
	if err != nil {
		return nil, err
	}
	if rel.Version == "" {
		return nil, fmt.Errorf("%s: no version: the folder is not in a <label>/<version>/ tree and its manager image carries no vX.Y.Z tag: give it with %s", path, option.Flag(ctx, option.Version))
	}
	for _, n := range notes {
		fmt.Fprintf(log, "%s: %s\n", path, n)
	}
	f.flat = rel
	return f, nil
}

// Versions are the versions of a tree, oldest first by clusterctl's order;
// a flat folder's one version.
func (f *folder) Versions() []string {
	if f.flat != nil {
		return []string{f.flat.Version}
	}
	return release.Versions(f.versions)
}

// dirs are the folders holding version's files ("" for every version).
func (f *folder) dirs(version string) []string {
	if f.flat != nil {
		return []string{f.path}
	}
	var out []string
	for _, v := range f.versions {
		if version == "" || v.Version == version {
			out = append(out, v.Dir)
		}
	}
	return out
}

// Newest is the newest version of a tree as clusterctl orders them
// (release.Newest: the newest release, else the newest pre-release); a
// flat folder's one version.
func (f *folder) Newest() string {
	if f.flat != nil {
		return f.flat.Version
	}
	return release.Newest(f.versions)
}

// latestSaid says each provider's latest in a tree as clusterctl's local
// repository picks it, every folder it lists in view (those capirepo
// cannot read too: where the choice reaches one, clusterctl fails): "v0.2.0"
// for one provider, "cluster-api v1.14.2, infrastructure-x v0.2.0" for
// several.
func (f *folder) latestSaid() string {
	byLabel := map[string][]release.VersionFolder{}
	for _, v := range f.all {
		byLabel[v.ID.Label()] = append(byLabel[v.ID.Label()], v)
	}
	var out []string
	for _, l := range slices.Sorted(maps.Keys(byLabel)) {
		v, err := release.Latest(byLabel[l])
		if err != nil {
			v = "none, it fails: " + firstLine(err.Error())
		}
		if len(byLabel) > 1 {
			v = l + " " + v
		}
		out = append(out, v)
	}
	return strings.Join(out, ", ")
}

// Release reads the release of version (Newest for "") for the images
// and install checks.
func (f *folder) Release(version string) (*release.Release, error) {
	if version == "" {
		version = f.Newest()
	}
	if f.flat != nil {
		if version != f.flat.Version {
			return nil, fmt.Errorf("%s holds version %s, not %s", f.path, f.flat.Version, version)
		}
		return f.flat, nil
	}
	rel, _, err := release.Read(f.path, release.ReadOptions{Version: version})
	return rel, err
}

// base are the newest releases f holds of each core, bootstrap and control
// plane provider: the providers whose CRDs verify's install check creates
// before each release of f (a provider's own release is checked without
// them). A flat folder has none.
func (f *folder) base() ([]*release.Provider, error) {
	if f.flat != nil {
		return nil, nil
	}
	byLabel := map[string][]release.VersionFolder{}
	var labels []string
	for _, v := range f.versions {
		if !slices.Contains(baseTypes, v.ID.Type) {
			continue
		}
		if byLabel[v.ID.Label()] == nil {
			labels = append(labels, v.ID.Label())
		}
		byLabel[v.ID.Label()] = append(byLabel[v.ID.Label()], v)
	}
	var out []*release.Provider
	for _, label := range labels {
		newest := release.Newest(byLabel[label])
		rel, _, err := release.Read(f.path, release.ReadOptions{Version: newest})
		if err != nil {
			return nil, err
		}
		for _, p := range rel.Providers {
			if p.Label() == label {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// checkSums checks the folders of version ("": of every version) against
// their checksums.txt, each that has one (only the files there, when the
// checksums.txt is signed: a mirror copies upstream's with only the files
// clusterctl reads); log hears once which folders have none, whose files
// are then checked as they are.
func (f *folder) checkSums(version string, log io.Writer) error {
	var unsummed []string
	var errs []error
	for _, dir := range f.dirs(version) {
		has, err := release.CheckFolder(dir)
		if !has {
			unsummed = append(unsummed, dir)
		}
		errs = append(errs, err)
	}
	if len(unsummed) > 0 {
		fmt.Fprintf(log, "no %s in %s: nothing to check the files against (capirepo build writes one; a release rendered with the kustomize CLI, downloaded assets and a mirror folder have none): the files are checked as they are\n", release.ChecksumsFile, strings.Join(unsummed, ", "))
	}
	return errors.Join(errs...)
}
