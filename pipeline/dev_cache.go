package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// treeHasher computes the cache key of a provider: its tree's content, its
// spec and configuration, the version and the capirepo build.
type treeHasher struct {
	exclude string
	trees   map[string]string
}

func newTreeHasher(exclude string) *treeHasher {
	return &treeHasher{exclude: exclude, trees: map[string]string{}}
}

func (h *treeHasher) key(s provider.TreeSpec, version string, opts DevOptions) (string, error) {
	th, ok := h.trees[s.Dir]
	if !ok {
		var err error
		if th, err = builder.TreeHash(s.Dir, h.exclude); err != nil {
			return "", fmt.Errorf("hash %s: %w", s.Dir, err)
		}
		h.trees[s.Dir] = th
	}
	spec, err := json.Marshal(s.Spec)
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	fmt.Fprintf(sum, "capirepo-dev %d\nbuild %q\nversion %q\nimage %q\nspec %s\ntree %s\n", devCacheSchema, opts.BuildID, version, opts.Image, spec, th)
	// What the spec names in a folder the tree's hash skips (a release
	// asset a before: command builds into bin/, _output/ or dist/) is an
	// input too: without it, the build would be reused with the old asset.
	for _, p := range s.Spec.Paths() {
		if !builder.InSkippedDir(p) {
			continue
		}
		nh, err := builder.TreeHash(filepath.Join(s.Dir, filepath.FromSlash(p)), h.exclude)
		if errors.Is(err, fs.ErrNotExist) {
			nh, err = "missing", nil // the build says so
		}
		if err != nil {
			return "", fmt.Errorf("hash %s: %w", p, err)
		}
		fmt.Fprintf(sum, "named %q %s\n", p, nh)
	}
	// The configuration file may live outside the tree (--config).
	if s.Config.File != "" {
		data, err := os.ReadFile(s.Config.File)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(sum, "config %q %x\n", s.Config.File, sha256.Sum256(data))
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
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
