package contract_test

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// key is what the rule tests compare: where a finding is, not its wording.
type key struct {
	Rule     string
	Severity contract.Severity
	File     string
	Object   string
	Field    string
}

func keys(findings []contract.Finding, prefix string) []key {
	out := []key{}
	for _, f := range findings {
		out = append(out, key{f.Rule, f.Severity, strings.TrimPrefix(f.File, prefix), f.Object, f.Field})
	}
	return out
}

// files is a provider's release files by name, as text.
type files map[string]string

func readDir(t *testing.T, dir string) files {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := files{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

func fromProvider(p *release.Provider) files {
	out := files{}
	for _, f := range p.Files {
		out[f.Name] = string(f.Data)
	}
	return out
}

// release makes a one-provider release; the components file is the one
// whose name holds "components".
func (fs files) release(t *testing.T, label, version string) *release.Release {
	t.Helper()
	id, err := provider.ParseLabel(label)
	if err != nil {
		t.Fatal(err)
	}
	p := &release.Provider{ID: id, Version: version}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range fs {
			if !yield(k) {
				return
			}
		}
	}) {
		if err := p.Add(name, []byte(fs[name])); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(name, "components") {
			p.ComponentsFile = name
		}
	}
	return &release.Release{Version: version, Providers: []*release.Provider{p}}
}

// replace replaces old with new in a file; old must be there, so a fixture
// change cannot turn a test into a no-op.
func (fs files) replace(t *testing.T, file, old, new string) {
	t.Helper()
	if !strings.Contains(fs[file], old) {
		t.Fatalf("%s does not contain %q", file, old)
	}
	fs[file] = strings.Replace(fs[file], old, new, 1)
}

func (fs files) rename(t *testing.T, from, to string) {
	t.Helper()
	data, ok := fs[from]
	if !ok {
		t.Fatalf("no file %s", from)
	}
	delete(fs, from)
	fs[to] = data
}

// edit changes the object kind/name of a file in place; it returns false
// from fn to delete the object.
func (fs files) edit(t *testing.T, file, kind, name string, fn func(m map[string]any) bool) {
	t.Helper()
	docs := strings.Split(fs[file], "\n---\n")
	found := false
	var out []string
	for _, d := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		meta, _ := m["metadata"].(map[string]any)
		if m["kind"] != kind || meta["name"] != name {
			out = append(out, d)
			continue
		}
		found = true
		if !fn(m) {
			continue
		}
		b, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	if !found {
		t.Fatalf("%s has no %s/%s", file, kind, name)
	}
	fs[file] = strings.Join(out, "\n---\n")
}

// at walks to a nested value: string keys for maps, ints for lists.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: not a map", p)
			}
			v = m[p]
		case int:
			s, ok := v.([]any)
			if !ok || p >= len(s) {
				t.Fatalf("at %v: not a list that long", p)
			}
			v = s[p]
		}
	}
	return v
}

// set sets the last key of path (a map key) below v.
func set(t *testing.T, v any, value any, path ...any) {
	t.Helper()
	m, ok := at(t, v, path[:len(path)-1]...).(map[string]any)
	if !ok {
		t.Fatalf("set %v: parent is not a map", path)
	}
	if value == nil {
		if _, ok := m[path[len(path)-1].(string)]; !ok {
			t.Fatalf("delete %v: no such key", path)
		}
		delete(m, path[len(path)-1].(string))
		return
	}
	m[path[len(path)-1].(string)] = value
}

func sortKeys(ks []key) {
	slices.SortStableFunc(ks, func(a, b key) int {
		return cmp.Or(strings.Compare(a.File, b.File), strings.Compare(a.Object, b.Object), strings.Compare(a.Field, b.Field), strings.Compare(a.Rule, b.Rule))
	})
}

func text(r contract.Report) string {
	var b strings.Builder
	_ = r.WriteText(&b)
	return b.String()
}
