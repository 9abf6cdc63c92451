package builder

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/capirepo/capirepo/contract/finding"
	"github.com/capirepo/capirepo/internal/kustomization"
	"github.com/capirepo/capirepo/provider"
)

// A finding on a container's image (CAPI207: an image clusterctl cannot
// parse) leads to the file that set the image, not to the Deployment's
// base file: the config key of the release image, a release patch, or,
// outermost kustomization first as kustomize applies them last, an
// images: entry, a patch file or an inline patch that writes the value.

// locator finds the source of a finding on a rendered object.
type locator struct {
	fs         filesys.FileSystem
	kdir, root string
	objects    func(string) (finding.Location, bool)
	// images are the rendered containers' images by object ID and field
	// (spec.template.spec.containers[0].image).
	images map[[2]string]string
	// configured are the image fields the config's keys set, and where.
	configured map[[2]string]finding.Location
	patches    []provider.Patch // the release patches applied after kustomize

	once    sync.Once
	setters []setter // the tree's files that write an image, outermost first
}

// setter is one place of the tree that writes an image: a line that holds
// the image (a patch, an inline patch), or an images: entry that renders
// to name.
type setter struct {
	loc   finding.Location
	text  string // a line that holds the image value
	entry string // the image name an images: entry renders
}

// imageLocator is the Locate of a rendered components file: image fields
// by their setter, every object by objectLocator.
func imageLocator(fs filesys.FileSystem, kdir, root string, rm resmap.ResMap, configured map[[2]string]finding.Location, patches []provider.Patch) func(string, string) (finding.Location, bool) {
	l := &locator{fs: fs, kdir: kdir, root: root, objects: objectLocator(fs, kdir, root, rm), images: map[[2]string]string{}, configured: configured, patches: patches}
	for _, r := range rm.Resources() {
		id := objID(r.GetKind(), r.GetNamespace(), r.GetName())
		for _, c := range containers(r) {
			l.images[[2]string{id, c.field + ".image"}] = c.image()
		}
	}
	return l.locate
}

func objID(kind, ns, name string) string {
	if ns != "" {
		return kind + "/" + ns + "/" + name
	}
	return kind + "/" + name
}

func (l *locator) locate(object, field string) (finding.Location, bool) {
	key := [2]string{object, field}
	if loc, ok := l.configured[key]; ok {
		return loc, true
	}
	if img, ok := l.images[key]; ok && img != "" {
		l.once.Do(l.findSetters)
		name, _, _ := splitImage(img)
		for _, s := range l.setters {
			if s.entry != "" && s.entry == name || s.text != "" && holdsImage(s.text, img) {
				return s.loc, true
			}
		}
	}
	return l.objects(object)
}

// holdsImage says whether a YAML line writes img as an image: value.
func holdsImage(line, img string) bool {
	k, v, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- ")), ":")
	return ok && strings.TrimSpace(k) == "image" && strings.Trim(strings.TrimSpace(v), `"'`) == img
}

// findSetters lists, in the order their values win, the release patch
// files, then each kustomization from kdir inward (kustomize applies an
// outer kustomization's transformers after its bases'): its images:
// entries, then its patch files and its own text (inline patches); a
// kustomization's resources are the objects' own files, left to objects.
func (l *locator) findSetters() {
	for _, p := range slices.Backward(l.patches) {
		if p.Path != "" {
			l.lines(p.Path, filepath.Join(l.root, filepath.FromSlash(p.Path)))
		}
	}
	_ = kustomization.Walk(l.fs, l.kdir, kustomization.Options{Order: kustomization.BreadthFirst}, kustomization.Visitor{
		Kustomization: func(k *kustomization.Kustomization) error {
			if k.File == "" || k.Err != nil {
				return nil
			}
			l.entries(k)
			for _, e := range k.Entries(kustomization.Patches, kustomization.PatchesStrategicMerge) {
				if e.Kind == kustomization.File {
					l.lines(rel(l.root, e.Path), e.Path)
				}
			}
			l.text(rel(l.root, k.File), string(k.Data))
			return nil
		},
	})
}

// entries adds the images: entries of k that set a name or tag.
func (l *locator) entries(k *kustomization.Kustomization) {
	doc, err := yaml.Parse(string(k.Data))
	if err != nil {
		return
	}
	list, err := doc.Pipe(yaml.Lookup("images"))
	if err != nil || list == nil {
		return
	}
	items, _ := list.Elements()
	for _, it := range items {
		e := imageEntry{name: fieldString(it, "name"), newName: fieldString(it, "newName")}
		if e.name == "" {
			continue
		}
		l.setters = append(l.setters, setter{loc: finding.Location{Path: rel(l.root, k.File), Line: it.YNode().Line}, entry: e.renders()})
	}
}

// lines adds the image lines of a file (shown as path).
func (l *locator) lines(path, file string) {
	data, err := l.fs.ReadFile(file)
	if err != nil || len(data) > MaxFileSize {
		return
	}
	l.text(path, string(data))
}

func (l *locator) text(path, data string) {
	for i, line := range strings.Split(data, "\n") {
		if strings.Contains(line, "image:") {
			l.setters = append(l.setters, setter{loc: finding.Location{Path: path, Line: i + 1}, text: line})
		}
	}
}

// configLine is the line of a provider's key in the config file (image, or
// images[i]); 0 when it cannot be read.
func configLine(fs filesys.FileSystem, file, name, key string, index int) int {
	data, err := fs.ReadFile(file)
	if err != nil {
		return 0
	}
	doc, err := yaml.Parse(string(data))
	if err != nil {
		return 0
	}
	ps, err := doc.Pipe(yaml.Lookup("providers"))
	if err != nil || ps == nil {
		return 0
	}
	items, _ := ps.Elements()
	for _, p := range items {
		if fieldString(p, "name") != name {
			continue
		}
		f := p.Field(key)
		if f == nil {
			return 0
		}
		if index < 0 {
			return f.Key.YNode().Line
		}
		entries, _ := f.Value.Elements()
		if index < len(entries) {
			return entries[index].YNode().Line
		}
		return f.Key.YNode().Line
	}
	return 0
}
