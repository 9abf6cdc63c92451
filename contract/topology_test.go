package contract_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/contract"
)

// Issue 44 item 5: a topology flavor whose class ships inside another
// flavor of its own, which its provider documents to apply first
// (cluster-api-provider-nutanix: cluster-template-clusterclass.yaml with
// ClusterClass nutanix-quick-start, cluster-template-topology.yaml naming
// it; cluster-api-provider-gcp: the same with ${CLUSTER_CLASS_NAME}), is a
// warning naming both flavors; a class the release ships nowhere, or only
// inline in the same flavor, stays an error.
func TestLint_TopologyFlavorNeedsTheClassFlavorFirst(t *testing.T) {
	const classFlavor = "cluster-template-clusterclass.yaml"
	cases := []struct {
		name string
		edit func(t *testing.T, fs files)
		want []key
		says []string
	}{
		{"the class ships as a flavor of its own (Nutanix's shape): a warning naming both", func(t *testing.T, fs files) {
			fs.rename(t, ccFile, classFlavor)
		}, []key{{"CAPI504", W, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name"}},
			[]string{`class "quick" has no clusterclass-quick.yaml in the release; flavor topology needs flavor clusterclass (cluster-template-clusterclass.yaml) applied first, which ships ClusterClass quick`}},
		{"the class named by the same variable in both flavors (CAPG's shape)", func(t *testing.T, fs files) {
			fs.rename(t, ccFile, classFlavor)
			fs.replace(t, classFlavor, "name: quick\n", "name: ${CLUSTER_CLASS_NAME}\n")
			fs.replace(t, topo, "name: quick", "name: ${CLUSTER_CLASS_NAME}")
		}, []key{{"CAPI505", W, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name"}},
			[]string{`flavor topology needs flavor clusterclass (cluster-template-clusterclass.yaml) applied first, which ships ClusterClass ${CLUSTER_CLASS_NAME}`}},
		{"the class ships inline and in a flavor of its own: the other flavor makes it work", func(t *testing.T, fs files) {
			fs[classFlavor] = fs[ccFile]
			delete(fs, ccFile)
			fs[topo] += "---\n" + fs[classFlavor]
		}, []key{{"CAPI504", W, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name"}},
			[]string{"needs flavor clusterclass (cluster-template-clusterclass.yaml) applied first"}},
		{"the class only inline in the same flavor (CAPA's shape): an error", func(t *testing.T, fs files) {
			fs[topo] += "---\n" + fs[ccFile]
			delete(fs, ccFile)
		}, []key{{"CAPI504", E, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name"}},
			[]string{"the template ships it inline"}},
		{"the class flavor ships another class: an error", func(t *testing.T, fs files) {
			fs.rename(t, ccFile, classFlavor)
			fs.replace(t, classFlavor, "name: quick\n", "name: other\n")
		}, []key{{"CAPI504", E, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name"}},
			[]string{`class "quick" has no clusterclass-quick.yaml in the release`}},
		{"a variable class the template ships inline, also shipped by a class flavor: a warning", func(t *testing.T, fs files) {
			fs.rename(t, ccFile, classFlavor)
			fs.replace(t, classFlavor, "name: quick\n", "name: ${CLUSTER_CLASS_NAME}\n")
			fs.replace(t, topo, "name: quick", "name: ${CLUSTER_CLASS_NAME}")
			fs[topo] += "---\n" + fs[classFlavor]
		}, []key{{"CAPI505", W, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name"}},
			[]string{"needs flavor clusterclass (cluster-template-clusterclass.yaml) applied first"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := readDir(t, "testdata/release")
			c.edit(t, fs)
			r := contract.Lint(fs.release(t, label, version), contract.Options{})
			got := []key{}
			for _, k := range keys(r.Findings, prefix) {
				if k.Rule == contract.RuleTemplateClass || k.Rule == contract.RuleClassVariable {
					got = append(got, k)
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Fatalf("findings (-want +got):\n%s\n%s", diff, text(r))
			}
			for _, s := range c.says {
				if !strings.Contains(text(r), s) {
					t.Errorf("report lacks %q:\n%s", s, text(r))
				}
			}
		})
	}
}
