package values

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/release"
)

// A ClusterClass of a class flavor and the topology Cluster of another, in
// the shapes real providers ship them (cluster-api-provider-nutanix: a
// literal class name; cluster-api-provider-gcp: ${CLUSTER_CLASS_NAME} in
// both, three class flavors beside three topology flavors).
func classDoc(name string) string {
	return "apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata:\n  name: " + name + "\nspec:\n  infrastructure:\n    ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: FooClusterTemplate, name: " + name + "}\n---\n" +
		"apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: FooClusterTemplate\nmetadata:\n  name: " + name + "\nspec:\n  template:\n    spec:\n      region: ${FOO_REGION}\n"
}

func topologyDoc(class string) string {
	return "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\nspec:\n  topology:\n    class: " + class + "\n    version: ${KUBERNETES_VERSION}\n    controlPlane:\n      replicas: ${CONTROL_PLANE_MACHINE_COUNT}\n"
}

func TestTopology_NeedsTheFlavorThatShipsTheClass(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		// flavor is the topology flavor asked about.
		flavor string
		want   []Need
	}{
		{"a literal class shipped as a flavor of its own (cluster-api-provider-nutanix)", map[string]string{
			"cluster-template-clusterclass.yaml": classDoc("nutanix-quick-start"),
			"cluster-template-topology.yaml":     topologyDoc("nutanix-quick-start"),
		}, "cluster-template-topology.yaml", []Need{{Class: "nutanix-quick-start", Files: []string{"cluster-template-clusterclass.yaml"}}}},
		{"a class named by the same variable in both, paired by the flavors' names (cluster-api-provider-gcp)", map[string]string{
			"cluster-template-clusterclass.yaml":               classDoc("${CLUSTER_CLASS_NAME}"),
			"cluster-template-gke-clusterclass.yaml":           classDoc("${CLUSTER_CLASS_NAME}"),
			"cluster-template-gke-autopilot-clusterclass.yaml": classDoc("${CLUSTER_CLASS_NAME}"),
			"cluster-template-topology.yaml":                   topologyDoc("${CLUSTER_CLASS_NAME}"),
			"cluster-template-gke-topology.yaml":               topologyDoc("${CLUSTER_CLASS_NAME}"),
			"cluster-template-gke-autopilot-topology.yaml":     topologyDoc("${CLUSTER_CLASS_NAME}"),
		}, "cluster-template-gke-topology.yaml", []Need{{Class: "${CLUSTER_CLASS_NAME}", Files: []string{"cluster-template-gke-clusterclass.yaml"}}}},
		{"no flavor named like the topology flavor: every flavor that ships the class", map[string]string{
			"cluster-template-classes-a.yaml":   classDoc("quick"),
			"cluster-template-classes-b.yaml":   classDoc("quick"),
			"cluster-template-md-topology.yaml": topologyDoc("quick"),
		}, "cluster-template-md-topology.yaml", []Need{{Class: "quick", Files: []string{"cluster-template-classes-a.yaml", "cluster-template-classes-b.yaml"}}}},
		{"a default names the class as the class flavor names it", map[string]string{
			"cluster-template-clusterclass.yaml": classDoc("quick"),
			"cluster-template-topology.yaml":     topologyDoc("${CLASS:=quick}"),
		}, "cluster-template-topology.yaml", []Need{{Class: "quick", Files: []string{"cluster-template-clusterclass.yaml"}}}},
		{"the release ships clusterclass-<class>.yaml: clusterctl fetches it, no need", map[string]string{
			"cluster-template-clusterclass.yaml": classDoc("quick"),
			"clusterclass-quick.yaml":            classDoc("quick"),
			"cluster-template-topology.yaml":     topologyDoc("quick"),
		}, "cluster-template-topology.yaml", nil},
		{"a clusterclass file named by the same variable (cluster-api-provider-vsphere): no need", map[string]string{
			"cluster-template-clusterclass.yaml": classDoc("${CLUSTER_CLASS_NAME}"),
			"clusterclass-template.yaml":         classDoc("${CLUSTER_CLASS_NAME}"),
			"cluster-template-topology.yaml":     topologyDoc("${CLUSTER_CLASS_NAME}"),
		}, "cluster-template-topology.yaml", nil},
		{"the class only inline in the same flavor (cluster-api-provider-aws): no need, the lint's error", map[string]string{
			"cluster-template-simple-clusterclass.yaml": classDoc("quick-start") + "---\n" + topologyDoc("quick-start"),
		}, "cluster-template-simple-clusterclass.yaml", nil},
		{"the flavor that ships it cannot be generated on its own either (its own Cluster names it inline)", map[string]string{
			"cluster-template-simple-clusterclass.yaml": classDoc("quick-start") + "---\n" + topologyDoc("quick-start"),
			"cluster-template-topology.yaml":            topologyDoc("quick-start"),
		}, "cluster-template-topology.yaml", nil},
		{"a class shipped nowhere", map[string]string{
			"cluster-template-clusterclass.yaml": classDoc("other"),
			"cluster-template-topology.yaml":     topologyDoc("quick"),
		}, "cluster-template-topology.yaml", nil},
		{"another variable names the class flavor's class", map[string]string{
			"cluster-template-clusterclass.yaml": classDoc("${CLASS_NAME}"),
			"cluster-template-topology.yaml":     topologyDoc("${CLUSTER_CLASS_NAME}"),
		}, "cluster-template-topology.yaml", nil},
		{"a class flavor that holds a fragment variable alone on its line still parses as written", map[string]string{
			"cluster-template-clusterclass.yaml": strings.Replace(classDoc("quick"), "      region: ${FOO_REGION}\n", "${EXTRA_SPEC}\n", 1),
			"cluster-template-topology.yaml":     topologyDoc("quick"),
		}, "cluster-template-topology.yaml", []Need{{Class: "quick", Files: []string{"cluster-template-clusterclass.yaml"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var files []release.File
			for name, data := range c.files {
				files = append(files, release.File{Name: name, Data: []byte(data)})
			}
			top := TopologyOf(files)
			if diff := cmp.Diff(c.want, top.Needs(c.flavor)); diff != "" {
				t.Errorf("needs of %s (-want +got):\n%s", c.flavor, diff)
			}
			for _, n := range c.want {
				for _, f := range n.Files {
					if !top.Needed(f) {
						t.Errorf("Needed(%s) is false", f)
					}
				}
				if _, ok := top.Need(c.flavor, n.Class); !ok {
					t.Errorf("Need(%s, %s) is false", c.flavor, n.Class)
				}
			}
			if top.Needed(c.flavor) {
				t.Errorf("Needed(%s) is true for the topology flavor", c.flavor)
			}
		})
	}
}

// A need's class as clusterctl names it with the session's values: the
// variable's value, or the name itself.
func TestNeed_Resolve(t *testing.T) {
	n := Need{Class: "${CLUSTER_CLASS_NAME}"}
	if got, ok := n.Resolve(map[string]string{"CLUSTER_CLASS_NAME": "sample-cc"}); !ok || got != "sample-cc" {
		t.Errorf("Resolve = %q, %v; want sample-cc", got, ok)
	}
	if _, ok := n.Resolve(nil); ok {
		t.Error("Resolve without a value for the variable is ok")
	}
	if got, ok := (Need{Class: "quick"}).Resolve(nil); !ok || got != "quick" {
		t.Errorf("Resolve of a name = %q, %v", got, ok)
	}
}

// A class flavor and a topology flavor that name the class by one variable
// (cluster-api-provider-gcp) get the same value for it, stand-in or real:
// the Cluster names the class the flavor applied first creates, and the
// class is known under that name, so its variables' schemas judge the
// Cluster's.
func TestChooser_ClassFlavorAndTopologyFlavorNameOneClass(t *testing.T) {
	classFlavor := strings.Replace(classDoc("${CLUSTER_CLASS_NAME}"), "spec:\n  infrastructure:", "spec:\n  variables:\n  - name: region\n    required: true\n    schema: {openAPIV3Schema: {type: string}}\n  infrastructure:", 1)
	topology := topologyDoc("${CLUSTER_CLASS_NAME}")
	for _, c := range []struct {
		name string
		real Real
		want string
	}{
		{"stand-ins", Real{}, ""},
		{"a real value for every flavor", Real{Variables: map[string]string{"CLUSTER_CLASS_NAME": "my-class"}}, "my-class"},
		{"a real value for the class flavor and the topology flavor", Real{Flavors: map[string]map[string]string{
			"clusterclass": {"CLUSTER_CLASS_NAME": "mine"}, "topology": {"CLUSTER_CLASS_NAME": "mine"}}}, "mine"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := New(Options{Real: c.real})
			ch.LearnTemplate("cluster-template-clusterclass.yaml", []byte(classFlavor))
			ch.LearnTemplate("cluster-template-topology.yaml", []byte(topology))
			fixed := Fixed("ns", "")
			class, err := ch.For("cluster-template-clusterclass.yaml", []byte(classFlavor), fixed)
			if err != nil {
				t.Fatal(err)
			}
			cluster, err := ch.For("cluster-template-topology.yaml", []byte(topology), fixed)
			if err != nil {
				t.Fatal(err)
			}
			name := class.Values["CLUSTER_CLASS_NAME"]
			if got := cluster.Values["CLUSTER_CLASS_NAME"]; got != name || c.want != "" && got != c.want {
				t.Errorf("the class flavor names its ClusterClass %q, the topology flavor's Cluster names %q (want %q)", name, got, c.want)
			}
			if _, ok := ch.Classes().DeclaredIn("cluster-template-clusterclass.yaml", name); !ok {
				t.Errorf("class %q of the class flavor not known by that name: learned %v", name, ch.Classes().Names())
			}
		})
	}
}
