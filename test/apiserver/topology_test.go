package apiserver

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/values"
)

// Issue 44 item 5: a topology flavor whose ClusterClass the release ships
// only as a flavor of its own is checked as its users apply it: after that
// flavor (first in the report, named in the flavor's After), its topology
// Cluster's variables judged against that flavor's class. The release
// passes.
func TestInstall_TopologyFlavorAfterItsClassFlavor(t *testing.T) {
	cfg := managementCluster(t, true)
	ctx := context.Background()

	// cluster-api-provider-nutanix's shape: cluster-template-clusterclass.yaml
	// ships the class cluster-template-topology.yaml names literally.
	t.Run("a class shipped as a flavor of its own", func(t *testing.T) {
		rel := goodRelease(t)
		p := rel.Providers[0]
		class, _ := p.File("clusterclass-example-quick-start.yaml")
		if err := p.Add("cluster-template-clusterclass.yaml", class.Data); err != nil {
			t.Fatal(err)
		}
		p.Files = slices.DeleteFunc(p.Files, func(f release.File) bool { return f.Name == "clusterclass-example-quick-start.yaml" })
		rep, err := install.Check(ctx, rel, install.Options{Config: cfg})
		if err != nil {
			t.Fatalf("%v\n%s", err, report(rep))
		}
		var order []string
		for _, f := range rep.Files {
			if strings.HasPrefix(f.File, "cluster-template") {
				order = append(order, f.File)
			}
		}
		if diff := cmp.Diff([]string{"cluster-template-clusterclass.yaml", "cluster-template.yaml", "cluster-template-topology.yaml"}, order); diff != "" {
			t.Errorf("flavors checked in the order (-want +got):\n%s", diff)
		}
		topo := file(t, rep, "infrastructure-example/v0.1.0/cluster-template-topology.yaml")
		if diff := cmp.Diff([]string{"cluster-template-clusterclass.yaml"}, topo.After); diff != "" {
			t.Errorf("topology after (-want +got):\n%s", diff)
		}
		if topo.Accepted == 0 || len(topo.NotChecked) > 0 || rep.NotCheckedCount() > 0 {
			t.Errorf("topology: %d accepted, not checked %v; %d not checked in all", topo.Accepted, topo.NotChecked, rep.NotCheckedCount())
		}
		if !strings.Contains(report(rep), "after       cluster-template-clusterclass.yaml: they ship the ClusterClass its topology names") {
			t.Errorf("the report does not say the flavor was checked after its class flavor:\n%s", report(rep))
		}
	})

	// cluster-api-provider-gcp: three class flavors ship a class named
	// ${CLUSTER_CLASS_NAME}; the topology flavor's variables are judged
	// against the class of the flavor its name pairs it with, so a value its
	// schema rejects is refused (before, three classes of one name: none
	// was judged), whether the class name is a stand-in or the user's (before,
	// a real name left the Cluster's variables unjudged).
	for name, real := range map[string]values.Real{
		"CAPG: variables judged against the paired class flavor's class":                 {},
		"CAPG: variables judged against the paired class flavor's class, named by --var": {Variables: map[string]string{"CLUSTER_CLASS_NAME": "my-class"}},
	} {
		t.Run(name, func(t *testing.T) { capgTopologyRefused(t, cfg, real) })
	}
}

// capgTopologyRefused checks CAPG's topology flavor with a region its
// class's schema rejects, with the real values given.
func capgTopologyRefused(t *testing.T, cfg *rest.Config, real values.Real) {
	t.Helper()
	ctx := context.Background()
	rel := buildtest.Clone(realRelease(t, testtree.CAPGModule, "capg.capirepo.yaml", "v1.13.1"))
	edit(t, rel, "infrastructure-gcp", "cluster-template-topology.yaml", "      - name: region\n        value: ${GCP_REGION}\n", "      - name: region\n        value: 5\n")
	rep, err := install.Check(ctx, rel, install.Options{Config: cfg, Values: real})
	if err == nil {
		t.Fatalf("no refusal:\n%s", report(rep))
	}
	topo := file(t, rep, "infrastructure-gcp/v1.13.1/cluster-template-topology.yaml")
	if diff := cmp.Diff([]string{"cluster-template-clusterclass.yaml"}, topo.After); diff != "" {
		t.Errorf("topology after (-want +got):\n%s", diff)
	}
	i := slices.IndexFunc(topo.Refused, func(r install.Refusal) bool {
		return r.Field == "spec.topology.variables[0].value" && strings.Contains(r.Message, `variable "region"`)
	})
	if i < 0 || len(topo.Refused) != 1 {
		t.Fatalf("refusals %v, want region's value alone\n%s", topo.Refused, report(rep))
	}
	for _, f := range rep.Files {
		if f != topo && len(f.Refused) > 0 {
			t.Errorf("%s refused: %v", f.Path(), f.Refused)
		}
	}
}
