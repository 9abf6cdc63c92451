package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/capirepo/capirepo/internal/dirlock"
	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/versions"
)

// Dir returns a provider version folder below root: root/<label>/<version>.
func (p *Provider) Dir(root string) string {
	return filepath.Join(root, p.Label(), p.Version)
}

// Write is WriteContext without a context, with the default lock timeout.
func Write(out string, r *Release) error {
	return WriteContext(context.Background(), out, r, WriteOptions{})
}

// WriteOptions say how WriteContext waits for another writer of the folder.
type WriteOptions struct {
	// LockTimeout is the longest wait for another capirepo writing into the
	// same folder; 0 means dirlock.DefaultTimeout.
	LockTimeout time.Duration
	// Progress is told when the write waits for another one; nil says nothing.
	Progress io.Writer
}

// WriteContext writes every provider of r into out/<label>/<version>/. Each
// version folder is written into a temporary folder beside it and renamed
// into place, so a reader sees the old folder or the new one, never a part.
// An existing folder for the same version is replaced: a build output is
// regenerated, not published. The whole write holds out's lock
// (internal/dirlock), and the staging folders a killed run left there are
// removed first.
func WriteContext(ctx context.Context, out string, r *Release, o WriteOptions) error {
	lock, err := dirlock.Acquire(ctx, out, dirlock.Options{Timeout: o.LockTimeout, Wait: o.Progress, What: "writing into"})
	if err != nil {
		return err
	}
	defer func() { _ = lock.Release() }()
	staged := make([]string, 0, len(r.Providers))
	defer func() {
		for _, s := range staged {
			_ = os.RemoveAll(s)
		}
	}()
	for _, p := range r.Providers {
		if err := CleanLeftovers(filepath.Dir(p.Dir(out))); err != nil {
			return err
		}
	}
	for _, p := range r.Providers {
		if err := ctx.Err(); err != nil {
			return err
		}
		tmp, err := StageDir(filepath.Dir(p.Dir(out)), p.Version, p.Assets())
		if err != nil {
			return err
		}
		staged = append(staged, tmp)
	}
	for i, p := range r.Providers {
		if err := ReplaceDir(staged[i], p.Dir(out)); err != nil {
			return err
		}
		staged[i] = ""
	}
	return writeFlat(out, r)
}

// FlatDir is the folder of a dist that holds, for a release of several
// providers, what its flat set (Release.Flat: a GitHub release) has beyond
// the providers' folders: FlatDir/<version>/ with that set's checksums.txt
// and its attached files (provenance, signatures).
const FlatDir = "flat"

// writeFlat writes the flat set's checksums.txt and attached files, or
// removes what an earlier write left there when the release has none.
func writeFlat(out string, r *Release) error {
	dir := filepath.Join(out, FlatDir, r.Version)
	if len(r.Providers) < 2 || len(r.Attached) == 0 || r.Version == "" {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove %s, left by an earlier write: %w", dir, err)
		}
		return nil
	}
	listed, err := r.FlatListed()
	if err != nil {
		return err
	}
	files := append([]File{listed[len(listed)-1]}, r.Attached...) // checksums.txt and the attached
	tmp, err := StageDir(filepath.Dir(dir), r.Version, files)
	if err != nil {
		return err
	}
	if err := ReplaceDir(tmp, dir); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	return nil
}

// loadFlat reads what writeFlat wrote for r, when it was written for the
// same files: a flat folder whose checksums.txt differs from the flat set's
// is stale (the providers were written again since) and is left out.
func loadFlat(root string, r *Release) error {
	dir := filepath.Join(root, FlatDir, r.Version)
	files, err := ReadFolder(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	listed, err := r.FlatListed()
	if err != nil {
		return nil // not a flat release; the publisher that needs one says why
	}
	var attached []File
	fresh := false
	for _, f := range files {
		switch {
		case f.Name == ChecksumsFile:
			fresh = bytes.Equal(f.Data, listed[len(listed)-1].Data)
		case IsAttached(f.Name):
			attached = insertSorted(attached, f)
		}
	}
	if !fresh {
		return nil // stale: made for other files
	}
	r.Attached = attached
	return nil
}

// StageDir writes files into a new temporary folder inside parent (created
// if needed) and returns its path. The caller renames it into place.
func StageDir(parent, version string, files []File) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(parent, "."+version+".tmp-")
	if err != nil {
		return "", err
	}
	for _, f := range files {
		if err := provider.CheckFileName("file name", f.Name); err != nil {
			_ = os.RemoveAll(tmp)
			return "", err
		}
		if err := writeFileSync(filepath.Join(tmp, f.Name), f.Data); err != nil {
			_ = os.RemoveAll(tmp)
			return "", err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		_ = os.RemoveAll(tmp)
		return "", err
	}
	return tmp, nil
}

func writeFileSync(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// ReplaceDir moves the staged folder to target. An existing target is first
// renamed aside and removed only after the new folder is in place, so a crash
// leaves either the old or the new content under target's name or aside.
func ReplaceDir(staged, target string) error {
	if _, err := os.Lstat(target); err == nil {
		old := staged + ".old"
		if err := os.Rename(target, old); err != nil {
			return err
		}
		if err := os.Rename(staged, target); err != nil {
			_ = os.Rename(old, target)
			return err
		}
		return os.RemoveAll(old)
	}
	return os.Rename(staged, target)
}

// Load reads a release from a dist folder written by Write. version selects
// one version when the folder holds several; "" takes the only one there.
// root may also be a single <label>/<version> folder.
func Load(root, version string) (*Release, error) {
	dirs, err := versionDirs(root)
	if err != nil {
		return nil, err
	}
	held := map[string]bool{}
	for _, d := range dirs {
		held[filepath.Base(d)] = true
	}
	if version == "" {
		vs := versions.Sorted(slices.Collect(maps.Keys(held)))
		if len(vs) > 1 {
			return nil, fmt.Errorf("%s holds several versions (%s): choose one with %s", root, strings.Join(vs, ", "), option.Version)
		}
		version = vs[0]
	}
	if !held[version] {
		return nil, fmt.Errorf("%s holds no provider folder for version %s", root, version)
	}
	r := &Release{Version: version}
	for _, d := range dirs {
		if filepath.Base(d) != version {
			continue
		}
		p, err := LoadProvider(d)
		if err != nil {
			return nil, err
		}
		r.Providers = append(r.Providers, p)
	}
	// clusterctl's install order: core, bootstrap, control plane, infrastructure, ...
	slices.SortStableFunc(r.Providers, func(a, b *Provider) int {
		if d := a.ID.Type.Order() - b.ID.Type.Order(); d != 0 {
			return d
		}
		return strings.Compare(a.Label(), b.Label())
	})
	if len(r.Providers) > 1 {
		if err := loadFlat(root, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// ProviderDirs returns the <label>/<version> folders of a dist folder or
// repository tree (or root itself, when it is one), of the version or of
// every version for "".
func ProviderDirs(root, version string) ([]string, error) {
	dirs, err := versionDirs(root)
	if err != nil {
		return nil, err
	}
	if version == "" {
		return dirs, nil
	}
	dirs = slices.DeleteFunc(dirs, func(d string) bool { return filepath.Base(d) != version })
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s holds no provider folder for version %s", root, version)
	}
	return dirs, nil
}

// ReadFolder reads every file of a folder, as it is (nothing checked but
// that each is a regular file).
func ReadFolder(dir string) ([]File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []File
	for _, e := range entries {
		if err := fsafe.CheckEntry(dir, e); err != nil {
			return nil, err
		}
		data, err := fsafe.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, File{Name: e.Name(), Data: data})
	}
	return out, nil
}

// versionDirs finds <label>/<version> folders: root itself, or below it
// (ScanTree). A folder clusterctl reads as a version and capirepo cannot
// is an error by name: nothing read from the tree would have judged it.
func versionDirs(root string) ([]string, error) {
	vs, err := ScanTree(root)
	if err != nil {
		return nil, fmt.Errorf("read release folder: %w", err)
	}
	if err := Unreadable(vs); err != nil {
		return nil, err
	}
	var out []string
	for _, v := range vs {
		out = append(out, v.Dir)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no <provider-label>/<version> folder: run capirepo build first", root)
	}
	return out, nil
}

// LoadProvider reads one <label>/<version> folder and checks its checksums.txt.
func LoadProvider(dir string) (*Provider, error) {
	id, err := provider.ParseLabel(filepath.Base(filepath.Dir(dir)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	p := &Provider{ID: id, Version: filepath.Base(dir)}
	files, err := ReadFolder(dir)
	if err != nil {
		return nil, err
	}
	var sums []byte
	for _, f := range files {
		switch {
		case f.Name == ChecksumsFile:
			sums = f.Data
		case IsAttached(f.Name):
			p.Attached = insertSorted(p.Attached, f)
		default:
			if err := p.Add(f.Name, f.Data); err != nil {
				return nil, fmt.Errorf("%s: %w", dir, err)
			}
		}
	}
	if sums == nil {
		return nil, fmt.Errorf("%s: no %s: the folder was not written by capirepo build", dir, ChecksumsFile)
	}
	if err := checkSums(dir, sums, p.Files); err != nil {
		return nil, err
	}
	names := make([]string, len(p.Files))
	for i, f := range p.Files {
		names[i] = f.Name
	}
	if p.ComponentsFile, err = ComponentsFile(id, names); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return p, nil
}

func checkSums(dir string, sums []byte, files []File) error {
	return CheckChecksums(dir, sums, files, false)
}

// CheckChecksums checks files against checksums.txt: each listed with its
// sha256 and, unless partial, each listed one there (a mirror holds only
// some of what an upstream checksums.txt lists). Attached files and
// checksums.txt itself are not looked at.
func CheckChecksums(dir string, sums []byte, files []File, partial bool) error {
	files = slices.DeleteFunc(slices.Clone(files), func(f File) bool { return f.Name == ChecksumsFile || IsAttached(f.Name) })
	want, err := ParseChecksums(sums)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", dir, ChecksumsFile, err)
	}
	var errs []error
	for _, f := range files {
		sum, ok := want[f.Name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: %s is not listed in %s", dir, f.Name, ChecksumsFile))
		case sum != f.SHA256():
			errs = append(errs, fmt.Errorf("%s: %s does not match its sha256 in %s", dir, f.Name, ChecksumsFile))
		}
		delete(want, f.Name)
	}
	for name := range want {
		if !partial {
			errs = append(errs, fmt.Errorf("%s: %s lists %s, which is missing", dir, ChecksumsFile, name))
		}
	}
	return errors.Join(errs...)
}

// CheckFolder checks a folder's files against its checksums.txt: all of
// them, as capirepo build writes it; only those listed, where the
// checksums.txt is signed (a mirror copies upstream's with only the files
// clusterctl reads). has is false when the folder holds no checksums.txt:
// there is nothing to check its files against.
func CheckFolder(dir string) (has bool, err error) {
	sums, err := os.ReadFile(filepath.Join(dir, ChecksumsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	files, err := ReadFolder(dir)
	if err != nil {
		return true, err
	}
	signed := slices.ContainsFunc(files, func(f File) bool { return f.Name == ChecksumsFile+BundleSuffix })
	return true, CheckChecksums(dir, sums, files, signed)
}

// ComponentsFile picks the components file among a version folder's file
// names: the conventional name for the provider type, else the one
// *components*.yaml file.
func ComponentsFile(id provider.ID, names []string) (string, error) {
	if slices.Contains(names, id.DefaultComponentsFile()) {
		return id.DefaultComponentsFile(), nil
	}
	var found []string
	for _, n := range names {
		if strings.Contains(n, "components") && strings.HasSuffix(n, ".yaml") {
			found = append(found, n)
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("want one components file (%s or *components*.yaml), found %d: %v", id.DefaultComponentsFile(), len(found), found)
	}
	return found[0], nil
}
