package local

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

// Versions lists the version folders of a provider as clusterctl's local
// repository lists them (release.Listed): every folder whose name it takes
// as a version, with or without the v, so the choice of the newest sees
// what clusterctl sees. One that capirepo cannot read (a name without the
// v, a link) is refused by name where it is asked for (dir), which is where
// clusterctl fails on it or follows the link.
func (r *Target) Versions(ctx context.Context, id provider.ID) ([]string, error) {
	if err := provider.CheckName(id.Name); err != nil {
		return nil, err
	}
	vs, err := release.ScanLabel(filepath.Join(r.Root, id.Label()), id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return release.Listed(vs), nil
}

// dir is the folder of one provider version. A version capirepo cannot
// read is refused by name (release.Find): an entry of that name that is a
// link or no folder, or, where there is no folder of that name, one of the
// same version without the v (clusterctl asks for v<semver> and fails
// there).
func (r *Target) dir(ref publish.Ref) (string, error) {
	if err := provider.CheckName(ref.ID.Name); err != nil {
		return "", err
	}
	if _, err := provider.ParseVersion(ref.Version); err != nil {
		return "", err
	}
	vs, err := release.ScanLabel(filepath.Join(r.Root, ref.ID.Label()), ref.ID)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if _, err := release.Find(vs, ref.Version); err != nil && !errors.Is(err, publish.ErrNotFound) {
		return "", err
	}
	return filepath.Join(r.Root, ref.ID.Label(), ref.Version), nil
}

// List lists the regular files of one version folder with their size and
// sha256. A folder written by capirepo is first checked against its
// checksums.txt, so a file changed behind capirepo's back is refused.
func (r *Target) List(ctx context.Context, ref publish.Ref) (map[string]publish.Remote, error) {
	dir, err := r.dir(ref)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, publish.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	has := func(name string) bool {
		return slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == name && e.Type().IsRegular() })
	}
	switch {
	case has(release.ChecksumsFile + release.BundleSuffix):
		// A signed checksums.txt may be upstream's, copied by mirror with
		// only the files clusterctl reads: the files there must match it.
		files, err := release.ReadFolder(dir)
		if err != nil {
			return nil, err
		}
		sums := slices.IndexFunc(files, func(f release.File) bool { return f.Name == release.ChecksumsFile })
		if sums < 0 {
			return nil, fmt.Errorf("%s: a signature of %s, and no %s", dir, release.ChecksumsFile, release.ChecksumsFile)
		}
		if err := release.CheckChecksums(dir, files[sums].Data, files, true); err != nil {
			return nil, err
		}
	case has(release.ChecksumsFile):
		if _, err := release.LoadProvider(dir); err != nil {
			return nil, err
		}
	}
	out := map[string]publish.Remote{}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e.IsDir() {
			continue // clusterctl reads files by name; a folder is none
		}
		if err := fsafe.CheckEntry(dir, e); err != nil {
			return nil, err // skipped, it would read as a release without the file
		}
		data, err := fsafe.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		f := release.File{Name: e.Name(), Data: data}
		out[f.Name] = publish.Remote{Name: f.Name, Size: int64(len(data)), SHA256: f.SHA256()}
	}
	return out, nil
}

// Fetch reads the named files of one version folder.
func (r *Target) Fetch(ctx context.Context, ref publish.Ref, names ...string) ([]release.File, error) {
	dir, err := r.dir(ref)
	if err != nil {
		return nil, err
	}
	out := make([]release.File, 0, len(names))
	for _, n := range names {
		if err := provider.CheckFileName("file name", n); err != nil {
			return nil, err
		}
		data, err := fsafe.ReadFile(filepath.Join(dir, n))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no %s: %w", dir, n, publish.ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, release.File{Name: n, Data: data})
	}
	return out, nil
}
