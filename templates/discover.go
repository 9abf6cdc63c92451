package templates

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/capirepo/capirepo/internal/kustomization"
	"github.com/capirepo/capirepo/provider"
)

// hintFlavorSources warns about kustomizations in the templates folder that
// look like the sources of its committed renders: named as templates
// (templates/cluster-template-<x>/), or nested as flavors are
// (templates/overlays/<x>/<y>/ beside cluster-template-<x>-<y>.yaml).
// capirepo compares sources with their renders only when told; the hint
// says how, with loadRestrictor: none when the sources need it.
func (c *collector) hintFlavorSources(dir string, flavorDirs []string) {
	names, err := c.fs.ReadDir(dir)
	if err != nil {
		return
	}
	sort.Strings(names)
	mapped := c.mappedDirs()
	hint := func(src, file, flavors string) {
		if mapped[src] {
			return // templates.files renders it and compares it
		}
		line := "templates.flavors: [" + flavors + "]"
		if c.t.LoadRestrictor != provider.LoadRestrictorNone && loadsOutside(c.fs, src) {
			line = "templates: {flavors: [" + flavors + "], loadRestrictor: none} (it loads files outside its folder)"
		}
		c.warn("%s: kustomization is not rendered; it looks like the source of %s: add %s to render it and compare it with the committed file", src, file, line)
	}
	rel := func(p string) string {
		r, err := filepath.Rel(c.root, p)
		if err != nil {
			return p
		}
		return filepath.ToSlash(r)
	}
	for _, n := range names {
		d := filepath.Join(dir, n)
		if !c.fs.IsDir(d) || slices.Contains(flavorDirs, d) {
			continue
		}
		if (n == TemplatePrefix || strings.HasPrefix(n, TemplatePrefix+"-") || strings.HasPrefix(n, ClusterClassPrefix)) && kustomization.Find(c.fs, d) != "" {
			hint(d, n+".yaml", rel(dir))
			continue
		}
		// <dir>/<folder>/<x>/<y>/ as a flavors folder would name them.
		groups, _ := c.fs.ReadDir(d)
		sort.Strings(groups)
		for _, g := range groups {
			gd := filepath.Join(d, g)
			if !c.fs.IsDir(gd) || kustomization.Find(c.fs, gd) != "" {
				continue
			}
			subs, _ := c.fs.ReadDir(gd)
			sort.Strings(subs)
			for _, s := range subs {
				sd := filepath.Join(gd, s)
				if kustomization.Find(c.fs, sd) == "" {
					continue
				}
				name := g + "-" + s
				if s == DefaultFlavor {
					name = g
				}
				if e, ok := c.files[TemplateName(name)]; ok && e.origin == "file" {
					hint(sd, TemplateName(name), rel(d))
				}
			}
		}
	}
}

// mappedDirs are the sources templates.files names, by path in the tree.
func (c *collector) mappedDirs() map[string]bool {
	out := map[string]bool{}
	for _, src := range c.t.Files {
		out[c.path(src)] = true
	}
	return out
}

// loadsOutside says whether a kustomization, or one it builds on, loads a
// file from outside its own folder, which kustomize refuses unless
// --load-restrictor LoadRestrictionsNone.
func loadsOutside(fs filesys.FileSystem, dir string) bool {
	outside := false
	_ = kustomization.Walk(fs, dir, kustomization.Options{}, kustomization.Visitor{
		Entry: func(k *kustomization.Kustomization, e kustomization.Entry) error {
			if e.Kind == kustomization.File && !strings.HasPrefix(e.Path, k.Dir+string(filepath.Separator)) {
				outside = true
				return kustomization.SkipAll
			}
			return nil
		},
	})
	return outside
}

// discover lists the flavors of one flavors folder: every sub-folder with a
// kustomization, and one level deeper for sub-folders without one
// (<flavors>/<group>/<name>/ renders as flavor <group>-<name>, and
// <group>/default/ as flavor <group>). Shared bases (base, bases, base-*)
// are not flavors; a nested folder that a flavor of the same folder uses is
// a base, with a warning, since its name makes it a flavor. Flavors the
// config excludes go to skipped.
func (c *collector) discover(fd string, skipped map[string]bool) ([]flavor, error) {
	names, err := c.fs.ReadDir(fd)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var top, nested []flavor
	for _, n := range names {
		d := filepath.Join(fd, n)
		if !c.fs.IsDir(d) {
			continue
		}
		if kustomization.Find(c.fs, d) != "" {
			if !isBase(n) {
				top = append(top, flavor{name: n, dir: d})
			}
			continue
		}
		subs, err := c.fs.ReadDir(d)
		if err != nil {
			return nil, err
		}
		sort.Strings(subs)
		for _, s := range subs {
			sd := filepath.Join(d, s)
			if c.fs.IsDir(sd) && kustomization.Find(c.fs, sd) != "" && !isBase(n) && !isBase(s) {
				name := n + "-" + s
				if s == DefaultFlavor {
					name = n // <group>/default/ is the group's flavor, as default/ is the folder's
				}
				nested = append(nested, flavor{name: name, dir: sd})
			}
		}
	}
	// What each top-level flavor uses, by the first flavor that uses it.
	usedBy := map[string]string{}
	for _, f := range top {
		dirs := map[string]bool{}
		kustomizationDirs(c.fs, f.dir, dirs)
		for d := range dirs {
			if _, ok := usedBy[d]; !ok && d != f.dir {
				usedBy[d] = f.name
			}
		}
	}
	mapped := c.mappedDirs()
	for _, f := range nested {
		user, used := usedBy[f.dir]
		if !used {
			top = append(top, f)
			continue
		}
		// A tree that keeps templates/<x>/<y>/ beside templates/cluster-template-<z>/
		// may mean it as a base; its name makes it a flavor, so say which,
		// unless the config says: it maps the folder, or leaves its name out.
		file, _, _ := flavorFile(f.name)
		if c.exclude(file) || mapped[f.dir] {
			continue
		}
		c.warn("%s: nested flavor folder used by flavor %s as a base, so not published as %s; to publish it too, map it in templates.files, or move the shared part to a base/ folder", f.dir, user, file)
	}
	var out []flavor
	for _, f := range top {
		file, class, err := flavorFile(f.name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.dir, err)
		}
		f.file, f.class = file, class
		if c.exclude(file) || class && c.exclude(TemplateName(f.name)) {
			skipped[f.dir] = true
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

// isBase says whether a folder under a flavors folder is a shared base:
// base, bases or base-<x>.
func isBase(name string) bool {
	return name == BaseFlavor || name == BaseFlavor+"s" || strings.HasPrefix(name, BaseFlavor+"-")
}

// kustomizationDirs adds dir and every local folder of the kustomizations
// it uses (resources, bases, components), recursively, to used.
func kustomizationDirs(fs filesys.FileSystem, dir string, used map[string]bool) {
	_ = kustomization.Walk(fs, dir, kustomization.Options{}, kustomization.Visitor{
		Kustomization: func(k *kustomization.Kustomization) error {
			used[k.Dir] = true
			return nil
		},
	})
}
