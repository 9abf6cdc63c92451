package builder

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The inputs of a provider tree, for what must tell whether a render would
// change without rendering: dev's cache hashes them (TreeHash), dev --watch
// polls them (TreeState).

// Folders never read by a kustomization that a walk of a tree's inputs
// skips: version control and build output. Everything else under the
// provider tree is an input, since a kustomization may reach any file of
// its tree (../../ bases, patches, generators), and the builder allows no
// file outside it.
var skipDirs = map[string]bool{".git": true, "bin": true, "_output": true, "_artifacts": true, "node_modules": true}

// skipTopDirs are skipped only at the top of a tree (capirepo build --out default).
var skipTopDirs = map[string]bool{"dist": true}

// SkippedDir says whether a walk of a tree skips the folder at rel (slash
// separated, relative to the tree's top).
func SkippedDir(rel string) bool {
	name := path.Base(rel)
	return skipDirs[name] || skipTopDirs[name] && !strings.Contains(rel, "/")
}

// InSkippedDir says whether rel lies in a folder a walk of the tree skips.
func InSkippedDir(rel string) bool {
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if SkippedDir(d) {
			return true
		}
	}
	return SkippedDir(rel)
}

// TreeHash hashes the names, kinds and contents of the inputs below dir
// (everything but skipped folders and the folder exclude, such as a dev
// repository inside the tree): equal hashes, equal inputs to a render.
func TreeHash(dir, exclude string) (string, error) {
	type entry struct {
		rel, kind, sum string
		path           string
		size           int64
	}
	var entries []*entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != dir && (SkippedDir(rel) || p == exclude) {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			entries = append(entries, &entry{rel: rel, kind: "link", sum: target})
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			e := &entry{rel: rel, kind: "file", path: p, size: fi.Size()}
			if fi.Size() > MaxFileSize {
				// The builder refuses files this large, so only their size
				// (which moves them under the limit) matters.
				e.kind, e.sum = "large", fmt.Sprint(fi.Size())
			}
			entries = append(entries, e)
		default:
			entries = append(entries, &entry{rel: rel, kind: "other"})
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	// Hash file contents in parallel: large trees are mostly file bytes.
	work := make(chan *entry)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), 4)) {
		wg.Go(func() {
			for e := range work {
				s, err := hashFile(e.path)
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				e.sum = s
			}
		})
	}
	for _, e := range entries {
		if e.kind == "file" {
			work <- e
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return "", err
	default:
	}
	slices.SortFunc(entries, func(a, b *entry) int { return strings.Compare(a.rel, b.rel) })
	sum := sha256.New()
	for _, e := range entries {
		fmt.Fprintf(sum, "%s %q %s\n", e.kind, e.rel, e.sum)
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// TreeState is one string naming every entry below paths with its kind,
// size, mode and modification time (skipping what TreeHash skips and the
// folder exclude): two equal states mean no input has changed, short of a
// write that keeps a file's size and its mtime. It is cheaper than
// TreeHash, to poll with.
func TreeState(paths []string, exclude string) (string, error) {
	var b strings.Builder
	var firstErr error
	for _, top := range paths {
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				// A file removed between listing and stat: the next
				// poll sees the folder without it.
				b.WriteString("? " + p + "\n")
				if d != nil && d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() && p != top {
				rel, _ := filepath.Rel(top, p)
				if SkippedDir(filepath.ToSlash(rel)) || p == exclude {
					return filepath.SkipDir
				}
			}
			fi, err := d.Info()
			if err != nil {
				b.WriteString("? " + p + "\n")
				return nil
			}
			b.WriteString(p)
			b.WriteByte(' ')
			b.WriteString(fi.Mode().String())
			if !d.IsDir() {
				b.WriteByte(' ')
				b.WriteString(fi.ModTime().Format(time.RFC3339Nano))
				b.WriteByte(' ')
				b.WriteString(strconv.FormatInt(fi.Size(), 10))
			}
			b.WriteByte('\n')
			return nil
		})
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return b.String(), firstErr
}
