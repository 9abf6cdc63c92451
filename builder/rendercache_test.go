package builder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/contract/finding"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
)

// sameBuild fails when two builds differ in any file byte, warning,
// finding, provider result or source (Locate compared object by object).
func sameBuild(t *testing.T, what string, want, got *Result) {
	t.Helper()
	files := func(r *Result) map[string]string {
		out := map[string]string{}
		for _, p := range r.Release.Providers {
			for _, f := range p.Files {
				out[p.Label()+"/"+f.Name] = string(f.Data)
			}
		}
		return out
	}
	if diff := cmp.Diff(files(want), files(got)); diff != "" {
		t.Errorf("%s: release files differ (-uncached +cached):\n%s", what, diff)
	}
	if diff := cmp.Diff(want.Warnings, got.Warnings); diff != "" {
		t.Errorf("%s: warnings differ (-uncached +cached):\n%s", what, diff)
	}
	if diff := cmp.Diff(want.Findings, got.Findings); diff != "" {
		t.Errorf("%s: findings differ (-uncached +cached):\n%s", what, diff)
	}
	if diff := cmp.Diff(want.Providers, got.Providers); diff != "" {
		t.Errorf("%s: provider results differ (-uncached +cached):\n%s", what, diff)
	}
	noLocate := cmp.Transformer("noLocate", func(s finding.Source) finding.Source { s.Locate = nil; return s })
	if diff := cmp.Diff(want.Sources, got.Sources, noLocate); diff != "" {
		t.Errorf("%s: sources differ (-uncached +cached):\n%s", what, diff)
	}
	for name, s := range want.Sources {
		if s.Locate == nil {
			continue
		}
		for _, p := range want.Release.Providers {
			f, ok := p.File(strings.TrimPrefix(name, p.Label()+"/"+p.Version+"/"))
			if !ok {
				continue
			}
			for _, n := range objects(t, f.Data) {
				id := n.GetKind() + "/" + n.GetName()
				if ns := n.GetNamespace(); ns != "" {
					id = n.GetKind() + "/" + ns + "/" + n.GetName()
				}
				wl, wok := s.Locate(id, "")
				gl, gok := got.Sources[name].Locate(id, "")
				if wl != gl || wok != gok {
					t.Errorf("%s: %s: %s located at %v, %t uncached, %v, %t cached", what, name, id, wl, wok, gl, gok)
				}
			}
		}
	}
}

// TestRenderCache_CachedBuildIsByteIdentical: a build through a cache, when
// it fills the cache and when it reuses every render, is the uncached build
// byte for byte, on the example and on a real tree (CAPG, whose release
// image is set by an in-memory edit of a kustomization).
func TestRenderCache_CachedBuildIsByteIdentical(t *testing.T) {
	trees := []struct {
		name  string
		dir   func(t *testing.T) string
		cfg   string
		opts  Options
		short bool
	}{
		{name: "example", dir: func(*testing.T) string { return filepath.Join("..", "examples", "infrastructure-example") }, short: true},
		{name: "example, dev image", dir: func(*testing.T) string { return filepath.Join("..", "examples", "infrastructure-example") },
			opts: Options{KeepImage: true}, short: true},
		{name: "capg", dir: func(t *testing.T) string { return testtree.ModuleDir(t, testtree.CAPGModule) },
			cfg: filepath.Join("..", "docs", "configs", "capg.capirepo.yaml"), opts: Options{Version: "v1.13.1"}},
	}
	for _, tt := range trees {
		t.Run(tt.name, func(t *testing.T) {
			if testing.Short() && !tt.short {
				t.Skip("renders a real provider tree")
			}
			dir := tt.dir(t)
			var cfg *provider.Config
			if tt.cfg != "" {
				var err error
				if cfg, err = provider.LoadConfig(dir, tt.cfg); err != nil {
					t.Fatal(err)
				}
			}
			opts := tt.opts
			opts.Config = cfg
			want := mustBuild(t, dir, opts)
			opts.Cache = NewRenderCache()
			filled := mustBuild(t, dir, opts)
			sameBuild(t, "filling the cache", want, filled)
			renders := opts.Cache.total()
			if renders == 0 {
				t.Fatal("the cache saw no render")
			}
			reused := mustBuild(t, dir, opts)
			if n := opts.Cache.total(); n != renders {
				t.Errorf("an unchanged tree rendered %d times again", n-renders)
			}
			sameBuild(t, "reusing every render", want, reused)
		})
	}
}

// cacheTree is a provider whose renders share and split their inputs: two
// flavors share a base, one has a patch of its own; the components have an
// env file for a generator.
func cacheTree() map[string]string {
	return testtree.Minimal(map[string]string{
		"config/default/kustomization.yaml": `namespace: test-system
namePrefix: test-
labels:
- includeSelectors: true
  pairs:
    cluster.x-k8s.io/provider: infrastructure-test
resources:
- namespace.yaml
- ../manager
configMapGenerator:
- name: manager-config
  envs: [manager.env]
`,
		"config/default/manager.env":                   "LOG_LEVEL=2\n",
		"templates/flavors/base/kustomization.yaml":    "resources:\n- cluster.yaml\n",
		"templates/flavors/base/cluster.yaml":          "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\n---\napiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: KubeadmControlPlane\nmetadata:\n  name: ${CLUSTER_NAME}-control-plane\nspec:\n  replicas: 1\n",
		"templates/flavors/default/kustomization.yaml": "resources:\n- ../base\n",
		"templates/flavors/ha/kustomization.yaml":      "resources:\n- ../base\npatches:\n- path: kcp.yaml\n  target: {kind: KubeadmControlPlane}\n",
		"templates/flavors/ha/kcp.yaml":                "- op: replace\n  path: /spec/replicas\n  value: 3\n",
	})
}

// TestRenderCache_ChangeRerendersOnlyTheRendersThatReadIt: after a change
// to a file a render read, exactly the renders that read it run again, and
// the build equals an uncached build of the changed tree.
func TestRenderCache_ChangeRerendersOnlyTheRendersThatReadIt(t *testing.T) {
	const (
		components = "config/default"
		base       = "templates/flavors/base"
		def        = "templates/flavors/default"
		ha         = "templates/flavors/ha"
	)
	cases := []struct {
		name   string
		change map[string]string
		want   []string // the kustomizations rendered again
		// fails: the changed tree does not build (the error says so).
		fails string
	}{
		{name: "a base two flavors share", change: map[string]string{base + "/cluster.yaml": strings.Replace(cacheTree()[base+"/cluster.yaml"], "replicas: 1", "replicas: 5", 1)},
			want: []string{def, ha}},
		{name: "a patch of one flavor", change: map[string]string{ha + "/kcp.yaml": "- op: replace\n  path: /spec/replicas\n  value: 7\n"},
			want: []string{ha}},
		{name: "a generator's env file", change: map[string]string{components + "/manager.env": "LOG_LEVEL=4\n"},
			want: []string{components}},
		{name: "a kustomization.yml beside a kustomization.yaml", change: map[string]string{ha + "/kustomization.yml": "resources: []\n"},
			want: []string{ha}, fails: "multiple kustomization files"},
		{name: "a file no render reads", change: map[string]string{"docs/notes.md": "notes\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := testtree.Write(t, cacheTree())
			cache := NewRenderCache()
			opts := Options{KeepImage: true, Cache: cache}
			mustBuild(t, dir, opts)
			before := map[string]int{}
			for _, k := range []string{components, def, ha} {
				before[k] = cache.rendered(filepath.Join(dir, k))
				if before[k] != 1 {
					t.Fatalf("%s rendered %d times in the first build, want 1", k, before[k])
				}
			}
			testtree.WriteInto(t, dir, tc.change)
			got, err := build(t, dir, opts)
			var again []string
			for _, k := range []string{components, def, ha} {
				if cache.rendered(filepath.Join(dir, k)) != before[k] {
					again = append(again, k)
				}
			}
			if diff := cmp.Diff(tc.want, again); diff != "" {
				t.Errorf("rendered again (-want +got):\n%s", diff)
			}
			if tc.fails != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fails) {
					t.Fatalf("build after the change: %v, want an error saying %q", err, tc.fails)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sameBuild(t, "after the change", mustBuild(t, dir, Options{KeepImage: true}), got)
		})
	}
}

// TestRenderCache_ImageEditIsAnInput: the release image is an
// in-memory edit of a kustomization; a build with another image reuses no
// render made with the first, a build back with the first reuses it, and
// the renders kept per kustomization stay bounded however many images.
func TestRenderCache_ImageEditIsAnInput(t *testing.T) {
	dir := testtree.Write(t, cacheTree())
	cache := NewRenderCache()
	kdir := filepath.Join(dir, "config", "default")
	images := []string{"registry.example.com/a/manager", "registry.example.com/b/manager", "registry.example.com/a/manager"}
	for i := range 2 * maxRenderEntries {
		images = append(images, fmt.Sprintf("registry.example.com/c%d/manager", i))
	}
	for i, img := range images {
		n := cache.rendered(kdir)
		got := mustBuild(t, dir, Options{Image: img, Cache: cache})
		if again := cache.rendered(kdir) > n; again != (i != 2) {
			t.Errorf("%s: rendered %t, want %t", img, again, i != 2)
		}
		sameBuild(t, img, mustBuild(t, dir, Options{Image: img}), got)
		f, _ := got.Release.Providers[0].File(got.Release.Providers[0].ComponentsFile)
		if !strings.Contains(string(f.Data), img+":v1.2.3") {
			t.Errorf("%s: the components lack the image", img)
		}
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	for key, list := range cache.entries {
		if len(list) > maxRenderEntries {
			t.Errorf("%d renders kept for %s, the bound is %d", len(list), key, maxRenderEntries)
		}
	}
}

// TestRenderCache_TransformsOfAReusedRender: a render reused with other
// release transforms (a pull policy kustomize does not see) is serialized
// with those, not the first build's.
func TestRenderCache_TransformsOfAReusedRender(t *testing.T) {
	dir := testtree.Write(t, cacheTree())
	cache := NewRenderCache()
	for _, policy := range []string{"Always", "IfNotPresent", "Always"} {
		cfg := loadConfig(t, dir)
		cfg.Providers[0].Image = &provider.Image{PullPolicy: policy}
		want := mustBuild(t, dir, Options{Config: cfg})
		n := cache.total()
		got := mustBuild(t, dir, Options{Config: cfg, Cache: cache})
		if n > 0 && cache.total() != n {
			t.Errorf("%s: rendered again, want the render reused", policy)
		}
		sameBuild(t, policy, want, got)
		f, _ := got.Release.Providers[0].File(got.Release.Providers[0].ComponentsFile)
		if !strings.Contains(string(f.Data), "imagePullPolicy: "+policy) {
			t.Errorf("%s: the components lack the pull policy", policy)
		}
	}
}

// TestRenderCache_ReleasePatchOfAReusedRender: a release patch (a file of
// capirepo.yaml's patches:, read after kustomize) applies as edited to a
// reused render.
func TestRenderCache_ReleasePatchOfAReusedRender(t *testing.T) {
	files := cacheTree()
	files["capirepo.yaml"] = "providers:\n- name: infrastructure-test\n  patches:\n  - path: release/args.yaml\n    target: {kind: Deployment}\n"
	files["release/args.yaml"] = "- op: add\n  path: /metadata/annotations\n  value: {release: one}\n"
	dir := testtree.Write(t, files)
	cache := NewRenderCache()
	for _, v := range []string{"one", "two"} {
		testtree.WriteInto(t, dir, map[string]string{"release/args.yaml": "- op: add\n  path: /metadata/annotations\n  value: {release: " + v + "}\n"})
		want := mustBuild(t, dir, Options{KeepImage: true})
		got := mustBuild(t, dir, Options{KeepImage: true, Cache: cache})
		sameBuild(t, v, want, got)
		f, _ := got.Release.Providers[0].File(got.Release.Providers[0].ComponentsFile)
		if !strings.Contains(string(f.Data), "release: "+v) {
			t.Errorf("%s: the components lack the patch's annotation", v)
		}
	}
	if n := cache.rendered(filepath.Join(dir, "config", "default")); n != 1 {
		t.Errorf("the components rendered %d times, want 1 (the patch is not kustomize's input)", n)
	}
}

// TestRenderCache_DeprecationWarningsOfReusedRenders: a reused render counts
// in the kustomize deprecation warnings as a render that ran, and
// kustomize's notices still do not reach stderr.
func TestRenderCache_DeprecationWarningsOfReusedRenders(t *testing.T) {
	dir := testtree.Write(t, deprecatedTree())
	want := mustBuild(t, dir, Options{KeepImage: true})
	cache := NewRenderCache()
	mustBuild(t, dir, Options{KeepImage: true, Cache: cache})
	n := cache.total()
	got := mustBuild(t, dir, Options{KeepImage: true, Cache: cache})
	if cache.total() != n {
		t.Fatalf("the second build rendered %d times, want every render reused", cache.total()-n)
	}
	if !slices.ContainsFunc(got.Warnings, func(w string) bool { return strings.HasPrefix(w, "kustomize: ") }) {
		t.Errorf("no kustomize warning from reused renders: %q", got.Warnings)
	}
	sameBuild(t, "reused", want, got)
}

// TestRenderCache_EveryQuestionIsChecked: a render that listed a folder,
// matched a glob, or asked whether a path exists or is a folder is not
// reused once the answer changes (kustomize v0.21 asks some of these only
// in features capirepo turns off, so the recorder is asked directly).
func TestRenderCache_EveryQuestionIsChecked(t *testing.T) {
	cases := []struct {
		op, path string
		change   func(t *testing.T, dir string)
	}{
		{opReadDir, "k", func(t *testing.T, dir string) { testtree.WriteInto(t, dir, map[string]string{"k/b.env": "B=1\n"}) }},
		{opGlob, "k/*.env", func(t *testing.T, dir string) { testtree.WriteInto(t, dir, map[string]string{"k/b.env": "B=1\n"}) }},
		{opExists, "k/b.env", func(t *testing.T, dir string) { testtree.WriteInto(t, dir, map[string]string{"k/b.env": "B=1\n"}) }},
		{opIsDir, "k/sub", func(t *testing.T, dir string) { testtree.WriteInto(t, dir, map[string]string{"k/sub/c.yaml": "{}\n"}) }},
	}
	for _, tc := range cases {
		t.Run(tc.op, func(t *testing.T) {
			dir := testtree.Write(t, map[string]string{"k/a.env": "A=1\n", "k/kustomization.yaml": "resources: []\n"})
			fs, err := newTreeFS(dir)
			if err != nil {
				t.Fatal(err)
			}
			cache := NewRenderCache()
			rec := &fsRecorder{FileSystem: fs}
			p := filepath.Join(dir, filepath.FromSlash(tc.path))
			switch tc.op {
			case opReadDir:
				_, err = rec.ReadDir(p)
			case opGlob:
				_, err = rec.Glob(p)
			case opExists:
				rec.Exists(p)
			case opIsDir:
				rec.IsDir(p)
			}
			if err != nil {
				t.Fatal(err)
			}
			rm, err := kustomize(fs, filepath.Join(dir, "k"), false)
			if err != nil {
				t.Fatal(err)
			}
			cache.put("key", rec, rm, nil)
			if _, _, ok := cache.lookup("key", fs); !ok {
				t.Fatal("not reused while nothing changed")
			}
			tc.change(t, dir)
			if _, _, ok := cache.lookup("key", fs); ok {
				t.Errorf("reused after the answer to %s %s changed", tc.op, tc.path)
			}
		})
	}
}

// TestRenderCache_RefusedPathsOfAReusedRender: a path the tree refused
// (a symlink out of it) is noted for the build that reuses the render, as
// for the build that ran it, and not for a build whose render runs again.
func TestRenderCache_RefusedPathsOfAReusedRender(t *testing.T) {
	dir := testtree.Write(t, map[string]string{"k/a.env": "A=1\n", "k/kustomization.yaml": "resources: []\n"})
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "k", "out")); err != nil {
		t.Fatal(err)
	}
	kdir := filepath.Join(dir, "k")
	first, err := newTreeFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := &fsRecorder{FileSystem: first}
	if rec.Exists(filepath.Join(kdir, "out", "x.yaml")) {
		t.Fatal("a path out of the tree exists")
	}
	if _, err := rec.ReadFile(filepath.Join(kdir, "a.env")); err != nil {
		t.Fatal(err)
	}
	if first.Violation() == nil {
		t.Fatal("the refused path is not noted")
	}
	rm, err := kustomize(first, kdir, false)
	if err != nil {
		t.Fatal(err)
	}
	cache := NewRenderCache()
	cache.put("key", rec, rm, nil)

	reusing, _ := newTreeFS(dir)
	if _, _, ok := cache.lookup("key", reusing); !ok {
		t.Fatal("not reused")
	}
	if reusing.Violation() == nil {
		t.Error("a reused render's refused path is not noted")
	}
	testtree.WriteInto(t, dir, map[string]string{"k/a.env": "A=2\n"})
	rerunning, _ := newTreeFS(dir)
	if _, _, ok := cache.lookup("key", rerunning); ok {
		t.Fatal("reused after a change")
	}
	if err := rerunning.Violation(); err != nil {
		t.Errorf("a render that runs again has a refused path noted by the cache: %v", err)
	}
}

// TestRenderCache_CallerMayChangeTheRender: the builder edits what a render
// returns (transforms, patches); a reused render is as kustomize made it.
func TestRenderCache_CallerMayChangeTheRender(t *testing.T) {
	dir := testtree.Write(t, cacheTree())
	fs, err := newTreeFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	fs.cache = NewRenderCache()
	kdir := filepath.Join(dir, "config", "default")
	for i := range 3 {
		rm, err := kustomize(fs, kdir, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rm.Resources() {
			if _, ok := r.GetLabels()["edited"]; ok {
				t.Fatalf("render %d has the label its caller set on an earlier one", i)
			}
			if err := r.SetLabels(map[string]string{"edited": "yes"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := fs.cache.rendered(kdir); n != 1 {
		t.Errorf("rendered %d times, want 1", n)
	}
}

// TestRenderCache_ConcurrentBuilds: builds of several trees at once share
// one cache (go test -race).
func TestRenderCache_ConcurrentBuilds(t *testing.T) {
	cache := NewRenderCache()
	dirs := []string{testtree.Write(t, cacheTree()), testtree.Write(t, cacheTree())}
	want := mustBuild(t, dirs[0], Options{KeepImage: true})
	var wg sync.WaitGroup
	results := make([]*Result, 6)
	errs := make([]error, 6)
	for i := range results {
		wg.Go(func() {
			opts := Options{KeepImage: true, Cache: cache, Dir: dirs[i%2], Version: "v1.2.3"}
			cfg, err := provider.LoadConfig(opts.Dir, "")
			if err != nil {
				errs[i] = err
				return
			}
			opts.Config = cfg
			results[i], errs[i] = Build(context.Background(), opts)
		})
	}
	wg.Wait()
	for i, r := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if i%2 == 0 {
			sameBuild(t, "concurrent", want, r)
		}
	}
}

// total is the number of renders that ran.
func (c *RenderCache) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.renders {
		n += v
	}
	return n
}
