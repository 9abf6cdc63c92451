package builder

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/capirepo/capirepo/contract/finding"
	"github.com/capirepo/capirepo/internal/kustomization"
	"github.com/capirepo/capirepo/internal/suggest"
	"github.com/capirepo/capirepo/provider"
)

// Rules of package contract the build reports itself (a test checks that
// the catalogue has them).
const (
	ruleMetadataMissing = "CAPI101"
	ruleProviderLabel   = "CAPI203"
)

// labelFindings turns the provider labels setLabels rewrote into one CAPI203
// warning per value the tree set, naming the kustomizations that set it
// (relative to root) and the objects, and the labels it added (labelled)
// into one more: an edit said as clearly as a wrong label.
func labelFindings(fs filesys.FileSystem, kdir, root, label, file string, relabelled map[string][]string, labelled []string) []finding.Finding {
	var out []finding.Finding
	for _, old := range slices.Sorted(maps.Keys(relabelled)) {
		objs := relabelled[old]
		where := "the kustomization " + rel(root, kdir)
		if srcs := labelSources(fs, kdir, old); len(srcs) > 0 {
			for i, s := range srcs {
				srcs[i] = rel(root, s)
			}
			where = strings.Join(srcs, ", ")
		}
		shown := firstFive(objs)
		out = append(out, finding.Finding{
			Rule: ruleProviderLabel, Severity: finding.Warning, File: file,
			Field: "metadata.labels[" + provider.ProviderLabel + "]",
			Message: fmt.Sprintf("%s set %s: %s on %d objects (%s); the release sets %q, as clusterctl does on install: set it in the tree so kubectl-applied components match",
				where, provider.ProviderLabel, old, len(objs), strings.Join(shown, ", "), label),
		})
	}
	if len(labelled) > 0 {
		out = append(out, finding.Finding{
			Rule: ruleProviderLabel, Severity: finding.Warning, File: file,
			Field: "metadata.labels[" + provider.ProviderLabel + "]",
			Message: fmt.Sprintf("the kustomization %s sets no %s on %d objects (%s); the release adds %q, as clusterctl does on install: set it in the tree (kustomize labels: with includeSelectors, as config/default does) so kubectl-applied components match",
				rel(root, kdir), provider.ProviderLabel, len(labelled), strings.Join(firstFive(labelled), ", "), label),
		})
	}
	return out
}

// firstFive shows up to five objects, and how many more there are.
func firstFive(objs []string) []string {
	if len(objs) <= 5 {
		return objs
	}
	return append(slices.Clip(objs[:5]), fmt.Sprintf("and %d more", len(objs)-5))
}

// labelTypo refuses a provider name a slip away from the label the tree
// sets (infrastructure-opnstack where the tree says
// infrastructure-openstack): the release would relabel every object and
// clusterctl would install the provider under the misspelt name. A name
// that differs by more, as when clusterctl's name for a provider differs
// from the tree's label by design, stays a CAPI203 warning.
func labelTypo(fs filesys.FileSystem, kdir, root, label, cfgFile string, relabelled map[string][]string) error {
	id, err := provider.ParseLabel(label)
	if err != nil {
		return nil
	}
	for _, old := range slices.Sorted(maps.Keys(relabelled)) {
		oid, err := provider.ParseLabel(old)
		if err != nil || oid.Type != id.Type || !nameSlip(id.Name, oid.Name) {
			continue
		}
		where := "the kustomization " + rel(root, kdir)
		if srcs := labelSources(fs, kdir, old); len(srcs) > 0 {
			for i, s := range srcs {
				srcs[i] = rel(root, s)
			}
			where = strings.Join(srcs, ", ")
		}
		if cfgFile == "" {
			cfgFile = "the config"
		}
		return fmt.Errorf("provider name %q (%s) is a slip away from the label the tree sets on %d objects, %s=%s (%s): did you mean %q? "+
			"The release would relabel every object; fix the name, or the tree's label if the name is right", label, rel(root, cfgFile), len(relabelled[old]), provider.ProviderLabel, old, where, old)
	}
	return nil
}

// nameSlip says whether two provider names (without the type) differ by a
// typo: one edit, or two in a name of eight letters or more.
func nameSlip(a, b string) bool {
	d := suggest.Distance(a, b)
	return d > 0 && d <= max(1, min(len(a), len(b))/4)
}

// labelSources returns the kustomization files dir builds from (following
// local resources, bases and components) whose text sets the provider label
// to value. It reads only the tree; a file it cannot read is skipped, and a
// graph too large to walk gives what the walk found.
func labelSources(fs filesys.FileSystem, dir, value string) []string {
	var out []string
	_ = kustomization.Walk(fs, dir, kustomization.Options{}, kustomization.Visitor{
		Kustomization: func(k *kustomization.Kustomization) error {
			if setsLabel(k.Data, value) {
				out = append(out, k.File)
			}
			return nil
		},
	})
	return out
}

// setsLabel says whether a kustomization's text maps the provider label to
// value (labels:, commonLabels: or a label in a patch written inline).
func setsLabel(data []byte, value string) bool {
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && strings.Trim(k, `"'`) == provider.ProviderLabel && strings.Trim(strings.TrimSpace(v), `"'`) == value {
			return true
		}
	}
	return false
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

// templateSource is where a release template comes from (src, as the
// templates Set records it): the file it was copied from, whose lines the
// findings can name, or the flavor kustomization it was rendered from.
func templateSource(fs filesys.FileSystem, root, src string) finding.Source {
	rel, err := filepath.Rel(root, src)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = src
	}
	rel = filepath.ToSlash(rel)
	if fs.IsDir(src) {
		return finding.Source{Path: path.Join(rel, "kustomization.yaml")}
	}
	return finding.Source{Path: rel, Copied: true}
}

// objectLocator returns a finding.Source.Locate for the rendered objects:
// it reads the tree's resource files once, on its first call (see
// objectSources).
func objectLocator(fs filesys.FileSystem, kdir, root string, rm resmap.ResMap) func(string) (finding.Location, bool) {
	type obj struct{ id, kind, name string }
	objs := make([]obj, 0, rm.Size())
	for _, r := range rm.Resources() {
		id := r.GetKind() + "/" + r.GetName()
		if ns := r.GetNamespace(); ns != "" {
			id = r.GetKind() + "/" + ns + "/" + r.GetName()
		}
		objs = append(objs, obj{id, r.GetKind(), r.GetName()})
	}
	var once sync.Once
	var locs map[string]finding.Location
	return func(id string) (finding.Location, bool) {
		once.Do(func() {
			ids, kinds, names := make([]string, len(objs)), make([]string, len(objs)), make([]string, len(objs))
			for i, o := range objs {
				ids[i], kinds[i], names[i] = o.id, o.kind, o.name
			}
			locs = objectSources(fs, kdir, root, ids, kinds, names)
		})
		loc, ok := locs[id]
		return loc, ok
	}
}

// objectSources locates each rendered object in the tree: the resource file
// (reached from the kustomization in kdir through local resources,
// components and bases) and line of the document of the same kind whose
// name is the object's or a part of it (namePrefix, nameSuffix). An object
// found nowhere, or in several files equally well, is left out.
func objectSources(fs filesys.FileSystem, kdir, root string, ids, kinds, names []string) map[string]finding.Location {
	type doc struct {
		kind, name, path string
		line             int
	}
	var docs []doc
	for _, file := range resourceFiles(fs, kdir) {
		data, err := fs.ReadFile(file)
		if err != nil || len(data) > MaxFileSize {
			continue
		}
		line := 1
		for _, part := range strings.SplitAfter(string(data), "\n---") {
			kind := topLevel(part, "kind")
			name := metadataName(part)
			if kind != "" && name != "" {
				docs = append(docs, doc{kind, name, rel(root, file), line + leadingBlank(part)})
			}
			line += strings.Count(part, "\n")
		}
	}
	out := map[string]finding.Location{}
	for k, id := range ids {
		best, n := -1, 0
		for i, d := range docs {
			if d.kind != kinds[k] || !strings.Contains(names[k], d.name) {
				continue
			}
			switch {
			case best < 0 || len(d.name) > len(docs[best].name):
				best, n = i, 1
			case len(d.name) == len(docs[best].name):
				n++
			}
		}
		if best >= 0 && n == 1 {
			out[id] = finding.Location{Path: docs[best].path, Line: docs[best].line}
		}
	}
	return out
}

// resourceFiles lists the local resource files a kustomization reaches
// (resources, bases, components and crds), as far as the walk goes.
func resourceFiles(fs filesys.FileSystem, dir string) []string {
	var out []string
	follow := kustomization.Options{Follow: []kustomization.Field{kustomization.Resources, kustomization.Bases, kustomization.Components, kustomization.Crds}}
	_ = kustomization.Walk(fs, dir, follow, kustomization.Visitor{
		Entry: func(_ *kustomization.Kustomization, e kustomization.Entry) error {
			if e.Kind == kustomization.File {
				out = append(out, e.Path)
			}
			return nil
		},
	})
	return out
}

// topLevel returns the value of a top-level key of a YAML document's text.
func topLevel(doc, key string) string {
	for line := range strings.Lines(doc) {
		line = strings.TrimRight(line, "\r\n")
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}

// metadataName returns metadata.name of a YAML document's text (two-space
// or any indentation, the first name: key under metadata:).
func metadataName(doc string) string {
	in := false
	for line := range strings.Lines(doc) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "metadata:":
			in = true
		case in && len(line) > 0 && line[0] != ' ' && line[0] != '#':
			return ""
		case in:
			t := strings.TrimSpace(line)
			if v, ok := strings.CutPrefix(t, "name:"); ok && len(line)-len(strings.TrimLeft(line, " ")) <= 4 {
				return strings.Trim(strings.TrimSpace(v), `"'`)
			}
		}
	}
	return ""
}

// leadingBlank counts the lines before a document's first content line
// (the rest of a --- line, blank lines and comments).
func leadingBlank(doc string) int {
	n := 0
	for line := range strings.Lines(doc) {
		t := strings.TrimSpace(line)
		if t != "" && !strings.HasPrefix(t, "#") && t != "---" {
			return n
		}
		n++
	}
	return 0
}
