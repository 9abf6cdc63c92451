package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/release"
)

// Folders never read by a kustomization that a tree walk skips: version
// control, build output, and the dev repository itself when it lies inside
// the tree. Everything else under the provider tree is an input, since a
// kustomization may reach any file of its tree (../../ bases, patches,
// generators), and the builder allows no file outside it.
var skipDirs = map[string]bool{".git": true, "bin": true, "_output": true, "_artifacts": true, "node_modules": true}

// skipTopDirs are skipped only at the top of a tree (capirepo build --out default).
var skipTopDirs = map[string]bool{"dist": true}

// skippedDir says whether a walk of a tree skips the folder at rel (slash
// separated, relative to the tree's top).
func skippedDir(rel string) bool {
	name := path.Base(rel)
	return skipDirs[name] || skipTopDirs[name] && !strings.Contains(rel, "/")
}

// inSkipped says whether rel lies in a folder a walk of the tree skips.
func inSkipped(rel string) bool {
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if skippedDir(d) {
			return true
		}
	}
	return skippedDir(rel)
}

// treeHasher computes the cache key of a provider: its tree's content, its
// spec and configuration, the version and the capirepo build.
type treeHasher struct {
	exclude string
	trees   map[string]string
}

func newTreeHasher(exclude string) *treeHasher {
	return &treeHasher{exclude: exclude, trees: map[string]string{}}
}

func (h *treeHasher) key(s devSource, version string, opts DevOptions) (string, error) {
	th, ok := h.trees[s.dir]
	if !ok {
		var err error
		if th, err = hashTree(s.dir, h.exclude); err != nil {
			return "", fmt.Errorf("hash %s: %w", s.dir, err)
		}
		h.trees[s.dir] = th
	}
	spec, err := json.Marshal(s.spec)
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	fmt.Fprintf(sum, "capirepo-dev %d\nbuild %q\nversion %q\nimage %q\nspec %s\ntree %s\n", devCacheSchema, opts.BuildID, version, opts.Image, spec, th)
	// What the spec names in a folder the tree's hash skips (a release
	// asset a before: command builds into bin/, _output/ or dist/) is an
	// input too: without it, the build would be reused with the old asset.
	for _, p := range s.spec.Paths() {
		if !inSkipped(p) {
			continue
		}
		nh, err := hashTree(filepath.Join(s.dir, filepath.FromSlash(p)), h.exclude)
		if errors.Is(err, fs.ErrNotExist) {
			nh, err = "missing", nil // the build says so
		}
		if err != nil {
			return "", fmt.Errorf("hash %s: %w", p, err)
		}
		fmt.Fprintf(sum, "named %q %s\n", p, nh)
	}
	// The configuration file may live outside the tree (--config).
	if s.cfg.File != "" {
		data, err := os.ReadFile(s.cfg.File)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(sum, "config %q %x\n", s.cfg.File, sha256.Sum256(data))
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

// hashTree hashes the names, kinds and contents of everything below dir,
// except skipped folders and the folder exclude.
func hashTree(dir, exclude string) (string, error) {
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
			if p != dir && (skippedDir(rel) || p == exclude) {
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
			if fi.Size() > builder.MaxFileSize {
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

// devCache remembers, per provider label, the key of the inputs the dev
// version folder was rendered from.
type devCache struct {
	file      string
	Schema    int                   `json:"schema"`
	Providers map[string]cacheEntry `json:"providers"`
	dirty     bool
}

type cacheEntry struct {
	Key string `json:"key"`
	// Checksums is the sha256 of the folder's checksums.txt.
	Checksums string `json:"checksums"`
	// Warnings are the render's, said again when the folder is reused.
	Warnings []string `json:"warnings,omitempty"`
}

// loadCache reads the cache file; a missing or unreadable one is an empty
// cache (the cost is one render).
func loadCache(file string) *devCache {
	c := &devCache{file: file}
	if data, err := os.ReadFile(file); err == nil {
		if json.Unmarshal(data, c) != nil || c.Schema != devCacheSchema {
			c.Providers = nil
		}
	}
	c.Schema = devCacheSchema
	if c.Providers == nil {
		c.Providers = map[string]cacheEntry{}
	}
	return c
}

// hit says whether the folder was rendered from inputs with this key and
// still holds what was written (every file matches its checksums.txt).
func (c *devCache) hit(label, key, dir string) bool {
	e, ok := c.Providers[label]
	if !ok || e.Key != key {
		return false
	}
	sums, err := os.ReadFile(filepath.Join(dir, release.ChecksumsFile))
	if err != nil || hashBytes(sums) != e.Checksums {
		return false
	}
	_, err = release.LoadProvider(dir)
	return err == nil
}

func (c *devCache) put(label, key string, p *release.Provider, warnings []string) {
	c.Providers[label] = cacheEntry{Key: key, Checksums: hashBytes(release.Checksums(p.Files)), Warnings: warnings}
	c.dirty = true
}

// warnings are the warnings of the render a hit reuses.
func (c *devCache) warnings(label string) []string { return c.Providers[label].Warnings }

func (c *devCache) save() error {
	if !c.dirty {
		return nil
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return fsafe.WriteFileAtomic(c.file, append(data, '\n'))
}

func hashBytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
