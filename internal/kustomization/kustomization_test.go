package kustomization

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/capirepo/capirepo/internal/testtree"
)

func memFS(t *testing.T, files map[string]string) filesys.FileSystem {
	return testtree.InMemory(t, "/t", files)
}

func TestFind(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"yaml", map[string]string{"kustomization.yaml": ""}, "/t/kustomization.yaml"},
		{"yml", map[string]string{"kustomization.yml": ""}, "/t/kustomization.yml"},
		{"Kustomization", map[string]string{"Kustomization": ""}, "/t/Kustomization"},
		{"kustomize's order decides between two", map[string]string{"kustomization.yml": "", "kustomization.yaml": ""}, "/t/kustomization.yaml"},
		{"none", map[string]string{"deploy.yaml": ""}, ""},
		{"a folder of that name is not one", map[string]string{"kustomization.yaml/x": ""}, ""},
		{"a folder of that name does not hide a file", map[string]string{"kustomization.yaml/x": "", "Kustomization": ""}, "/t/Kustomization"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Find(memFS(t, tt.files), "/t"); got != tt.want {
				t.Errorf("Find = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	fs := memFS(t, map[string]string{
		"base/kustomization.yaml": "",
		"cm.yaml":                 "",
		// Relative paths of the tree that have the form of remote ones.
		"github.com/org/repo/kustomization.yaml": "",
		"example.com/x.yaml":                     "",
		"https:/example.com/x.yaml":              "",
	})
	tests := []struct {
		entry    string
		want     Kind
		wantPath string
	}{
		{"base", Folder, "/t/base"},
		{"./base/", Folder, "/t/base"},
		{"cm.yaml", File, "/t/cm.yaml"},
		{"missing.yaml", Missing, "/t/missing.yaml"},
		{"../elsewhere", Missing, "/elsewhere"},
		{"config.d/x.yaml", Missing, "/t/config.d/x.yaml"},
		{"/t/cm.yaml", Absolute, ""},
		{"/etc/passwd", Absolute, ""},
		{"apiVersion: v1\nkind: ConfigMap\n", Inline, ""},
		// Every form kustomize fetches.
		{"https://example.com/x.yaml", Remote, ""},
		{"http://example.com/x.yaml", Remote, ""},
		{"git://example.com/org/repo", Remote, ""},
		{"ssh://git@example.com/org/repo", Remote, ""},
		{"git+ssh://git@example.com/org/repo", Remote, ""},
		{"file:///srv/repo//base?ref=main", Remote, ""},
		{"git@github.com:org/repo.git//config?ref=v1", Remote, ""},
		{"github.com/org/repo//config/crd?ref=v1.14.2", Remote, ""},
		{"github.com/org/other", Remote, ""},
		{"gitlab.example.com:8443/org/repo//base", Remote, ""},
		// ... in any letter case, as kustomize parses URLs ...
		{"HTTPS://example.com/x.yaml", Remote, ""},
		{"Git@GitHub.com:Org/Repo.git", Remote, ""},
		{"GitHub.com/Org/Repo//config", Remote, ""},
		// ... unless the tree has that relative path: kustomize reads the
		// file first. Not so for a URL, which it fetches first.
		{"github.com/org/repo", Folder, "/t/github.com/org/repo"},
		{"example.com/x.yaml", File, "/t/example.com/x.yaml"},
		{"https://example.com/x.yaml", Remote, ""},
	}
	for _, tt := range tests {
		kind, p := Classify(fs, "/t", tt.entry)
		if kind != tt.want || p != tt.wantPath {
			t.Errorf("Classify(%q) = %v %q, want %v %q", tt.entry, kind, p, tt.want, tt.wantPath)
		}
	}
}

func TestEntries(t *testing.T) {
	fs := memFS(t, map[string]string{
		"kustomization.yaml": `resources: [cm.yaml, base, https://example.com/x.yaml, ""]
bases: [/abs]
components: [comp]
crds: [crd.yaml]
patchesStrategicMerge:
- p.yaml
- |
  kind: ConfigMap
patches:
- path: q.yaml
- patch: "kind: ConfigMap"
- path: r.yaml
`,
		"cm.yaml":                 "",
		"base/kustomization.yaml": "",
		"comp/kustomization.yaml": "",
		"crd.yaml":                "",
		"p.yaml":                  "",
		"q.yaml":                  "",
	})
	k := read(fs, "/t")
	if k.Err != nil {
		t.Fatal(k.Err)
	}
	f := "/t/kustomization.yaml"
	want := []Entry{
		{f, Patches, 0, "q.yaml", File, "/t/q.yaml", "path"},
		{f, Patches, 2, "r.yaml", Missing, "/t/r.yaml", "path"},
		{f, Resources, 0, "cm.yaml", File, "/t/cm.yaml", ""},
		{f, Resources, 1, "base", Folder, "/t/base", ""},
		{f, Resources, 2, "https://example.com/x.yaml", Remote, "", ""},
		{f, Bases, 0, "/abs", Absolute, "", ""},
		{f, Components, 0, "comp", Folder, "/t/comp", ""},
		{f, Crds, 0, "crd.yaml", File, "/t/crd.yaml", ""},
		{f, PatchesStrategicMerge, 0, "p.yaml", File, "/t/p.yaml", ""},
		{f, PatchesStrategicMerge, 1, "kind: ConfigMap\n", Inline, "", ""},
	}
	got := k.Entries(Patches, Resources, Bases, Components, Crds, PatchesStrategicMerge)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	var where []string
	for _, e := range got[:2] {
		where = append(where, e.Where())
	}
	if diff := cmp.Diff([]string{"patches[0].path", "patches[2].path"}, where); diff != "" {
		t.Errorf("Where (-want +got):\n%s", diff)
	}
}

// TestEntries_FileFields: every other field kustomize loads a file from is
// listed with the place an error names, a generator's "key=path" by its
// path, and entries that name no file are left out.
func TestEntries_FileFields(t *testing.T) {
	fs := memFS(t, map[string]string{
		"kustomization.yaml": `generators: [gen.yaml]
transformers:
- tdir
- |
  apiVersion: builtin
  kind: LabelTransformer
validators: [https://example.com/v.yaml]
configurations: [conf.yaml]
openapi:
  path: schema.json
replacements:
- source: {kind: ConfigMap, fieldPath: data.x}
  targets: []
- path: repl.yaml
patchesJson6902:
- target: {kind: Deployment, name: x}
  path: /abs/p.yaml
configMapGenerator:
- name: a
  literals: [k=v]
- name: b
  files: [f.txt, key=k.txt, =bad, two=a=b]
  envs: [a.env]
  env: b.env
secretGenerator:
- name: s
  files: [HTTPS://example.com/s.txt]
`,
		"gen.yaml":                "",
		"tdir/kustomization.yaml": "",
		"conf.yaml":               "",
		"repl.yaml":               "",
		"f.txt":                   "",
		"k.txt":                   "",
		"a.env":                   "",
	})
	k := read(fs, "/t")
	if k.Err != nil {
		t.Fatal(k.Err)
	}
	f := "/t/kustomization.yaml"
	want := []Entry{
		{f, Generators, 0, "gen.yaml", File, "/t/gen.yaml", ""},
		{f, Transformers, 0, "tdir", Folder, "/t/tdir", ""},
		{f, Transformers, 1, "apiVersion: builtin\nkind: LabelTransformer\n", Inline, "", ""},
		{f, Validators, 0, "https://example.com/v.yaml", Remote, "", ""},
		{f, Configurations, 0, "conf.yaml", File, "/t/conf.yaml", ""},
		{f, OpenAPI, 0, "schema.json", Missing, "/t/schema.json", ""},
		{f, Replacements, 1, "repl.yaml", File, "/t/repl.yaml", "path"},
		{f, PatchesJSON6902, 0, "/abs/p.yaml", Absolute, "", "path"},
		{f, ConfigMapGenerator, 1, "f.txt", File, "/t/f.txt", "files[0]"},
		{f, ConfigMapGenerator, 1, "k.txt", File, "/t/k.txt", "files[1]"},
		{f, ConfigMapGenerator, 1, "=bad", Missing, "/t/=bad", "files[2]"},
		{f, ConfigMapGenerator, 1, "two=a=b", Missing, "/t/two=a=b", "files[3]"},
		{f, ConfigMapGenerator, 1, "a.env", File, "/t/a.env", "envs[0]"},
		{f, ConfigMapGenerator, 1, "b.env", Missing, "/t/b.env", "env"},
		{f, SecretGenerator, 0, "HTTPS://example.com/s.txt", Remote, "", "files[0]"},
	}
	got := k.Entries(Generators, Transformers, Validators, Configurations, OpenAPI, Replacements, PatchesJSON6902, ConfigMapGenerator, SecretGenerator)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	var where []string
	for _, e := range got {
		where = append(where, e.Where())
	}
	wantWhere := []string{
		"generators[0]", "transformers[0]", "transformers[1]", "validators[0]", "configurations[0]",
		"openapi.path", "replacements[1].path", "patchesJson6902[0].path",
		"configMapGenerator[1].files[0]", "configMapGenerator[1].files[1]", "configMapGenerator[1].files[2]",
		"configMapGenerator[1].files[3]", "configMapGenerator[1].envs[0]", "configMapGenerator[1].env",
		"secretGenerator[0].files[0]",
	}
	if diff := cmp.Diff(wantWhere, where); diff != "" {
		t.Errorf("Where (-want +got):\n%s", diff)
	}
}

// record is a visitor that writes down what a walk does, paths relative
// to /t.
func record(events *[]string) Visitor {
	rel := func(p string) string {
		r, _ := filepath.Rel("/t", p)
		return r
	}
	return Visitor{
		Kustomization: func(k *Kustomization) error {
			s := "visit " + rel(k.Dir)
			switch {
			case k.File == "":
				s += " (no kustomization)"
			case k.Err != nil:
				s += " (unreadable)"
			}
			if k.From != nil {
				s += " from " + rel(k.From.File) + " " + k.From.Where()
			}
			*events = append(*events, s)
			return nil
		},
		Entry: func(k *Kustomization, e Entry) error {
			*events = append(*events, fmt.Sprintf("  %s %s %s", rel(k.Dir), e.Where(), e.Kind))
			return nil
		},
	}
}

func TestWalk(t *testing.T) {
	// a uses b and c; b uses d; c uses d again and a (a cycle).
	graph := map[string]string{
		"a/kustomization.yaml": "resources: [../b, a.yaml]\ncomponents: [../c]\n",
		"a/a.yaml":             "",
		"b/kustomization.yaml": "resources: [../d, github.com/org/repo//x]\n",
		"c/kustomization.yaml": "resources: [../d, ../a, /abs]\ncrds: [../e]\n",
		"d/kustomization.yaml": "resources: [d.yaml]\npatches: [{path: p.yaml}]\n",
		"d/d.yaml":             "",
		"e/kustomization.yaml": "",
	}
	tests := []struct {
		name  string
		files map[string]string
		start string
		opts  Options
		want  []string
	}{
		{
			name: "depth first goes into a folder before the next entry", files: graph, start: "a",
			want: []string{
				"visit a",
				"  a resources[0] folder",
				"visit b from a/kustomization.yaml resources[0]",
				"  b resources[0] folder",
				"visit d from b/kustomization.yaml resources[0]",
				"  d resources[0] file",
				"  b resources[1] remote",
				"  a resources[1] file",
				"  a components[0] folder",
				"visit c from a/kustomization.yaml components[0]",
				"  c resources[0] folder",
				"  c resources[1] folder",
				"  c resources[2] absolute",
			},
		},
		{
			name: "breadth first is nearest first", files: graph, start: "a", opts: Options{Order: BreadthFirst},
			want: []string{
				"visit a",
				"  a resources[0] folder",
				"  a resources[1] file",
				"  a components[0] folder",
				"visit b from a/kustomization.yaml resources[0]",
				"  b resources[0] folder",
				"  b resources[1] remote",
				"visit c from a/kustomization.yaml components[0]",
				"  c resources[0] folder",
				"  c resources[1] folder",
				"  c resources[2] absolute",
				"visit d from b/kustomization.yaml resources[0]",
				"  d resources[0] file",
			},
		},
		{
			name: "the fields followed are the caller's, in its order", files: graph, start: "c",
			opts: Options{Follow: []Field{Crds, Patches, Resources}},
			want: []string{
				"visit c",
				"  c crds[0] folder",
				"visit e from c/kustomization.yaml crds[0]",
				"  c resources[0] folder",
				"visit d from c/kustomization.yaml resources[0]",
				"  d patches[0].path missing",
				"  d resources[0] file",
				"  c resources[1] folder",
				"visit a from c/kustomization.yaml resources[1]",
				"  a resources[0] folder",
				"visit b from a/kustomization.yaml resources[0]",
				"  b resources[0] folder",
				"  b resources[1] remote",
				"  a resources[1] file",
				"  c resources[2] absolute",
			},
		},
		{
			name:  "a folder without a kustomization is visited, not followed",
			files: map[string]string{"a/kustomization.yaml": "resources: [../b]\n", "b/cm.yaml": ""},
			start: "a",
			want:  []string{"visit a", "  a resources[0] folder", "visit b (no kustomization) from a/kustomization.yaml resources[0]"},
		},
		{
			name:  "a kustomization that does not parse is visited, not followed",
			files: map[string]string{"a/kustomization.yaml": "resources: [../b]\n", "b/kustomization.yaml": "resources: ../c\n", "c/kustomization.yaml": ""},
			start: "a",
			want:  []string{"visit a", "  a resources[0] folder", "visit b (unreadable) from a/kustomization.yaml resources[0]"},
		},
		{
			name:  "cycles: itself, through .., each folder once",
			files: map[string]string{"a/kustomization.yaml": "resources: [., ../a, ./, ../a/../a, x/..]\n", "a/x/": ""},
			start: "a/",
			want: []string{
				"visit a",
				"  a resources[0] folder",
				"  a resources[1] folder",
				"  a resources[2] folder",
				"  a resources[3] folder",
				"  a resources[4] folder",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			if err := Walk(memFS(t, tt.files), filepath.Join("/t", tt.start), tt.opts, record(&got)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("walk (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWalk_VisitorEndsTheWalk(t *testing.T) {
	fs := memFS(t, map[string]string{
		"a/kustomization.yaml": "resources: [../b, ../c]\n",
		"b/kustomization.yaml": "",
		"c/kustomization.yaml": "",
	})
	boom := errors.New("boom")
	for _, tt := range []struct {
		ret     error
		wantErr error
	}{{SkipAll, nil}, {boom, boom}} {
		var seen []string
		err := Walk(fs, "/t/a", Options{}, Visitor{Kustomization: func(k *Kustomization) error {
			seen = append(seen, filepath.Base(k.Dir))
			if filepath.Base(k.Dir) == "b" {
				return tt.ret
			}
			return nil
		}})
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
			t.Errorf("returning %v: err = %v, want %v", tt.ret, err, tt.wantErr)
		}
		if diff := cmp.Diff([]string{"a", "b"}, seen); diff != "" {
			t.Errorf("returning %v: visited (-want +got):\n%s", tt.ret, diff)
		}
	}
}

// TestWalk_Bound: a graph of MaxFolders folders is walked to its end; one
// folder more ends the walk with ErrTooLarge, in either order.
func TestWalk_Bound(t *testing.T) {
	chain := func(n int) filesys.FileSystem { return memFS(t, testtree.KustomizationChain(n, "")) }
	for _, order := range []Order{DepthFirst, BreadthFirst} {
		visits := 0
		count := Visitor{Kustomization: func(*Kustomization) error { visits++; return nil }}
		if err := Walk(chain(MaxFolders), "/t/f0", Options{Order: order}, count); err != nil || visits != MaxFolders {
			t.Errorf("order %v, %d folders: %d visits, err %v; want all, no error", order, MaxFolders, visits, err)
		}
		visits = 0
		err := Walk(chain(MaxFolders+1), "/t/f0", Options{Order: order}, count)
		if !errors.Is(err, ErrTooLarge) || visits != MaxFolders {
			t.Errorf("order %v, %d folders: %d visits, err %v; want %d and ErrTooLarge", order, MaxFolders+1, visits, err, MaxFolders)
		}
	}
}

// TestWalk_SymlinkLoopEnds: folders that are symlinks to their parent make
// a new path at every turn (and two of them, twice as many each level);
// the bound ends the walk.
func TestWalk_SymlinkLoopEnds(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: [l1, l2]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"l1", "l2"} {
		if err := os.Symlink(".", filepath.Join(dir, l)); err != nil {
			t.Fatal(err)
		}
	}
	visits := 0
	err := Walk(filesys.MakeFsOnDisk(), dir, Options{}, Visitor{Kustomization: func(*Kustomization) error { visits++; return nil }})
	if !errors.Is(err, ErrTooLarge) || visits != MaxFolders {
		t.Errorf("%d visits, err %v; want %d and ErrTooLarge", visits, err, MaxFolders)
	}
	if err != nil && !strings.Contains(err.Error(), "symlink loop") {
		t.Errorf("err %v does not say what to look for", err)
	}
}
