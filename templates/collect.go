package templates

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/capirepo/capirepo/internal/kustomization"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// entry is one release file and where it came from.
type entry struct {
	data   []byte
	source string // file or kustomization folder in the tree
	origin string // "file", "flavor" or "mapped", for messages
}

// Collect gathers a provider's templates from the tree at root, as t says
// (see Gather), and checks them.
func Collect(fs filesys.FileSystem, root string, t provider.Templates, render Renderer) (*Set, error) {
	set, err := Gather(fs, root, t, render)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, filepath.FromSlash(t.Dir))
	warnings, err := Check(dir, set.Files)
	if err != nil {
		return nil, errors.New(set.pointIntoTree(dir, err.Error()))
	}
	for _, w := range warnings {
		set.Warnings = append(set.Warnings, set.pointIntoTree(dir, w))
	}
	return set, nil
}

// pointIntoTree adds where a rendered or mapped file came from to a
// message of Check, which names files as if they sat in dir.
func (s *Set) pointIntoTree(dir, msg string) string {
	for name, src := range s.Sources {
		as := filepath.Join(dir, name)
		if src != as && strings.HasPrefix(msg, as+":") {
			return as + " (from " + src + ")" + msg[len(as):]
		}
	}
	return msg
}

// Gather finds and renders a provider's templates without checking them:
// the files of t.Dir, the flavor kustomizations of t.Flavors (default
// <dir>/flavors) compared with their committed renders, and t.Files. It
// returns them sorted by name, with warnings for what was left out.
func Gather(fs filesys.FileSystem, root string, t provider.Templates, render Renderer) (*Set, error) {
	c := &collector{fs: fs, root: root, t: t, render: render, files: map[string]*entry{}, excluded: map[string]bool{}}
	if err := c.collect(); err != nil {
		return nil, err
	}
	set := &Set{Warnings: c.warnings, Sources: map[string]string{}}
	for name, e := range c.files {
		set.Files = append(set.Files, release.File{Name: name, Data: e.data})
		set.Sources[name] = e.source
	}
	slices.SortFunc(set.Files, func(a, b release.File) int { return strings.Compare(a.Name, b.Name) })
	return set, nil
}

type collector struct {
	fs       filesys.FileSystem
	root     string
	t        provider.Templates
	render   Renderer
	files    map[string]*entry
	excluded map[string]bool // exclude patterns that matched
	warnings []string
}

func (c *collector) path(rel string) string { return filepath.Join(c.root, filepath.FromSlash(rel)) }

func (c *collector) warn(format string, args ...any) {
	c.warnings = append(c.warnings, fmt.Sprintf(format, args...))
}

// exclude reports whether the config leaves a published name out.
func (c *collector) exclude(name string) bool {
	for _, p := range c.t.Exclude {
		if ok, _ := path.Match(p, name); ok {
			c.excluded[p] = true
			return true
		}
	}
	return false
}

func (c *collector) collect() error {
	if c.t.None {
		return nil
	}
	dir := ""
	if c.t.Dir != "" {
		dir = c.path(c.t.Dir)
		if err := c.readDir(dir); err != nil {
			return err
		}
	}
	flavorDirs := make([]string, 0, len(c.t.Flavors))
	for _, f := range c.t.Flavors {
		flavorDirs = append(flavorDirs, c.path(f))
	}
	if len(flavorDirs) == 0 && dir != "" && c.fs.IsDir(filepath.Join(dir, FlavorsDir)) {
		flavorDirs = append(flavorDirs, filepath.Join(dir, FlavorsDir))
	}
	if dir != "" && !slices.Contains(flavorDirs, dir) {
		c.hintFlavorSources(dir, flavorDirs)
	}
	var jobs []flavor
	skipped := map[string]bool{} // flavors the config excludes
	for i, fd := range flavorDirs {
		if !c.fs.IsDir(fd) {
			return fmt.Errorf("%s: templates.flavors[%d] is not a folder of the provider tree", fd, i)
		}
		j, err := c.discover(fd, skipped)
		if err != nil {
			return err
		}
		jobs = append(jobs, j...)
	}
	if err := c.renderFlavors(jobs); err != nil {
		return err
	}
	if err := c.mapped(); err != nil {
		return err
	}
	// A kustomization under a flavors folder that no flavor renders or
	// uses ships nothing: say so rather than drop it without a word.
	used := maps.Clone(skipped)
	for _, j := range jobs {
		kustomizationDirs(c.fs, j.dir, used)
	}
	for _, src := range c.t.Files {
		if p := c.path(src); c.fs.IsDir(p) {
			kustomizationDirs(c.fs, p, used)
		}
	}
	for _, fd := range flavorDirs {
		_ = c.fs.Walk(fd, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.IsDir() && p != fd && !used[p] && kustomization.Find(c.fs, p) != "" {
				c.warn("%s: kustomization is not published: it is not a flavor capirepo renders (<flavors>/<name>/ or <flavors>/<group>/<name>/) nor used by one; map it with templates.files or leave it out with templates.exclude", p)
			}
			return nil
		})
	}
	for _, p := range c.t.Exclude {
		if !c.excluded[p] {
			c.warn("templates.exclude: %q matches no template; remove it from the config", p)
		}
	}
	return nil
}

// readDir takes the release files of the templates folder as they are.
func (c *collector) readDir(dir string) error {
	entries, err := c.fs.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("templates folder %s: %w", dir, err)
	}
	sort.Strings(entries)
	for _, e := range entries {
		p := filepath.Join(dir, e)
		if c.fs.IsDir(p) || !isReleaseName(e) || c.exclude(e) {
			continue
		}
		if err := checkName(e); err != nil {
			return fmt.Errorf("%s: %w; rename the file, or leave it out with templates.exclude", p, err)
		}
		data, err := c.fs.ReadFile(p)
		if err != nil {
			return err
		}
		c.files[e] = &entry{data: data, source: p, origin: "file"}
	}
	return nil
}

// mapped adds the templates.files entries: a file, or a kustomization
// folder rendered as a flavor is.
func (c *collector) mapped() error {
	names := make([]string, 0, len(c.t.Files))
	for n := range c.t.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		src := c.path(c.t.Files[name])
		if isReleaseName(name) {
			if err := checkName(name); err != nil {
				return fmt.Errorf("templates.files[%s]: %w; publish it under another name", name, err)
			}
		}
		var data []byte
		var err error
		switch {
		case c.fs.IsDir(src) && kustomization.Find(c.fs, src) != "" && !isYAMLName(name):
			return fmt.Errorf("templates.files[%s]: %s is a kustomization, which renders YAML: publish it under a .yaml name", name, src)
		case c.fs.IsDir(src) && kustomization.Find(c.fs, src) != "":
			if data, err = c.render(src); err != nil {
				return fmt.Errorf("templates.files[%s] (%s): %w", name, src, err)
			}
			if prev, ok := c.files[name]; ok && prev.origin == "file" && isReleaseName(name) {
				// The templates folder holds its committed render: compare
				// them as a flavor is compared (templates.committed), rather
				// than replace the file.
				if err := c.addFlavor(flavor{name: "templates.files[" + name + "]", dir: src}, name, []string{name}, data); err != nil {
					return err
				}
				continue
			}
		case c.fs.IsDir(src):
			return fmt.Errorf("templates.files[%s]: %s is a folder without a kustomization; name a file or a kustomization folder", name, src)
		default:
			if data, err = c.fs.ReadFile(src); err != nil {
				return fmt.Errorf("templates.files[%s]: %w", name, err)
			}
			if !isReleaseName(name) {
				w, err := checkAsset(name, data)
				if err != nil {
					return fmt.Errorf("templates.files[%s] (%s): %w", name, src, err)
				}
				if w != "" {
					c.warn("templates.files[%s] (%s): %s", name, src, w)
				}
			}
		}
		if prev, ok := c.files[name]; ok {
			c.warn("templates.files[%s]: publishing %s instead of %s", name, src, prev.source)
		}
		c.files[name] = &entry{data: data, source: src, origin: "mapped"}
	}
	return nil
}
