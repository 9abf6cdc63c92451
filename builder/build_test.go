package builder

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/provider"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/capirepo/capirepo/internal/testtree"
)

func build(t *testing.T, dir string, opts Options) (*Result, error) {
	t.Helper()
	opts.Dir = dir
	if opts.Version == "" {
		opts.Version = "v1.2.3"
	}
	if opts.Config == nil {
		cfg, err := provider.LoadConfig(dir, "")
		if err != nil {
			return nil, err
		}
		opts.Config = cfg
	}
	return Build(context.Background(), opts)
}

// loadConfig loads the configuration of the tree in dir.
func loadConfig(tb testing.TB, dir string) *provider.Config {
	tb.Helper()
	cfg, err := provider.LoadConfig(dir, "")
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

func mustBuild(t *testing.T, dir string, opts Options) *Result {
	t.Helper()
	res, err := build(t, dir, opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return res
}

func objects(t *testing.T, data []byte) []*yaml.RNode {
	t.Helper()
	nodes, err := kio.FromBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

func find(t *testing.T, nodes []*yaml.RNode, kind, name string) *yaml.RNode {
	t.Helper()
	for _, n := range nodes {
		if n.GetKind() == kind && n.GetName() == name {
			return n
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}

func lookup(t *testing.T, n *yaml.RNode, path ...string) string {
	t.Helper()
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil {
		t.Fatalf("%s %s: no field %s", n.GetKind(), n.GetName(), strings.Join(path, "."))
	}
	return yaml.GetValue(v)
}

func TestBuild_MinimalProviderGetsReleaseTransforms(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		// A cluster-scoped object without the label gets it.
		"config/manager/kustomization.yaml": "resources:\n- manager.yaml\n- role.yaml\n",
		"config/manager/role.yaml":          "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\n",
	}))
	res := mustBuild(t, dir, Options{})
	if len(res.Release.Providers) != 1 {
		t.Fatalf("providers = %d", len(res.Release.Providers))
	}
	p := res.Release.Providers[0]
	if p.Label() != "infrastructure-test" || p.ComponentsFile != "infrastructure-components.yaml" || p.Version != "v1.2.3" {
		t.Errorf("provider = %s %s %s", p.Label(), p.ComponentsFile, p.Version)
	}
	objs := objects(t, p.Components().Data)
	if got := objs[0].GetKind(); got != "Namespace" {
		t.Errorf("first object is %s, want the Namespace first as kustomize build orders it", got)
	}
	for _, o := range objs {
		if got := o.GetLabels()["cluster.x-k8s.io/provider"]; got != "infrastructure-test" {
			t.Errorf("%s %s: provider label %q", o.GetKind(), o.GetName(), got)
		}
	}
	d := find(t, objs, "Deployment", "test-controller-manager")
	if got := lookup(t, d, "spec", "template", "spec", "containers", "[name=manager]", "image"); got != "registry.example.com/test/manager:v1.2.3" {
		t.Errorf("manager image = %s", got)
	}
	if c, _ := d.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[name=manager]", "imagePullPolicy")); c != nil {
		t.Errorf("pull policy set to %s without image.pullPolicy; the tree sets none", yaml.GetValue(c))
	}
	if got := lookup(t, d, "spec", "template", "spec", "containers", "[name=sidecar]", "image"); got != "registry.example.com/test/sidecar:1.0" {
		t.Errorf("sidecar image changed: %s", got)
	}
	def := "2"
	want := []Variable{{Name: "TEST_LOG_LEVEL", Default: &def}, {Name: "TEST_TOKEN", Required: true}}
	if diff := cmp.Diff(want, res.Providers[0].Variables); diff != "" {
		t.Errorf("variables (-want +got):\n%s", diff)
	}
	if res.Providers[0].Namespace != "test-system" {
		t.Errorf("namespace = %s", res.Providers[0].Namespace)
	}
	if _, ok := p.File("metadata.yaml"); !ok {
		t.Error("no metadata.yaml")
	}
}

func TestBuild_Image(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		image   string
		manager string
		sidecar string
	}{
		{name: "default keeps repository, tag = version", manager: "registry.example.com/test/manager:v1.2.3"},
		{name: "--image sets the repository", image: "ghcr.io/acme/mgr", manager: "ghcr.io/acme/mgr:v1.2.3"},
		{name: "config newName", config: "image: {newName: quay.io/acme/m}", manager: "quay.io/acme/m:v1.2.3"},
		{name: "config newTag", config: "image: {newTag: v9}", manager: "registry.example.com/test/manager:v9"},
		{name: "config digest", config: "image: {digest: 'sha256:" + strings.Repeat("a", 64) + "'}", manager: "registry.example.com/test/manager@sha256:" + strings.Repeat("a", 64)},
		{name: "config name selects another image", config: "image: {name: registry.example.com/test/sidecar, newName: r.io/side}", manager: "registry.example.com/test/manager:dev", sidecar: "r.io/side:v1.2.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := testtree.Minimal(nil)
			if tt.config != "" {
				files["capirepo.yaml"] = "providers:\n- name: infrastructure-test\n  " + tt.config + "\n"
			}
			res := mustBuild(t, testtree.Write(t, files), Options{Image: tt.image})
			d := find(t, objects(t, res.Release.Providers[0].Components().Data), "Deployment", "test-controller-manager")
			if got := lookup(t, d, "spec", "template", "spec", "containers", "[name=manager]", "image"); got != tt.manager {
				t.Errorf("manager image = %s, want %s", got, tt.manager)
			}
			sidecar := tt.sidecar
			if sidecar == "" {
				sidecar = "registry.example.com/test/sidecar:1.0"
			}
			if got := lookup(t, d, "spec", "template", "spec", "containers", "[name=sidecar]", "image"); got != sidecar {
				t.Errorf("sidecar image = %s, want %s", got, sidecar)
			}
		})
	}
}

func TestBuild_ProviderLabelEqualIsKept(t *testing.T) {
	files := testtree.Minimal(nil)
	res := mustBuild(t, testtree.Write(t, files), Options{})
	// The kustomization sets the label itself; the build keeps it and adds nothing else.
	d := find(t, objects(t, res.Release.Providers[0].Components().Data), "Deployment", "test-controller-manager")
	if got := lookup(t, d, "spec", "selector", "matchLabels", "cluster.x-k8s.io/provider"); got != "infrastructure-test" {
		t.Errorf("selector label = %s", got)
	}
}

// TestBuild_NothingWrittenUnderDir checks the tree is only read.
func TestBuild_NothingWrittenUnderDir(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"templates/cluster-template.yaml":        "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\n",
		"templates/flavors/x/kustomization.yaml": "resources:\n- c.yaml\n",
		"templates/flavors/x/c.yaml":             "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\n",
	}))
	// Read-only, as a checkout on a read-only mount would be.
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	before := snapshot(t, dir)
	res := mustBuild(t, dir, Options{})
	if got := res.Providers[0].Templates; !cmp.Equal(got, []string{"cluster-template-x.yaml", "cluster-template.yaml"}) {
		t.Errorf("templates = %v", got)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("tree changed (-before +after):\n%s", diff)
	}
}

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out[p] = info.ModTime().String() + info.Mode().String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
