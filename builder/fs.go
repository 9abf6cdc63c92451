package builder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/internal/yamlsafe"
)

// MaxFileSize is the largest file the builder reads from a provider tree.
const MaxFileSize = 64 << 20

// errReadOnly is returned for any write: capirepo never writes into the tree.
var errReadOnly = errors.New("capirepo never writes into the provider tree")

// treeFS is the disk, read-only and confined to one tree: a path whose real
// location (after symlinks) is outside the tree is refused. Extra roots may be
// allowed (remote bases cloned into a temp folder, with --allow-remote).
type treeFS struct {
	filesys.FileSystem
	roots []string // real, absolute
	// scratch is the private folder remote bases are cloned into (with
	// --allow-remote): readable, and kustomize may remove its clones there.
	scratch string

	mu        sync.Mutex
	violation error // first refused path seen by a bool-returning method

	// deprecated are the deprecated kustomize fields the renders of this
	// tree met (one treeFS per Build).
	deprecated deprecations

	// cache keeps renders across Builds (Options.Cache); nil renders every time.
	cache *RenderCache
	// from are the cached renders this Build's renders are copies of.
	from map[resmap.ResMap]*renderEntry
}

// rendered notes that rm is a copy of the cached render e (nil: none).
func (fs *treeFS) rendered(rm resmap.ResMap, e *renderEntry) {
	if e == nil {
		return
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.from == nil {
		fs.from = map[resmap.ResMap]*renderEntry{}
	}
	fs.from[rm] = e
}

// renderOf returns the cached render rm is a copy of, nil when none.
func (fs *treeFS) renderOf(rm resmap.ResMap) *renderEntry {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.from[rm]
}

var _ filesys.FileSystem = (*treeFS)(nil)

func newTreeFS(root string, extraRoots ...string) (*treeFS, error) {
	fs := &treeFS{FileSystem: filesys.MakeFsOnDisk()}
	for _, r := range append([]string{root}, extraRoots...) {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, err
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("provider tree %s: %w", r, err)
		}
		fs.roots = append(fs.roots, real)
	}
	return fs, nil
}

// check resolves p and returns an error when it leaves the allowed roots. A
// path that does not exist resolves through its longest existing parent.
func (fs *treeFS) check(p string) error {
	abs, err := filepath.Abs(p)
	if err != nil {
		return err
	}
	real, rest := abs, ""
	for {
		r, err := filepath.EvalSymlinks(real)
		if err == nil {
			real = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(real)
		if parent == real {
			return nil
		}
		rest = filepath.Join(filepath.Base(real), rest)
		real = parent
	}
	for _, root := range fs.roots {
		if real == root || strings.HasPrefix(real, root+string(filepath.Separator)) {
			return nil
		}
	}
	if real != abs {
		return fmt.Errorf("%s is a symlink to %s, outside the provider tree %s", p, real, fs.roots[0])
	}
	return fmt.Errorf("%s is outside the provider tree %s", p, fs.roots[0])
}

func (fs *treeFS) note(err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.violation == nil {
		fs.violation = err
	}
}

// Violation returns the first refused path that a bool-returning method
// (Exists, IsDir) had to answer with false.
func (fs *treeFS) Violation() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.violation
}

func (fs *treeFS) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (fs *treeFS) Mkdir(string) error                  { return errReadOnly }
func (fs *treeFS) MkdirAll(string) error               { return errReadOnly }
func (fs *treeFS) RemoveAll(p string) error {
	// kustomize removes its clones of remote bases when it is done.
	if fs.scratch != "" {
		if real, err := filepath.EvalSymlinks(p); err == nil && strings.HasPrefix(real, fs.scratch+string(filepath.Separator)) {
			return os.RemoveAll(real)
		}
	}
	return errReadOnly
}

// allowScratch allows reading below the private folder remote bases are
// cloned into.
func (fs *treeFS) allowScratch(dir string) {
	fs.scratch = dir
	fs.roots = append(fs.roots, dir)
}
func (fs *treeFS) WriteFile(string, []byte) error { return errReadOnly }

func (fs *treeFS) Open(p string) (filesys.File, error) {
	if err := fs.checkFile(p); err != nil {
		return nil, err
	}
	return fsafe.Open(p)
}

func (fs *treeFS) ReadFile(p string) ([]byte, error) {
	if err := fs.checkFile(p); err != nil {
		return nil, err
	}
	data, err := fsafe.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if err := yamlsafe.CheckAliases(p, data); err != nil {
		return nil, err
	}
	return data, nil
}

func (fs *treeFS) checkFile(p string) error {
	if err := fs.check(p); err != nil {
		return err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil // the read reports it
	}
	// A FIFO or device would block the read for ever: refuse it unopened
	// (fsafe checks again on the open file, so a swap in between is caught).
	if err := fsafe.CheckRegular(p, fi); err != nil {
		return err
	}
	if fi.Size() > MaxFileSize {
		return fmt.Errorf("%s is %d bytes, over the %d MiB limit for a provider file", p, fi.Size(), MaxFileSize>>20)
	}
	return nil
}

func (fs *treeFS) IsDir(p string) bool {
	if err := fs.check(p); err != nil {
		fs.note(err)
		return false
	}
	return fs.FileSystem.IsDir(p)
}

func (fs *treeFS) Exists(p string) bool {
	if err := fs.check(p); err != nil {
		fs.note(err)
		return false
	}
	return fs.FileSystem.Exists(p)
}

func (fs *treeFS) ReadDir(p string) ([]string, error) {
	if err := fs.check(p); err != nil {
		return nil, err
	}
	return fs.FileSystem.ReadDir(p)
}

func (fs *treeFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	if err := fs.check(p); err != nil {
		return "", "", err
	}
	return fs.FileSystem.CleanedAbs(p)
}

func (fs *treeFS) Glob(pattern string) ([]string, error) {
	matches, err := fs.FileSystem.Glob(pattern)
	if err != nil {
		return nil, err
	}
	for _, m := range matches {
		if err := fs.check(m); err != nil {
			return nil, err
		}
	}
	return matches, nil
}

func (fs *treeFS) Walk(p string, fn filepath.WalkFunc) error {
	if err := fs.check(p); err != nil {
		return err
	}
	return fs.FileSystem.Walk(p, func(path string, info os.FileInfo, err error) error {
		if err == nil {
			if cerr := fs.check(path); cerr != nil {
				return cerr
			}
		}
		return fn(path, info, err)
	})
}
