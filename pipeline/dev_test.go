package pipeline

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/builder/buildtest"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/verify"
)

func readConfig(t testing.TB, file string) publish.ClusterctlConfig {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var c publish.ClusterctlConfig
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return c
}

// verifyConfig reads every provider of a clusterctl config back through
// clusterctl's client: components, every flavor and clusterclass.
func verifyConfig(t testing.TB, c publish.ClusterctlConfig) *verify.Report {
	t.Helper()
	var targets []verify.Repo
	for _, p := range c.Providers {
		id, err := provider.ParseLabel(labelOf(p))
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, verify.Repo{ID: id, URL: p.URL})
	}
	rep, err := verify.Repository(context.Background(), targets, verify.Options{Variables: testVars})
	if err != nil {
		t.Fatalf("clusterctl cannot read the dev repository: %v", err)
	}
	return rep
}

func labelOf(p publish.ProviderURL) string {
	for _, k := range []struct{ typ, prefix string }{
		{"CoreProvider", ""}, {"BootstrapProvider", "bootstrap-"}, {"ControlPlaneProvider", "control-plane-"},
		{"InfrastructureProvider", "infrastructure-"}, {"IPAMProvider", "ipam-"},
		{"RuntimeExtensionProvider", "runtime-extension-"}, {"AddonProvider", "addon-"},
	} {
		if p.Type == k.typ {
			return k.prefix + p.Name
		}
	}
	return p.Name
}

func TestDev_ExampleWritesRepositoryConfigAndInitLine(t *testing.T) {
	root := filepath.Join(t.TempDir(), "dev-repository")
	res, err := Dev(context.Background(), DevOptions{Dir: devExampleDir, Root: root, BuildID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(root, "config.yaml")
	url := "file://" + filepath.Join(root, "infrastructure-example", "v0.1.99", "infrastructure-components.yaml")
	want := publish.ClusterctlConfig{
		Providers:       []publish.ProviderURL{{Name: "example", Type: "InfrastructureProvider", URL: url}},
		OverridesFolder: filepath.Join(root, "overrides"),
	}
	if diff := cmp.Diff(want, readConfig(t, cfgFile)); diff != "" {
		t.Errorf("config.yaml (-want +got):\n%s", diff)
	}
	if want := "clusterctl init --infrastructure example:v0.1.99 --config " + cfgFile; res.Init != want {
		t.Errorf("init line\n got %s\nwant %s", res.Init, want)
	}
	if p := res.Providers[0]; p.VersionFrom != "the newest release series of metadata.yaml, 0.1" || p.Cached || !p.Written {
		t.Errorf("provider result %+v", p)
	}
	if fi, err := os.Stat(want.OverridesFolder); err != nil || !fi.IsDir() {
		t.Errorf("overrides folder not created: %v", err)
	}
	rep := verifyConfig(t, want)
	if n := len(rep.Providers[0].Flavors); n < 3 {
		t.Errorf("clusterctl read %d flavors", n)
	}
}

// secondProvider writes a bootstrap provider tree with its own
// clusterctl-settings.json, as a provider repository has it.
func secondProvider(t testing.TB, dir string) {
	t.Helper()
	files := buildtest.MinimalFiles(2, map[string]string{
		"clusterctl-settings.json": `{"name": "bootstrap-test", "config": {"componentsFile": "bootstrap-components.yaml", "nextVersion": "v0.2.99"}}`,
	})
	files["config/default/kustomization.yaml"] = strings.Replace(files["config/default/kustomization.yaml"], "infrastructure-test", "bootstrap-test", 1)
	testtree.WriteInto(t, dir, files)
}

func TestDev_ProviderReposPullInOtherTrees(t *testing.T) {
	work := t.TempDir()
	example := testtree.CopyTree(t, devExampleDir)
	if err := os.Rename(example, filepath.Join(work, "cluster-api-provider-example")); err != nil {
		t.Fatal(err)
	}
	testtree.WriteInto(t, filepath.Join(work, "cluster-api-provider-example"), map[string]string{
		"clusterctl-settings.json": `{"name": "infrastructure-example", "config": {"componentsFile": "infrastructure-components.yaml", "nextVersion": "v0.1.99"}}`,
	})
	secondProvider(t, filepath.Join(work, "cluster-api-bootstrap-test"))
	top := filepath.Join(work, "top")
	testtree.WriteInto(t, top, map[string]string{
		"clusterctl-settings.json": `{"providers": ["infrastructure-example", "bootstrap-test"],
 "provider_repos": ["../cluster-api-provider-example", "../cluster-api-bootstrap-test"]}`,
	})
	root := filepath.Join(work, "dev")
	res, err := Dev(context.Background(), DevOptions{Dir: top, Root: root, BuildID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(root, "config.yaml")
	want := publish.ClusterctlConfig{
		Providers: []publish.ProviderURL{
			{Name: "example", Type: "InfrastructureProvider", URL: "file://" + filepath.Join(root, "infrastructure-example", "v0.1.99", "infrastructure-components.yaml")},
			{Name: "test", Type: "BootstrapProvider", URL: "file://" + filepath.Join(root, "bootstrap-test", "v0.2.99", "bootstrap-components.yaml")},
		},
		OverridesFolder: filepath.Join(root, "overrides"),
	}
	if diff := cmp.Diff(want, readConfig(t, cfgFile)); diff != "" {
		t.Errorf("config.yaml (-want +got):\n%s", diff)
	}
	if want := "clusterctl init --bootstrap test:v0.2.99 --infrastructure example:v0.1.99 --config " + cfgFile; res.Init != want {
		t.Errorf("init line\n got %s\nwant %s", res.Init, want)
	}
	for _, p := range res.Providers {
		if p.VersionFrom != "nextVersion of "+p.Label {
			t.Errorf("%s version from %s, want its nextVersion", p.Label, p.VersionFrom)
		}
	}
	rep := verifyConfig(t, want)
	if len(rep.Providers) != 2 {
		t.Errorf("read %d providers", len(rep.Providers))
	}
}

func TestDev_SettingsErrorsNameTheEntry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings string
		want     []string
	}{
		{"unknown provider", `{"providers": ["infrastructure-nowhere"], "provider_repos": []}`,
			[]string{"providers[0]", "infrastructure-nowhere", "provider_repos"}},
		{"missing repo", `{"providers": ["infrastructure-x"], "provider_repos": ["../missing"]}`,
			[]string{"provider_repos[0]", "../missing", "not a folder"}},
		{"cluster-api outside a checkout", `{"providers": ["cluster-api"]}`,
			[]string{"providers[0]", "cluster-api", "core/config/default"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testtree.Write(t, map[string]string{"clusterctl-settings.json": tc.settings})
			root := filepath.Join(t.TempDir(), "dev")
			_, err := Dev(context.Background(), DevOptions{Dir: dir, Root: root})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append(tc.want, "clusterctl-settings.json") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if _, err := os.Stat(root); err == nil {
				t.Errorf("dev repository written despite the error: %v", testtree.Names(t, root))
			}
		})
	}
}

func TestDev_UncoveredVersionWritesNothing(t *testing.T) {
	root := filepath.Join(t.TempDir(), "dev")
	_, err := Dev(context.Background(), DevOptions{Dir: devExampleDir, Root: root, Version: "v0.3.0"})
	if err == nil || !strings.Contains(err.Error(), "minor: 3") {
		t.Fatalf("err = %v, want the missing release series line", err)
	}
	if _, err := os.Stat(filepath.Join(root, "infrastructure-example")); err == nil {
		t.Errorf("provider folder written despite the failed build")
	}
}

// TestDev_RerunRendersOnlyWhenAnInputChanged edits each kind of input the
// example's renders read and checks the next run renders again and
// replaces the dev version in place, while an unchanged tree is not
// rendered.
func TestDev_RerunRendersOnlyWhenAnInputChanged(t *testing.T) {
	ctx := context.Background()
	tree := testtree.CopyTree(t, devExampleDir)
	testtree.WriteInto(t, tree, map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-example\n  nextVersion: v0.1.99\n"})
	root := filepath.Join(t.TempDir(), "dev")
	opts := DevOptions{Dir: tree, Root: root, BuildID: "test"}
	run := func() DevProvider {
		t.Helper()
		res, err := Dev(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		return res.Providers[0]
	}
	if p := run(); p.Cached {
		t.Fatal("first run was served from the cache")
	}
	if p := run(); !p.Cached || p.Written {
		t.Fatalf("unchanged re-run: cached=%v written=%v, want a cache hit", p.Cached, p.Written)
	}
	out := filepath.Join(root, "infrastructure-example", "v0.1.99")
	edit := func(rel, old, new string) {
		t.Helper()
		p := filepath.Join(tree, filepath.FromSlash(rel))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		if old == "" {
			s += new
		} else if s = strings.Replace(s, old, new, 1); s == string(data) {
			t.Fatalf("%s has no %q", rel, old)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, file, old, new string
		// outFile, if set, must contain marker after the run.
		outFile, marker string
	}{
		{"CRD base", "config/crd/bases/infrastructure.cluster.x-k8s.io_exampleclusters.yaml", "", "# crd edit\n", "", ""},
		{"patch", "config/default/manager_webhook_patch.yaml", "", "# patch edit\n", "", ""},
		{"kustomization", "config/default/kustomization.yaml", "", "commonAnnotations:\n  capirepo.test/edit: kustomization\n", "infrastructure-components.yaml", "capirepo.test/edit: kustomization"},
		{"template", "templates/cluster-template-topology.yaml", "", "# template edit\n", "cluster-template-topology.yaml", "# template edit"},
		{"flavor kustomization", "templates/flavors/ha/kustomization.yaml", "", "commonAnnotations:\n  capirepo.test/edit: flavor\n", "cluster-template-ha.yaml", "capirepo.test/edit: flavor"},
		{"metadata", "metadata.yaml", "", "# metadata edit\n", "metadata.yaml", "# metadata edit"},
		{"config file", "capirepo.yaml", "  nextVersion: v0.1.99\n", "  nextVersion: v0.1.99\n  patches:\n  - {patch: '{\"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\", \"metadata\": {\"name\": \"any\", \"annotations\": {\"capirepo.test/edit\": \"config\"}}}', target: {kind: Deployment}}\n", "infrastructure-components.yaml", "capirepo.test/edit: config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edit(tc.file, tc.old, tc.new)
			if p := run(); p.Cached {
				t.Fatalf("edit of %s was not picked up", tc.file)
			}
			if tc.outFile != "" {
				data, err := os.ReadFile(filepath.Join(out, tc.outFile))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(data), tc.marker) {
					t.Errorf("%s does not hold %q after the edit", tc.outFile, tc.marker)
				}
			}
			if p := run(); !p.Cached {
				t.Errorf("second run after the edit rendered again")
			}
			if testtree.HasLeftover(t, filepath.Dir(out)) {
				t.Errorf("leftovers: %v", testtree.Names(t, filepath.Dir(out)))
			}
		})
	}
	t.Run("new capirepo build", func(t *testing.T) {
		opts.BuildID = "other"
		if p := run(); p.Cached {
			t.Error("another capirepo build reused the cache")
		}
	})
	t.Run("dev folder tampered with", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(out, "metadata.yaml"), []byte("tampered\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if p := run(); p.Cached || !p.Written {
			t.Errorf("tampered folder not rewritten: %+v", p)
		}
		if _, err := os.Stat(out); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("files outside the inputs", func(t *testing.T) {
		testtree.WriteInto(t, tree, map[string]string{".git/HEAD": "ref\n", "dist/x/v1/y.yaml": "x", "bin/manager": "x"})
		if p := run(); !p.Cached {
			t.Error(".git, dist and bin changes caused a render")
		}
	})
}

// TestDev_AssetABeforeCommandBuildsIsNeverStale: a release asset a before:
// command builds into the tree's build output (BringYourOwnHost's host agent
// in bin/, Sidero's checksum files in _out/: git-ignored, never committed),
// published by templates.files, is an input of the dev build although the
// tree's hash skips those folders: a run after the command built another
// asset publishes the new one, and an unchanged asset is still a cache hit.
func TestDev_AssetABeforeCommandBuildsIsNeverStale(t *testing.T) {
	tree := testtree.CopyTree(t, devExampleDir)
	// What the command builds from lies outside the tree (as a build's
	// stamp, or a dependency in the module cache): only the built asset
	// changes in the tree.
	src := t.TempDir()
	testtree.WriteInto(t, src, map[string]string{"agent": "agent 1\n", "sums": "sums 1\n"})
	testtree.WriteInto(t, tree, map[string]string{
		".gitignore": "bin/\n_out/\n",
		"capirepo.yaml": fmt.Sprintf(`before:
- mkdir -p bin _out && cp %s bin/byoh-hostagent-linux-amd64 && cp %s _out/sha256sum.txt
providers:
- name: infrastructure-example
  nextVersion: v0.1.99
  templates:
    dir: templates
    files:
      byoh-hostagent-linux-amd64: bin/byoh-hostagent-linux-amd64
      sha256sum.txt: _out/sha256sum.txt
`, filepath.Join(src, "agent"), filepath.Join(src, "sums")),
	})
	root := filepath.Join(t.TempDir(), "dev")
	out := filepath.Join(root, "infrastructure-example", "v0.1.99")
	run := func(want map[string]string) DevProvider {
		t.Helper()
		res, err := Dev(context.Background(), DevOptions{Dir: tree, Root: root, BuildID: "test"})
		if err != nil {
			t.Fatal(err)
		}
		for name, content := range want {
			data, err := os.ReadFile(filepath.Join(out, name))
			if err != nil || string(data) != content {
				t.Errorf("%s = %q, %v; want %q, what the before: command built", name, data, err, content)
			}
		}
		return res.Providers[0]
	}
	run(map[string]string{"byoh-hostagent-linux-amd64": "agent 1\n", "sha256sum.txt": "sums 1\n"})
	if p := run(nil); !p.Cached {
		t.Errorf("unchanged assets: not a cache hit")
	}
	testtree.WriteInto(t, src, map[string]string{"agent": "agent 2\n"})
	if p := run(map[string]string{"byoh-hostagent-linux-amd64": "agent 2\n", "sha256sum.txt": "sums 1\n"}); p.Cached {
		t.Errorf("the agent the before: command built again was taken from the cache")
	}
	testtree.WriteInto(t, src, map[string]string{"sums": "sums 2\n"})
	if p := run(map[string]string{"sha256sum.txt": "sums 2\n"}); p.Cached {
		t.Errorf("the checksum file the before: command wrote again was taken from the cache")
	}
}

var clusterAPIDir = testtree.ClusterAPIDir()

// TestDev_ClusterAPICheckoutWithProviderRepo is the create-local-repository.py
// setup: a top-level settings file in a cluster-api checkout that builds
// cluster-api's own providers and one from provider_repos.
func TestDev_ClusterAPICheckoutWithProviderRepo(t *testing.T) {
	if testing.Short() {
		t.Skip("renders cluster-api")
	}
	if _, err := os.Stat(clusterAPIDir); err != nil {
		t.Skipf("no cluster-api checkout: %v", err)
	}
	example := testtree.CopyTree(t, devExampleDir)
	testtree.WriteInto(t, example, map[string]string{
		"clusterctl-settings.json": `{"name": "infrastructure-example", "config": {"componentsFile": "infrastructure-components.yaml", "nextVersion": "v0.1.99"}}`,
	})
	settings := filepath.Join(t.TempDir(), "clusterctl-settings.json")
	testtree.WriteInto(t, filepath.Dir(settings), map[string]string{"clusterctl-settings.json": `{
  "providers": ["cluster-api", "bootstrap-kubeadm", "control-plane-kubeadm", "infrastructure-example"],
  "provider_repos": ["` + example + `"]}`})
	root := filepath.Join(t.TempDir(), "dev")
	res, err := Dev(context.Background(), DevOptions{Dir: clusterAPIDir, ConfigPath: settings, Root: root, BuildID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(root, "config.yaml")
	want := "clusterctl init --core cluster-api:v1.14.99 --bootstrap kubeadm:v1.14.99 --control-plane kubeadm:v1.14.99 --infrastructure example:v0.1.99 --config " + cfgFile
	if res.Init != want {
		t.Errorf("init line\n got %s\nwant %s", res.Init, want)
	}
	c := readConfig(t, cfgFile)
	var got []string
	for _, p := range c.Providers {
		got = append(got, p.Type+" "+p.Name+" "+strings.TrimPrefix(p.URL, "file://"+root))
	}
	wantProviders := []string{
		"CoreProvider cluster-api /cluster-api/v1.14.99/core-components.yaml",
		"BootstrapProvider kubeadm /bootstrap-kubeadm/v1.14.99/bootstrap-components.yaml",
		"ControlPlaneProvider kubeadm /control-plane-kubeadm/v1.14.99/control-plane-components.yaml",
		"InfrastructureProvider example /infrastructure-example/v0.1.99/infrastructure-components.yaml",
	}
	if diff := cmp.Diff(wantProviders, got); diff != "" {
		t.Errorf("config.yaml providers (-want +got):\n%s", diff)
	}
	c.Providers = c.Providers[:1] // core components read back; the rest share the path
	verifyConfig(t, c)
}

func benchDev(b *testing.B, rerun bool) {
	tree := testtree.CopyTree(b, devExampleDir)
	base := b.TempDir()
	ctx := context.Background()
	opts := DevOptions{Dir: tree, Root: filepath.Join(base, "dev"), BuildID: "bench"}
	if _, err := Dev(ctx, opts); err != nil { // warm up the builder and, for rerun, the cache
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		if !rerun {
			i++
			opts.Root = filepath.Join(base, fmt.Sprint("dev", i))
		}
		res, err := Dev(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		if res.Providers[0].Cached != rerun {
			b.Fatalf("cached = %v", res.Providers[0].Cached)
		}
	}
}

// BenchmarkDev_Cold renders the example into a fresh dev repository.
func BenchmarkDev_Cold(b *testing.B) { benchDev(b, false) }

// BenchmarkDev_Rerun re-runs over an unchanged example.
func BenchmarkDev_Rerun(b *testing.B) { benchDev(b, true) }

// copyInto copies the folder src (read-only module cache files) to dst.
func copyInto(t testing.TB, src, dst string) {
	t.Helper()
	tmp := testtree.CopyTree(t, src)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}

// TestDev_ClusterAPIDeveloperSetupWithCAPD is cluster-api's developer setup
// as its docs show it: a clusterctl-settings.json at the checkout's root
// naming the core trio and CAPD, no provider_repos. The in-tree providers
// come from the built-in table as in create-local-repository.py, CAPD with
// its development components file and templates; the images the
// kustomizations name are kept (the developer loads them into kind).
func TestDev_ClusterAPIDeveloperSetupWithCAPD(t *testing.T) {
	if testing.Short() {
		t.Skip("renders cluster-api")
	}
	capi := testtree.ModuleDir(t, testtree.ClusterAPIModule)
	capd := filepath.Join(testtree.ModuleDir(t, testtree.CAPDModule), "infrastructure", "docker")
	checkout := t.TempDir()
	for _, d := range []string{"core/config", "bootstrap/kubeadm/config", "controlplane/kubeadm/config"} {
		copyInto(t, filepath.Join(capi, filepath.FromSlash(d)), filepath.Join(checkout, filepath.FromSlash(d)))
	}
	for _, d := range []string{"config", "templates"} {
		copyInto(t, filepath.Join(capd, d), filepath.Join(checkout, "test", "infrastructure", "docker", d))
	}
	md, err := os.ReadFile(filepath.Join(capi, "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	testtree.WriteInto(t, checkout, map[string]string{
		"metadata.yaml":            string(md),
		"clusterctl-settings.json": `{"providers": ["cluster-api", "bootstrap-kubeadm", "control-plane-kubeadm", "infrastructure-docker"]}`,
	})
	root := filepath.Join(t.TempDir(), "dev")
	res, err := Dev(context.Background(), DevOptions{Dir: checkout, Root: root, BuildID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(root, "config.yaml")
	want := "clusterctl init --core cluster-api:v1.14.99 --bootstrap kubeadm:v1.14.99 --control-plane kubeadm:v1.14.99 --infrastructure docker:v1.14.99 --config " + cfgFile
	if res.Init != want {
		t.Errorf("init line\n got %s\nwant %s", res.Init, want)
	}
	dir := filepath.Join(root, "infrastructure-docker", "v1.14.99")
	got := testtree.Names(t, dir)
	for _, f := range []string{"infrastructure-components-development.yaml", "metadata.yaml", "cluster-template-development.yaml", "clusterclass-quick-start.yaml"} {
		if !slices.Contains(got, f) {
			t.Errorf("%s lacks %s: %v", dir, f, got)
		}
	}
	for label, image := range map[string]string{
		"cluster-api/v1.14.99/core-components.yaml":                                 "image: gcr.io/k8s-staging-cluster-api/cluster-api-controller:main",
		"infrastructure-docker/v1.14.99/infrastructure-components-development.yaml": "image: gcr.io/k8s-staging-cluster-api/capd-manager:main",
	} {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(label)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), image) {
			t.Errorf("%s: the image the kustomization names (%s) was not kept", label, image)
		}
		if strings.Contains(string(data), ":v1.14.99") {
			t.Errorf("%s: an image was set to the dev version, which no registry holds", label)
		}
	}
	c := readConfig(t, cfgFile)
	c.Providers = c.Providers[3:] // CAPD: components, flavors and clusterclasses read back
	rep := verifyConfig(t, c)
	if n := len(rep.Providers[0].Flavors); n < 3 {
		t.Errorf("clusterctl read %d CAPD flavors", n)
	}
}

// TestDev_GateRefusesWhatClusterctlCannotReadOnly: a dev build goes through
// the lint too: an error clusterctl would fail on (a topology class with no
// clusterclass file) stops it and writes nothing; the :dev image a developer
// loads into kind (a floating tag) does not.
func TestDev_GateRefusesWhatClusterctlCannotReadOnly(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"config/manager/manager.yaml": strings.Replace(testtree.Minimal(nil)["config/manager/manager.yaml"], "registry.example.com/test/manager:dev", "registry.example.com/test/manager:latest", 1),
	}))
	root := filepath.Join(t.TempDir(), "dev")
	if _, err := Dev(context.Background(), DevOptions{Dir: dir, Root: root, Version: "v1.2.3"}); err != nil {
		t.Fatalf("a floating dev image stopped the dev build: %v", err)
	}
	testtree.WriteInto(t, dir, map[string]string{
		"templates/cluster-template.yaml": "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\nspec:\n  topology:\n    classRef:\n      name: quick\n",
	})
	root = filepath.Join(t.TempDir(), "dev")
	_, err := Dev(context.Background(), DevOptions{Dir: dir, Root: root, Version: "v1.2.3"})
	if err == nil || !strings.Contains(err.Error(), "CAPI504") || !strings.Contains(err.Error(), "clusterclass-quick.yaml") {
		t.Fatalf("err = %v, want CAPI504", err)
	}
	if _, err := os.Stat(filepath.Join(root, "infrastructure-test")); err == nil {
		t.Errorf("provider folder written despite the refusal")
	}
}

// TestDev_WarningsSayWhatTheyAreAndOutliveTheCache: an error a release
// would stop on is said as a warning of the dev build (not "[CAPI205
// error]"), and a re-run that reuses the folder says it again.
func TestDev_WarningsSayWhatTheyAreAndOutliveTheCache(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(nil)) // the :dev image: a floating tag
	root := filepath.Join(t.TempDir(), "dev")
	var warnings [][]string
	for run := range 2 {
		res, err := Dev(context.Background(), DevOptions{Dir: dir, Root: root, Version: "v1.2.3"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Providers[0].Cached != (run == 1) {
			t.Fatalf("run %d: cached = %v", run, res.Providers[0].Cached)
		}
		warnings = append(warnings, res.Warnings)
	}
	want := `infrastructure-test/v1.2.3/infrastructure-components.yaml: Deployment/test-system/test-controller-manager: spec.template.spec.containers[0].image: image "registry.example.com/test/manager:dev" uses a floating tag (dev): tag it with the release version or pin a digest (CAPI205: an error in a release, which dev builds anyway)`
	if !slices.Contains(warnings[0], want) {
		t.Errorf("warnings %q, want %q", warnings[0], want)
	}
	if diff := cmp.Diff(warnings[0], warnings[1]); diff != "" {
		t.Errorf("the cached re-run's warnings differ (-first +cached):\n%s", diff)
	}
}

// TestDev_SaysWhichNextVersionWins: a tree with a capirepo.yaml and a
// clusterctl-settings.json reads only capirepo.yaml; a nextVersion in the
// settings that is not built is named, with the file that wins.
func TestDev_SaysWhichNextVersionWins(t *testing.T) {
	files := testtree.Minimal(map[string]string{
		"capirepo.yaml":            "providers:\n- name: infrastructure-test\n  nextVersion: v1.2.7\n",
		"clusterctl-settings.json": `{"name": "infrastructure-test", "config": {"nextVersion": "v1.2.5"}}`,
	})
	dir := testtree.Write(t, files)
	res, err := Dev(context.Background(), DevOptions{Dir: dir, Root: filepath.Join(t.TempDir(), "dev")})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "clusterctl-settings.json") + ": nextVersion v1.2.5 is not used: " + filepath.Join(dir, "capirepo.yaml") + " is the config capirepo reads, and wins (building v1.2.7)"
	if res.Providers[0].Version != "v1.2.7" || !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("version %s, warnings %q; want v1.2.7 and %q", res.Providers[0].Version, res.Warnings, want)
	}
	// The same nextVersion in both, or --version: nothing to say.
	files["clusterctl-settings.json"] = `{"name": "infrastructure-test", "config": {"nextVersion": "v1.2.7"}}`
	for _, o := range []DevOptions{{Dir: testtree.Write(t, files)}, {Dir: dir, Version: "v1.2.9"}} {
		o.Root = filepath.Join(t.TempDir(), "dev")
		res, err := Dev(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "is not used") }) {
			t.Errorf("warnings %q", res.Warnings)
		}
	}
}

// TestDev_ConfigOutIsRewrittenOnlyWhenItChanges: --config-out gets the
// same clusterctl config as the dev repository's config.yaml and the init
// line names it; a run with the same result (what --watch repeats) leaves
// the file alone, a run with another version rewrites it.
func TestDev_ConfigOutIsRewrittenOnlyWhenItChanges(t *testing.T) {
	root := filepath.Join(t.TempDir(), "dev-repository")
	out := filepath.Join(t.TempDir(), "clusterctl.yaml")
	opts := DevOptions{Dir: devExampleDir, Root: root, BuildID: "test", ConfigOut: out}
	res, err := Dev(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.ConfigOut != out || !res.ConfigOutWritten {
		t.Errorf("config out %q, written %v", res.ConfigOut, res.ConfigOutWritten)
	}
	if diff := cmp.Diff(readConfig(t, filepath.Join(root, "config.yaml")), readConfig(t, out)); diff != "" {
		t.Errorf("--config-out differs from config.yaml (-want +got):\n%s", diff)
	}
	if want := "clusterctl init --infrastructure example:v0.1.99 --config " + out; res.Init != want {
		t.Errorf("init line\n got %s\nwant %s", res.Init, want)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(out, old, old); err != nil {
		t.Fatal(err)
	}
	res, err = Dev(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(out); err != nil || res.ConfigOutWritten || !fi.ModTime().Equal(old) {
		t.Errorf("unchanged run rewrote --config-out: written %v, %v", res.ConfigOutWritten, err)
	}
	opts.Version = "v0.1.98"
	if res, err = Dev(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if c := readConfig(t, out); !res.ConfigOutWritten || len(c.Providers) != 1 || !strings.Contains(c.Providers[0].URL, "/v0.1.98/") {
		t.Errorf("changed run: written %v, config %+v", res.ConfigOutWritten, c)
	}
}

// TestDev_RenderCacheWritesWhatAFreshRunWrites: runs of one process that
// share a render cache (dev --watch) write, after each edit, the dev
// repository a run without the cache writes, warnings included.
func TestDev_RenderCacheWritesWhatAFreshRunWrites(t *testing.T) {
	tree := testtree.CopyTree(t, devExampleDir)
	cache := builder.NewRenderCache()
	edits := []struct{ file, from, to string }{
		{"templates/cluster-template.yaml", "192.168.0.0/16", "10.244.0.0/16"},
		{"templates/flavors/base/cluster.yaml", "${CLUSTER_NAME}", "${CLUSTER_NAME}-x"},
		{"config/manager/manager.yaml", "--leader-elect", "--leader-elect=true"},
	}
	for i := -1; i < len(edits); i++ {
		if i >= 0 {
			e := edits[i]
			p := filepath.Join(tree, filepath.FromSlash(e.file))
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), e.from) {
				t.Fatalf("%s has no %q to edit", e.file, e.from)
			}
			if err := os.WriteFile(p, []byte(strings.Replace(string(data), e.from, e.to, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cached := filepath.Join(t.TempDir(), "cached")
		fresh := filepath.Join(t.TempDir(), "fresh")
		got, err := Dev(context.Background(), DevOptions{Dir: tree, Root: cached, BuildID: "test", RenderCache: cache})
		if err != nil {
			t.Fatal(err)
		}
		want, err := Dev(context.Background(), DevOptions{Dir: tree, Root: fresh, BuildID: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.Warnings, got.Warnings); diff != "" {
			t.Errorf("after edit %d: warnings (-fresh +cached):\n%s", i+1, diff)
		}
		folder := filepath.Join(got.Providers[0].Label, got.Providers[0].Version)
		wantFiles, gotFiles := testtree.ReadDir(t, filepath.Join(fresh, folder)), testtree.ReadDir(t, filepath.Join(cached, folder))
		if len(wantFiles) == 0 {
			t.Fatal("the fresh run wrote nothing")
		}
		if diff := cmp.Diff(wantFiles, gotFiles); diff != "" {
			t.Errorf("after edit %d: dev repository (-fresh +cached):\n%s", i+1, diff)
		}
	}
}

// gitTree makes dir a git repository with one commit of its files and the
// tags, as a provider's checkout is after a release.
func gitTree(t *testing.T, dir string, tags ...string) string {
	t.Helper()
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	run("add", "-A")
	run("commit", "-q", "-m", "release")
	for _, tag := range tags {
		run("tag", "-a", "-m", tag, tag)
	}
	return run("rev-parse", "HEAD")
}

// TestNextVersion_AlreadyTaggedIsSaid: dev and lint of a tree whose
// nextVersion (clusterctl-settings.json) is a tag of its git repository
// say so, naming the tag and its commit; an untagged nextVersion, and
// --version, say nothing.
func TestNextVersion_AlreadyTaggedIsSaid(t *testing.T) {
	files := testtree.Minimal(map[string]string{
		"clusterctl-settings.json": `{"name": "infrastructure-test", "config": {"nextVersion": "v1.2.5"}}`,
	})
	tagged := testtree.Write(t, files)
	commit := gitTree(t, tagged, "v1.2.4", "v1.2.5")
	untagged := testtree.Write(t, files)
	gitTree(t, untagged, "v1.2.4")
	want := tagged + ": the next version v1.2.5 (nextVersion of infrastructure-test) is already released: git tag v1.2.5 (commit " + commit[:12] + ") is in the tree's repository"
	said := func(warnings []string) bool {
		return slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, want) })
	}

	res, err := Dev(context.Background(), DevOptions{Dir: tagged, Root: filepath.Join(t.TempDir(), "dev")})
	if err != nil {
		t.Fatal(err)
	}
	if !said(res.Warnings) {
		t.Errorf("dev warnings %q, want %q", res.Warnings, want)
	}
	var log strings.Builder
	if _, err := LintPath(context.Background(), LintPathOptions{Path: tagged, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "warning: "+want) {
		t.Errorf("lint log:\n%s\nwant %q", log.String(), want)
	}

	for _, o := range []DevOptions{{Dir: untagged}, {Dir: tagged, Version: "v1.2.6"}} {
		o.Root = filepath.Join(t.TempDir(), "dev")
		res, err := Dev(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "already released") }) {
			t.Errorf("%+v: warnings %q", o, res.Warnings)
		}
	}
	log.Reset()
	if _, err := LintPath(context.Background(), LintPathOptions{Path: untagged, Log: &log}); err != nil || strings.Contains(log.String(), "already released") {
		t.Errorf("lint of the untagged tree: %v\n%s", err, log.String())
	}
}

// TestDevWatch_AsksGitForTheNextVersionOnce: the runs of one watch share
// what git said of the next version (one git process per provider and
// version, not one per save), so a tag made during the watch is seen at the
// next start; a run without the watch's memo asks again.
func TestDevWatch_AsksGitForTheNextVersionOnce(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"clusterctl-settings.json": `{"name": "infrastructure-test", "config": {"nextVersion": "v1.2.5"}}`,
	}))
	gitTree(t, dir, "v1.2.4")
	tagged := func(o DevOptions) bool {
		t.Helper()
		o.Dir, o.Root = dir, filepath.Join(t.TempDir(), "dev")
		res, err := Dev(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "already released") })
	}
	watch := DevOptions{tags: &tagMemo{}}
	if tagged(watch) {
		t.Fatal("v1.2.5 said released before it is tagged")
	}
	if out, err := exec.Command("git", "-C", dir, "-c", "tag.gpgsign=false", "tag", "v1.2.5").CombinedOutput(); err != nil {
		t.Fatalf("git tag: %v\n%s", err, out)
	}
	if tagged(watch) {
		t.Error("the watch asked git again on the next run")
	}
	if !tagged(DevOptions{}) {
		t.Error("a run of its own does not see the new tag")
	}
}
