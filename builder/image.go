package builder

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/internal/kustomization"
)

// The release image is set the way Makefiles set it: `kustomize edit set
// image` on the kustomization before `kustomize build`, so everything
// kustomize derives from the image afterwards (replacements, vars) carries
// the release tag. Here the edit is made in memory: the tree is only read.

// imagePlan is what the release asks of the manager image of one provider.
type imagePlan struct {
	// name selects the image as a kustomization images: entry does; ""
	// finds the provider's manager. configured says it came from config,
	// so a name that matches nothing is an error, not a reason to look.
	name                 string
	configured           bool
	newName, tag, digest string
	pullPolicy           string
}

// imageEntry is one images: entry of a kustomization in the tree.
type imageEntry struct {
	file    string // the kustomization file
	index   int
	name    string
	newName string
}

// renders is the image name the entry's images end up with.
func (e imageEntry) renders() string {
	if e.newName != "" {
		return e.newName
	}
	return e.name
}

// imageEntries lists the images: entries of the kustomizations dir builds
// from, nearest first (dir's own, then its bases breadth first), and each
// kustomization file's parent: the kustomization file that builds on it.
func imageEntries(fs filesys.FileSystem, dir string) ([]imageEntry, map[string]string, error) {
	var out []imageEntry
	parents := map[string]string{}
	err := nearestFirst(fs, dir, func(k *kustomization.Kustomization) error {
		if k.From != nil {
			parents[k.File] = k.From.File
		}
		var images struct {
			Images []struct {
				Name    string `json:"name"`
				NewName string `json:"newName"`
			} `json:"images"`
		}
		if err := sigsyaml.Unmarshal(k.Data, &images); err != nil {
			return fmt.Errorf("%s: %w", k.File, err)
		}
		for i, img := range images.Images {
			out = append(out, imageEntry{file: k.File, index: i, name: img.Name, newName: img.NewName})
		}
		return nil
	})
	return out, parents, err
}

// decidingEntry follows an images: entry outward. kustomize applies a
// kustomization's images: after those of the kustomizations it builds on,
// so an entry further out that names the image e renders to (config/default
// overriding config/manager's tag) decides the image; the outermost of such
// a chain is the entry to set, as `kustomize edit set image` in the
// kustomization the Makefile edits would.
func decidingEntry(entries []imageEntry, parents map[string]string, e imageEntry) imageEntry {
	for {
		best, bestUp := -1, 0
		for i, o := range entries {
			if o.name != e.renders() {
				continue
			}
			if up := ancestorDistance(parents, o.file, e.file); up > 0 && (best < 0 || up < bestUp) {
				best, bestUp = i, up
			}
		}
		if best < 0 {
			return e
		}
		e = entries[best]
	}
}

// ancestorDistance is how many kustomizations up from file ancestor is (0
// when it is not one).
func ancestorDistance(parents map[string]string, ancestor, file string) int {
	n := 0
	for f, ok := parents[file]; ok; f, ok = parents[f] {
		n++
		if f == ancestor {
			return n
		}
		if n > len(parents) {
			break // a cycle kustomize refuses anyway
		}
	}
	return 0
}

// nearestFirst visits the kustomizations dir builds from breadth first
// (nearest first); one that cannot be read or parsed is an error. visit
// ends the walk with kustomization.SkipAll or an error.
func nearestFirst(fs filesys.FileSystem, dir string, visit func(k *kustomization.Kustomization) error) error {
	return kustomization.Walk(fs, dir, kustomization.Options{Order: kustomization.BreadthFirst}, kustomization.Visitor{
		Kustomization: func(k *kustomization.Kustomization) error {
			if k.File == "" || k.Err != nil {
				return k.Err
			}
			return visit(k)
		},
	})
}

// matchEntry returns the nearest entry that name selects: by the entry's
// name, as kustomize matches, or by the image it renders to.
func matchEntry(entries []imageEntry, name string) (imageEntry, bool) {
	for _, e := range entries {
		if e.name == name {
			return e, true
		}
	}
	for _, e := range entries {
		if e.newName == name {
			return e, true
		}
	}
	return imageEntry{}, false
}

// setImageEntry edits a kustomization as `kustomize edit set image` does:
// the entry called name gets newName (when set) and the tag or the digest
// (the other is cleared); without such an entry one is appended. Comments
// and the order of the other fields are kept.
func setImageEntry(data []byte, name, newName, tag, digest string) ([]byte, error) {
	doc, err := yaml.Parse(string(data))
	if err != nil {
		return nil, err
	}
	list, err := doc.Pipe(yaml.LookupCreate(yaml.SequenceNode, "images"))
	if err != nil {
		return nil, err
	}
	var entry *yaml.RNode
	items, err := list.Elements()
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if fieldString(it, "name") == name {
			entry = it
			break
		}
	}
	if entry == nil {
		entry = yaml.NewMapRNode(&map[string]string{"name": name})
		if err := list.PipeE(yaml.Append(entry.YNode())); err != nil {
			return nil, err
		}
	}
	set := func(field, value string) error {
		if value == "" {
			return entry.PipeE(yaml.Clear(field))
		}
		return entry.PipeE(yaml.SetField(field, yaml.NewStringRNode(value)))
	}
	if newName != "" {
		if err := set("newName", newName); err != nil {
			return nil, err
		}
	}
	if tag != "" || digest != "" {
		if err := set("newTag", tag); err != nil {
			return nil, err
		}
		if err := set("digest", digest); err != nil {
			return nil, err
		}
	}
	s, err := doc.String()
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// overrideFS serves edited copies of some files and reads everything else
// through the tree's file system.
type overrideFS struct {
	filesys.FileSystem
	files map[string][]byte // absolute, cleaned path -> content
}

func (o *overrideFS) ReadFile(p string) ([]byte, error) {
	if abs, err := filepath.Abs(p); err == nil {
		if data, ok := o.files[filepath.Clean(abs)]; ok {
			return slices.Clone(data), nil
		}
	}
	return o.FileSystem.ReadFile(p)
}

// releaseImage is the image reference a container named name gets.
func (p imagePlan) releaseImage(renderedName string) string {
	name := renderedName
	if p.newName != "" {
		name = p.newName
	}
	if p.digest != "" {
		return name + "@" + p.digest
	}
	return name + ":" + p.tag
}

// managerCandidate is one Deployment container named manager.
type managerCandidate struct {
	c    container
	name string // image name without tag or digest, as the tree names it
	was  bool   // the release image replaced name
}

func (m managerCandidate) shown() string {
	if m.was {
		return m.name
	}
	return m.c.image()
}

// managerContainers lists the manager containers; those in changed had the
// image name from before the release image replaced it.
func managerContainers(rm resmap.ResMap, changed []container, from string) []managerCandidate {
	var out []managerCandidate
	for _, r := range rm.Resources() {
		if r.GetKind() != "Deployment" {
			continue
		}
		for _, c := range containers(r) {
			if c.name() == ManagerContainer {
				if slices.ContainsFunc(changed, func(x container) bool { return x.node.YNode() == c.node.YNode() }) {
					out = append(out, managerCandidate{c: c, name: from, was: true})
					continue
				}
				name, _, _ := splitImage(c.image())
				out = append(out, managerCandidate{c: c, name: name})
			}
		}
	}
	return out
}

// pickManager finds the provider's own manager image among the Deployment
// containers named manager: the only one, or the only one whose image a
// kustomization's images: entry names. Anything else is refused with the
// candidates: capirepo never guesses which image is the provider's.
func pickManager(file string, ms []managerCandidate, entries []imageEntry, field string) (string, error) {
	names := map[string][]string{}
	for _, m := range ms {
		names[m.name] = append(names[m.name], fmt.Sprintf("%s container %s (%s)", objName(m.c.owner), ManagerContainer, m.shown()))
	}
	switch len(names) {
	case 0:
		return "", nil
	case 1:
		return ms[0].name, nil
	}
	var named []string
	for n := range names {
		if slices.ContainsFunc(entries, func(e imageEntry) bool { return e.renders() == n }) {
			named = append(named, n)
		}
	}
	if len(named) == 1 {
		return named[0], nil
	}
	var cands []string
	keys := make([]string, 0, len(names))
	for n := range names {
		keys = append(keys, n)
	}
	sort.Strings(keys)
	for _, n := range keys {
		cands = append(cands, strings.Join(names[n], ", "))
	}
	return "", fmt.Errorf("%s: %d Deployments have a container named %q with different images, and no images: entry of the kustomization picks one:\n  %s\nsay which image is the provider's manager: add %s: %s (one of the names above) to the provider in capirepo.yaml",
		file, len(ms), ManagerContainer, strings.Join(cands, "\n  "), field, keys[0])
}

// renderImage renders kdir with the release image set in its kustomization
// before kustomize builds it. It returns the containers that carry the
// release image and the image name they had before. A nil plan renders the
// tree as it is.
func renderImage(fs *treeFS, kdir, desc string, p *imagePlan) (resmap.ResMap, []container, string, error) {
	if p == nil {
		rm, err := Kustomize(fs, kdir)
		if err != nil {
			return nil, nil, "", kustomizeErr(fs, kdir, err)
		}
		return rm, nil, "", nil
	}
	entries, parents, err := imageEntries(fs, kdir)
	if err != nil {
		return nil, nil, "", err
	}
	own := kustomization.Find(fs, kdir) // the kustomization a Makefile edits
	if own == "" {
		return nil, nil, "", fmt.Errorf("%s: no kustomization file", kdir)
	}
	edit := func(kfile, entryName, from string) (resmap.ResMap, []container, string, error) {
		data, err := fs.ReadFile(kfile)
		if err != nil {
			return nil, nil, "", err
		}
		edited, err := setImageEntry(data, entryName, p.newName, p.tag, p.digest)
		if err != nil {
			return nil, nil, "", fmt.Errorf("%s: field images: %w", kfile, err)
		}
		abs, err := filepath.Abs(kfile)
		if err != nil {
			return nil, nil, "", err
		}
		rm, err := Kustomize(&overrideFS{FileSystem: fs, files: map[string][]byte{filepath.Clean(abs): edited}}, kdir)
		if err != nil {
			return nil, nil, "", kustomizeErr(fs, kdir, err)
		}
		ref := p.releaseImage(from)
		var changed []container
		for _, r := range rm.Resources() {
			for _, c := range containers(r) {
				if c.image() == ref {
					changed = append(changed, c)
				}
			}
		}
		return rm, changed, from, nil
	}
	try := func(target string) (resmap.ResMap, []container, string, error) {
		kfile, entryName, from := own, target, target
		if e, ok := matchEntry(entries, target); ok {
			e = decidingEntry(entries, parents, e)
			kfile, entryName, from = e.file, e.name, e.renders()
		}
		rm, changed, from, err := edit(kfile, entryName, from)
		if err != nil || len(changed) > 0 || kfile == own && entryName == from || !rendersName(rm, from) {
			return rm, changed, from, err
		}
		// Something after the entry (an image patch of an outer
		// kustomization) sets the image again: set it on the kustomization
		// being built, by the name the containers end up with, where no
		// earlier step can undo it.
		return edit(own, from, from)
	}

	target := p.name
	if target == "" {
		distinct := map[string]bool{}
		for _, e := range entries {
			distinct[e.name] = true
		}
		if len(distinct) == 1 {
			target = entries[0].name
		} else if target, err = scanManagerImage(fs, kdir); err != nil {
			return nil, nil, "", err
		}
	}
	var probe resmap.ResMap
	if target != "" {
		rm, changed, from, err := try(target)
		if err != nil {
			return nil, nil, "", err
		}
		if p.configured {
			if len(changed) == 0 {
				return nil, nil, "", fmt.Errorf("%s: image.name %q selects no container image; image.name takes an images: entry's name (%s) or an image name as the containers have it, without tag (%s)",
					desc, target, orNone(entryNames(entries)), orNone(imageNames(rm)))
			}
			return rm, changed, from, nil
		}
		if slices.ContainsFunc(changed, isManager) {
			// The first guess hit a manager; it stands only if it is the
			// manager the rules pick.
			chosen, err := pickManager(desc, managerContainers(rm, changed, from), entries, "image.name")
			if err != nil {
				return nil, nil, "", err
			}
			if chosen == from {
				return rm, changed, from, nil
			}
			return tryOnly(try, desc, chosen)
		} else if len(changed) == 0 {
			probe = rm // nothing changed: the render is the tree's own
		}
	}
	if probe == nil {
		if probe, err = Kustomize(fs, kdir); err != nil {
			return nil, nil, "", kustomizeErr(fs, kdir, err)
		}
	}
	target, err = pickManager(desc, managerContainers(probe, nil, ""), entries, "image.name")
	if err != nil {
		return nil, nil, "", err
	}
	if target == "" {
		if p.newName == "" {
			return probe, nil, "", nil // nothing named; lint reports the missing manager
		}
		return nil, nil, "", fmt.Errorf("%s: no Deployment has a container named %q whose image the release image replaces; name the image in capirepo.yaml image.name", desc, ManagerContainer)
	}
	return tryOnly(try, desc, target)
}

// rendersName says whether a container of rm has an image of that name.
func rendersName(rm resmap.ResMap, name string) bool {
	return slices.Contains(imageNames(rm), name)
}

// imageNames lists the image names (without tag or digest) of the
// containers of rm: the manager containers first, each name once.
func imageNames(rm resmap.ResMap) []string {
	var managers, others []string
	for _, r := range rm.Resources() {
		for _, c := range containers(r) {
			name, _, _ := splitImage(c.image())
			if isManager(c) {
				managers = append(managers, name)
			} else {
				others = append(others, name)
			}
		}
	}
	slices.Sort(managers)
	slices.Sort(others)
	var out []string
	for _, n := range slices.Concat(slices.Compact(managers), slices.Compact(others)) {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// entryNames lists the names of the images: entries, each once.
func entryNames(entries []imageEntry) []string {
	var out []string
	for _, e := range entries {
		if !slices.Contains(out, e.name) {
			out = append(out, e.name)
		}
	}
	return out
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// tryOnly renders with target, which must change a container.
func tryOnly(try func(string) (resmap.ResMap, []container, string, error), desc, target string) (resmap.ResMap, []container, string, error) {
	rm, changed, from, err := try(target)
	if err != nil {
		return nil, nil, "", err
	}
	if len(changed) == 0 {
		return nil, nil, "", fmt.Errorf("%s: setting image %q in the kustomization changed no container; name the image in capirepo.yaml image.name", desc, target)
	}
	return rm, changed, from, nil
}

// scanManagerImage guesses the manager's image name from the tree's
// sources, so that most trees render once: the image of a container named
// manager in a Deployment, in a patch or resource file of the nearest
// kustomization that has one (patches before resources, as they apply
// later). It is only a first guess: renderImage checks it against the
// rendered objects and renders again when it was wrong.
func scanManagerImage(fs filesys.FileSystem, dir string) (string, error) {
	found := ""
	err := nearestFirst(fs, dir, func(k *kustomization.Kustomization) error {
		var files []kustomization.Entry
		for _, f := range []kustomization.Field{kustomization.Patches, kustomization.PatchesStrategicMerge} {
			patches := k.Entries(f)
			slices.Reverse(patches)
			files = append(files, patches...)
		}
		files = append(files, k.Entries(kustomization.Resources, kustomization.Bases, kustomization.Components)...)
		for _, f := range files {
			if f.Kind != kustomization.File {
				continue
			}
			if found = managerImageIn(fs, f.Path); found != "" {
				return kustomization.SkipAll
			}
		}
		return nil
	})
	return found, err
}

// managerImageIn returns the image name of a Deployment's manager
// container in a YAML file, or "".
func managerImageIn(fs filesys.FileSystem, file string) string {
	data, err := fs.ReadFile(file)
	if err != nil || !bytes.Contains(data, []byte("Deployment")) || !bytes.Contains(data, []byte(ManagerContainer)) {
		return ""
	}
	nodes, err := kio.FromBytes(data)
	if err != nil {
		return ""
	}
	for _, n := range nodes {
		if n.GetKind() != "Deployment" {
			continue
		}
		c, err := n.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[name="+ManagerContainer+"]", "image"))
		if err != nil || c == nil {
			continue
		}
		if name, _, _ := splitImage(yaml.GetValue(c)); name != "" {
			return name
		}
	}
	return ""
}

func isManager(c container) bool {
	return c.owner.GetKind() == "Deployment" && c.name() == ManagerContainer
}

// withImage finds, after rm changed, the containers that have the images
// the given containers had.
func withImage(rm resmap.ResMap, was []container) []container {
	imgs := map[string]bool{}
	for _, c := range was {
		imgs[c.image()] = true
	}
	var out []container
	for _, r := range rm.Resources() {
		for _, c := range containers(r) {
			if imgs[c.image()] {
				out = append(out, c)
			}
		}
	}
	return out
}
