package builder

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/capirepo/capirepo/internal/testtree"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

const (
	exampleTree = "../examples/infrastructure-example"
)

// clusterAPIDir is cluster-api v1.14.2 in the module cache.
var clusterAPIDir = testtree.ClusterAPIDir()

// TestBuild_ExampleGolden pins every rendered file of the bundled example.
// Refresh with: go test ./builder -run Golden -update
func TestBuild_ExampleGolden(t *testing.T) {
	res, err := Build(context.Background(), Options{Dir: exampleTree, Config: loadConfig(t, exampleTree), Version: "v0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "golden", "infrastructure-example")
	p := res.Release.Providers[0]
	if *update {
		if err := os.RemoveAll(golden); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(golden, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	entries, _ := os.ReadDir(golden)
	for _, e := range entries {
		want = append(want, e.Name())
	}
	var got []string
	for _, f := range p.Assets() {
		got = append(got, f.Name)
		path := filepath.Join(golden, f.Name)
		if *update {
			if err := os.WriteFile(path, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run with -update)", f.Name, err)
			continue
		}
		if diff := cmp.Diff(string(data), string(f.Data)); diff != "" {
			t.Errorf("%s differs from golden (-golden +got):\n%s", f.Name, diff)
		}
	}
	if !*update {
		if diff := cmp.Diff(sortedCopy(want), sortedCopy(got)); diff != "" {
			t.Errorf("file set differs from golden (-golden +got):\n%s", diff)
		}
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestBuild_EqualsKustomizeBuildExceptTransforms: the components hold the
// objects `kustomize build` gives for the same kustomization, in the same
// order; they differ only by the documented transforms: the provider label,
// the manager image and its pull policy.
func TestBuild_EqualsKustomizeBuildExceptTransforms(t *testing.T) {
	trees := map[string]struct{ dir, version string }{
		"example":     {exampleTree, "v0.1.0"},
		"cluster-api": {clusterAPIDir, "v1.14.2"},
	}
	for name, tree := range trees {
		dir := tree.dir
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(dir); err != nil {
				t.Skipf("%s: %v", dir, err)
			}
			res, err := Build(context.Background(), Options{Dir: dir, Config: loadConfig(t, dir), Version: tree.version})
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range res.Release.Providers {
				spec := res.Config.Providers[i]
				plain, err := Kustomize(filesys.MakeFsOnDisk(), filepath.Join(dir, spec.Kustomize))
				if err != nil {
					t.Fatal(err)
				}
				plainYAML, err := plain.AsYaml()
				if err != nil {
					t.Fatal(err)
				}
				want := normalise(t, plainYAML, p.Label())
				got := normalise(t, p.Components().Data, p.Label())
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: components differ from kustomize build beyond the documented transforms (-kustomize +capirepo):\n%s", p.Label(), diff)
				}
			}
		})
	}
}

// normalise removes the documented transforms: the provider label, and the
// manager container's image tag and pull policy.
func normalise(t *testing.T, data []byte, label string) []string {
	t.Helper()
	nodes, err := kio.FromBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range nodes {
		labels := n.GetLabels()
		if labels["cluster.x-k8s.io/provider"] == label {
			delete(labels, "cluster.x-k8s.io/provider")
			if err := n.SetLabels(labels); err != nil {
				t.Fatal(err)
			}
		}
		if n.GetKind() == "Deployment" {
			c, err := n.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[name=manager]"))
			if err == nil && c != nil {
				_ = c.PipeE(yaml.Clear("imagePullPolicy"))
				if img := c.Field("image"); img != nil {
					name, _, _ := splitImage(yaml.GetValue(img.Value))
					img.Value.YNode().Value = name
				}
			}
		}
		s, err := n.String()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
