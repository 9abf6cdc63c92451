package contract_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/release"
)

func TestLintFiles(t *testing.T) {
	cases := []struct {
		name  string
		files func(t *testing.T, fs files) []release.File
		opts  contract.Options
		want  []key
	}{
		{"a good components file alone has no findings, and no metadata.yaml is not missed", func(t *testing.T, fs files) []release.File {
			return []release.File{{Name: comps, Data: []byte(fs[comps])}}
		}, contract.Options{}, []key{}},
		{"the provider type comes from the objects' labels, so contract kinds are checked", func(t *testing.T, fs files) []release.File {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachines."+group, func(m map[string]any) bool {
				set(t, m, "Cluster", "spec", "scope")
				return true
			})
			return []release.File{{Name: comps, Data: []byte(fs[comps])}}
		}, contract.Options{}, []key{{"CAPI301", E, comps, crd("foomachines"), "spec.scope"}}},
		{"a file of another name is recognised as components by its content", func(t *testing.T, fs files) []release.File {
			fs.replace(t, comps, "- name: manager", "- name: controller")
			return []release.File{{Name: "out.yaml", Data: []byte(fs[comps])}}
		}, contract.Options{}, []key{{"CAPI204", E, "out.yaml", "Deployment/foo-system/foo-controller-manager", "spec.template.spec.containers"}}},
		{"the version option checks the manager tag", func(t *testing.T, fs files) []release.File {
			return []release.File{{Name: comps, Data: []byte(fs[comps])}}
		}, contract.Options{Version: "v0.2.0"}, []key{{"CAPI206", E, comps, "Deployment/foo-system/foo-controller-manager", "spec.template.spec.containers[0].image"}}},
		{"the provider option checks the components file name", func(t *testing.T, fs files) []release.File {
			return []release.File{{Name: "foo-components.yaml", Data: []byte(fs[comps])}}
		}, contract.Options{Provider: label}, []key{{"CAPI106", W, "foo-components.yaml", "", ""}}},
		{"metadata.yaml alone is checked against the version option", func(t *testing.T, fs files) []release.File {
			return []release.File{{Name: meta, Data: []byte(fs[meta])}}
		}, contract.Options{Version: "v0.2.0"}, []key{{"CAPI105", E, meta, "Metadata", "releaseSeries"}}},
		{"a topology template alone does not miss its ClusterClass file", func(t *testing.T, fs files) []release.File {
			return []release.File{{Name: topo, Data: []byte(fs[topo])}}
		}, contract.Options{}, []key{}},
		{"a topology template with other ClusterClass files misses its own", func(t *testing.T, fs files) []release.File {
			fs.rename(t, ccFile, "clusterclass-fast.yaml")
			return []release.File{{Name: topo, Data: []byte(fs[topo])}, {Name: "clusterclass-fast.yaml", Data: []byte(fs["clusterclass-fast.yaml"])}}
		}, contract.Options{}, []key{
			{"CAPI504", E, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name"},
			{"CAPI604", W, "clusterclass-fast.yaml", "ClusterClass/quick", "metadata.name"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := readDir(t, "testdata/release")
			r := contract.LintFiles(c.files(t, fs), c.opts)
			want := c.want
			sortKeys(want)
			if diff := cmp.Diff(want, keys(r.Findings, "")); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nreport:\n%s", diff, text(r))
			}
		})
	}
}
