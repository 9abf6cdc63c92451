package verify

import (
	"context"
	"slices"
	"testing"

	"github.com/capirepo/capirepo/builder/buildtest"

	"github.com/capirepo/capirepo/release"
)

// TestDir_BundledExampleVerifies builds examples/infrastructure-example,
// writes it as a dist folder and reads it back as clusterctl would.
func TestDir_BundledExampleVerifies(t *testing.T) {
	ctx := context.Background()
	res := buildtest.Build(t, "../examples/infrastructure-example", "v0.1.0")
	root := t.TempDir()
	if err := release.Write(root, res.Release); err != nil {
		t.Fatal(err)
	}
	rep, err := Dir(ctx, root, Options{})
	if err != nil {
		t.Fatalf("verify the example: %v", err)
	}
	if len(rep.Providers) != 1 {
		t.Fatalf("providers = %d, want 1", len(rep.Providers))
	}
	p := rep.Providers[0]
	if p.Label != "infrastructure-example" || p.Version != "v0.1.0" || p.ComponentsFile != "infrastructure-components.yaml" {
		t.Errorf("read %s %s %s", p.Label, p.Version, p.ComponentsFile)
	}
	if p.Contract != "v1beta2" && p.Contract != "v1beta1" {
		t.Errorf("contract = %q", p.Contract)
	}
	if p.Objects == 0 || len(p.Images) == 0 || p.Namespace == "" {
		t.Errorf("components: %d objects, images %v, namespace %q", p.Objects, p.Images, p.Namespace)
	}
	i := slices.IndexFunc(p.Variables, func(v Variable) bool { return v.Name == "EXAMPLE_B64ENCODED_CREDENTIALS" })
	if i < 0 || !p.Variables[i].Required || !p.Variables[i].Placeholder {
		t.Errorf("EXAMPLE_B64ENCODED_CREDENTIALS is not reported as a required variable given a placeholder: %+v", p.Variables)
	}
	flavors := map[string]*TemplateReport{}
	for _, f := range p.Flavors {
		flavors[f.Name] = f
	}
	for _, name := range []string{"", "machinepool", "ha", "topology"} {
		f, ok := flavors[name]
		if !ok {
			t.Errorf("flavor %q was not read; read %v", name, p.Flavors)
			continue
		}
		if f.Objects == 0 {
			t.Errorf("flavor %q has no objects", name)
		}
	}
	if f := flavors["topology"]; f != nil && !slices.Contains(f.ClusterClasses, Namespace+"/example-quick-start") {
		t.Errorf("topology flavor merged classes %v, want example-quick-start", f.ClusterClasses)
	}
	if !slices.ContainsFunc(p.ClusterClasses, func(c *TemplateReport) bool { return c.Name == "example-quick-start" }) {
		t.Errorf("clusterclass-example-quick-start.yaml was not read on its own: %v", p.ClusterClasses)
	}
}
