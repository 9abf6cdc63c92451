package templates

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"

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

// flavor is one kustomization to render.
type flavor struct {
	name  string // flavor name as the folder gives it (distro-name when nested)
	dir   string
	class bool // clusterclass-<name> folder: a ClusterClass unless it holds a Cluster
	file  string
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

// flavorFile returns the file a flavor folder publishes: default and
// cluster-template render to cluster-template.yaml, cluster-template-<x>
// to itself, clusterclass-<x> to clusterclass-<x>.yaml (class is true: it
// becomes a flavor if it holds a Cluster), anything else to
// cluster-template-<name>.yaml. The name obeys the flavor-name rule.
func flavorFile(name string) (file string, class bool, err error) {
	switch {
	case name == DefaultFlavor || name == TemplatePrefix:
		return TemplateName(""), false, nil
	case strings.HasPrefix(name, TemplatePrefix+"-"):
		file = name + ".yaml"
	case strings.HasPrefix(name, ClusterClassPrefix):
		file, class = name+".yaml", true
	default:
		file = TemplateName(name)
	}
	if err := checkName(file); err != nil {
		return "", false, fmt.Errorf("flavor folder %q publishes %s: %w; rename the folder (e.g. %q), or leave it out with templates.exclude", name, file, err, suggestName(name))
	}
	return file, class, nil
}

var notNameChars = regexp.MustCompile(`[^a-z0-9]+`)

// suggestName turns a folder name into one the flavor-name rule accepts.
func suggestName(name string) string {
	s := strings.Trim(notNameChars.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if s == "" {
		return "my-flavor"
	}
	return s
}

// renderFlavors renders the flavors on every core and adds them, comparing
// each with its committed render when the templates folder holds one.
func (c *collector) renderFlavors(jobs []flavor) error {
	out := make([][]byte, len(jobs))
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if out[i], errs[i] = c.render(j.dir); errs[i] != nil {
				errs[i] = fmt.Errorf("flavor %s (%s): %w", j.name, j.dir, errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, j := range jobs {
		file := j.file
		committedNames := []string{file}
		if j.class {
			if holdsCluster(out[i]) {
				file = TemplateName(j.name)
				committedNames = []string{file}
			} else {
				// Some trees commit the render of flavors/clusterclass-<x>/ as
				// cluster-template-clusterclass-<x>.yaml: that is its committed render.
				committedNames = append(committedNames, TemplateName(j.name))
			}
		}
		if err := c.addFlavor(j, file, committedNames, out[i]); err != nil {
			return err
		}
	}
	return nil
}

func (c *collector) addFlavor(j flavor, file string, committedNames []string, data []byte) error {
	for _, name := range committedNames {
		prev, ok := c.files[name]
		if !ok {
			continue
		}
		if prev.origin != "file" {
			return fmt.Errorf("%s: flavor %q publishes %s, as %s does; rename one of the folders or leave one out with templates.exclude", j.dir, j.name, name, prev.source)
		}
		diff, err := compareObjects(prev.data, data)
		if err != nil {
			return fmt.Errorf("%s: compare with the render of flavor %s (%s): %w", prev.source, j.name, j.dir, err)
		}
		if diff == "" {
			// One file: the committed render, as the maintainers publish it.
			prev.origin = "flavor"
			return nil
		}
		switch c.t.Committed {
		case provider.CommittedKeep:
			c.warn("%s: the committed render differs from flavor %s (%s) (%s); publishing the committed file (templates.committed: committed)", prev.source, j.name, j.dir, diff)
			prev.origin = "flavor"
			return nil
		case provider.CommittedSource:
			c.warn("%s: the committed render is stale: flavor %s (%s) renders %s; publishing the render (templates.committed: source)", prev.source, j.name, j.dir, diff)
			c.files[name] = &entry{data: data, source: j.dir, origin: "flavor"}
			return nil
		default:
			return fmt.Errorf("%s: the committed render is stale: flavor %s (%s) renders %s; regenerate it with %s, or set templates.committed to source (publish the render) or committed (publish the file)",
				prev.source, j.name, j.dir, diff, c.regenerate(j.dir, prev.source))
		}
	}
	c.files[file] = &entry{data: data, source: j.dir, origin: "flavor"}
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

// regenerate names the command that regenerates a committed render: the
// config's, else the tree's Makefile target that makes that file, else
// one that generates flavors or templates, else the kustomize command itself.
func (c *collector) regenerate(flavorDir, file string) string {
	if c.t.Regenerate != "" {
		return "`" + c.t.Regenerate + "`"
	}
	if data, err := c.fs.ReadFile(filepath.Join(c.root, "Makefile")); err == nil {
		rel := file
		if r, err := filepath.Rel(c.root, file); err == nil && !strings.HasPrefix(r, "..") {
			rel = filepath.ToSlash(r)
		}
		if t := makeTarget(data, rel); t != "" {
			return "`make " + t + "`"
		}
	}
	restrictor := ""
	if c.t.LoadRestrictor == provider.LoadRestrictorNone {
		restrictor = " --load-restrictor LoadRestrictionsNone"
	}
	return fmt.Sprintf("`kustomize build%s %s > %s`", restrictor, flavorDir, file)
}

var (
	makeAssign = regexp.MustCompile(`^\s*(?:export\s+|override\s+)?([A-Za-z0-9_.-]+)\s*(?::{1,3}=|\?=|\+=|=)\s*(.*)$`)
	makeRule   = regexp.MustCompile(`^([^\s:#=][^:#=]*?)\s*:([^=].*|)$`)
	makeVar    = regexp.MustCompile(`\$[({]([A-Za-z0-9_.-]+)[)}]`)
)

// makeTarget finds the Makefile target that regenerates file (a committed
// render, slash-separated and relative to the tree): a target that lists
// the file among its prerequisites (cluster-api-provider-openstack's
// templates: the renders), else the rule that makes the file itself
// (templates/cluster-template-%.yaml: make that file), else a target that
// generates flavors or templates by its name (cluster-api-provider-azure's
// generate-flavors). Simple variables ($(TEMPLATES_DIR)) are expanded.
func makeTarget(makefile []byte, file string) string {
	vars := map[string]string{}
	type rule struct{ targets, prereqs []string }
	var rules []rule
	sc := bufio.NewScanner(bytes.NewReader(bytes.ReplaceAll(makefile, []byte("\\\n"), []byte(" "))))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if m := makeAssign.FindStringSubmatch(line); m != nil && !makeRule.MatchString(line[:len(line)-len(m[2])]) {
			if _, set := vars[m[1]]; !set || !strings.Contains(line, "?=") {
				vars[m[1]] = strings.TrimSpace(m[2])
			}
			continue
		}
		if m := makeRule.FindStringSubmatch(line); m != nil {
			prereqs, _, _ := strings.Cut(m[2], ";")
			prereqs, _, _ = strings.Cut(prereqs, "#")
			if strings.HasPrefix(strings.TrimSpace(prereqs), "|") || strings.Contains(m[1], "=") {
				continue
			}
			rules = append(rules, rule{strings.Fields(m[1]), strings.Fields(prereqs)})
		}
	}
	expand := func(s string) string {
		for range 5 {
			s = makeVar.ReplaceAllStringFunc(s, func(v string) string { return vars[makeVar.FindStringSubmatch(v)[1]] })
		}
		return strings.TrimPrefix(s, "./")
	}
	matches := func(pattern string) bool {
		pattern = expand(pattern)
		if pre, suf, ok := strings.Cut(pattern, "%"); ok {
			return len(file) > len(pre)+len(suf) && strings.HasPrefix(file, pre) && strings.HasSuffix(file, suf)
		}
		return pattern == file
	}
	var byName, ownRule string
	var flavors, templates string
	for _, r := range rules {
		for _, t := range r.targets {
			if strings.HasPrefix(t, ".") {
				continue
			}
			if byName == "" && !strings.ContainsAny(t, "/%$") && slices.ContainsFunc(r.prereqs, matches) {
				byName = t
			}
			if ownRule == "" && matches(t) {
				ownRule = file
			}
			generates := strings.Contains(t, "generate") && !strings.Contains(t, "test") && !strings.Contains(t, "e2e")
			switch {
			case flavors == "" && generates && strings.Contains(t, "flavor"):
				flavors = t
			case templates == "" && generates && strings.Contains(t, "template"):
				templates = t
			}
		}
	}
	for _, t := range []string{byName, ownRule, flavors, templates} {
		if t != "" {
			return t
		}
	}
	return ""
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

// holdsCluster reports whether rendered YAML holds a cluster.x-k8s.io Cluster.
func holdsCluster(data []byte) bool {
	objs, err := Parse("", data)
	if err != nil {
		return true // not a ClusterClass file either: let it be checked as a template
	}
	for _, o := range objs {
		if o.GetKind() == "Cluster" && strings.HasPrefix(o.GetApiVersion(), "cluster.x-k8s.io/") {
			return true
		}
	}
	return false
}

// compareObjects compares two multi-document files as sets of objects,
// whatever their order, field order, quoting and comments. It returns ""
// when equal, else the objects that differ.
func compareObjects(committed, rendered []byte) (string, error) {
	a, err := canonical(committed)
	if err != nil {
		return "", err
	}
	b, err := canonical(rendered)
	if err != nil {
		return "", err
	}
	var onlyA, onlyB []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			onlyA = append(onlyA, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			onlyB = append(onlyB, k)
		}
	}
	if len(onlyA) == 0 && len(onlyB) == 0 {
		return "", nil
	}
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	var parts []string
	for _, k := range onlyA {
		if _, ok := b[k]; ok {
			parts = append(parts, k+" differently")
		} else {
			parts = append(parts, "no "+k)
		}
	}
	for _, k := range onlyB {
		parts = append(parts, k+", which the committed file lacks")
	}
	return strings.Join(parts, "; "), nil
}

// canonical maps "Kind name" of each object to its canonical JSON.
func canonical(data []byte) (map[string]string, error) {
	objs, err := Parse("", data)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, o := range objs {
		s, err := o.String()
		if err != nil {
			return nil, err
		}
		j, err := sigsyaml.YAMLToJSON([]byte(s))
		if err != nil {
			return nil, err
		}
		key := o.GetKind() + " " + o.GetName()
		if ns := o.GetNamespace(); ns != "" {
			key = o.GetKind() + " " + ns + "/" + o.GetName()
		}
		for n := 2; ; n++ {
			if _, dup := out[key]; !dup {
				break
			}
			if n > 2 {
				key = key[:strings.LastIndex(key, " #")]
			}
			key += fmt.Sprintf(" #%d", n)
		}
		out[key] = string(j)
	}
	return out, nil
}
