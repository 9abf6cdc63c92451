package verify

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Issue 44 item 5: a topology flavor whose ClusterClass the release ships
// only as a flavor of its own (cluster-api-provider-nutanix's
// cluster-template-clusterclass.yaml beside cluster-template-topology.yaml,
// which its Makefile applies first) is read as clusterctl generates it once
// that flavor was applied: the class is in the management cluster, nothing
// is fetched. The release passes; the report names both flavors.
func TestDir_TopologyFlavorAfterItsClassFlavor(t *testing.T) {
	p := goodProvider(t)
	class, _ := p.File("clusterclass-example-quick-start.yaml")
	if err := p.Add("cluster-template-clusterclass.yaml", class.Data); err != nil {
		t.Fatal(err)
	}
	remove(p, "clusterclass-example-quick-start.yaml")
	rep, err := Dir(context.Background(), writeRelease(t, p), Options{})
	if err != nil {
		t.Fatalf("Dir: %v", err)
	}
	flavors := map[string]*TemplateReport{}
	for _, f := range rep.Providers[0].Flavors {
		flavors[f.Name] = f
	}
	topo := flavors["topology"]
	if topo == nil || flavors["clusterclass"] == nil {
		t.Fatalf("flavors read: %v", flavors)
	}
	want := []ClassFlavor{{Class: Namespace + "/example-quick-start", As: "example-quick-start", Flavors: []string{"clusterclass"}, Files: []string{"cluster-template-clusterclass.yaml"}}}
	if diff := cmp.Diff(want, topo.After); diff != "" {
		t.Errorf("topology after (-want +got):\n%s", diff)
	}
	if len(topo.ClusterClasses) > 0 || topo.Objects != 1 {
		t.Errorf("topology merged %v, %d objects; want nothing merged, the Cluster alone", topo.ClusterClasses, topo.Objects)
	}
	if n := flavors["clusterclass"].Objects; n != 3 {
		t.Errorf("flavor clusterclass: %d objects, want the class and its 2 templates", n)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"flavor topology: cluster-template-topology.yaml: 1 objects, 6 variables, after flavor clusterclass (ClusterClass " + Namespace + "/example-quick-start)",
		"    warning: flavor topology (cluster-template-topology.yaml) needs flavor clusterclass (cluster-template-clusterclass.yaml) applied first: the release ships ClusterClass example-quick-start only there, and clusterctl generate cluster fetches clusterclass-example-quick-start.yaml",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, b.String())
		}
	}
}
