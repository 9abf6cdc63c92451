package install

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"

	"github.com/capirepo/capirepo/values"
	"github.com/capirepo/capirepo/verify"
)

func TestTopologyRefusals_ClassVariableSchemas(t *testing.T) {
	classes := testChooser(t).Classes()
	cluster := func(vars string) string {
		return "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: c}\nspec:\n  topology:\n    class: quick-start\n    version: v1.33.0\n    variables:\n" + vars
	}
	cases := []struct {
		name, vars string
		want       []string // field: part of the message
	}{
		{name: "values that fit", vars: "    - {name: podCIDR, value: 10.0.0.0/16}\n    - {name: workers, value: 4}\n    - {name: dns, value: {servers: [192.0.2.1]}}\n"},
		{name: "an integer out of range", vars: "    - {name: podCIDR, value: 10.0.0.0/16}\n    - {name: workers, value: 20}\n",
			want: []string{"spec.topology.variables[1].value: less than or equal to 10"}},
		{name: "not a CIDR", vars: "    - {name: podCIDR, value: 10.0.0.0}\n",
			want: []string{"spec.topology.variables[0].value: cidr"}},
		{name: "an empty list where minItems is 1", vars: "    - {name: podCIDR, value: 10.0.0.0/16}\n    - {name: dns, value: {servers: []}}\n",
			want: []string{"spec.topology.variables[1].value.servers: at least 1"}},
		// A runtime extension may declare variables the class's spec does not.
		{name: "a variable the class's spec does not declare", vars: "    - {name: podCIDR, value: 10.0.0.0/16}\n    - {name: podCidr, value: x}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, err := utilyaml.ToUnstructured([]byte(cluster(c.vars)))
			if err != nil {
				t.Fatal(err)
			}
			got := topologyRefusals(&objs[0], classes, anyFile)
			if len(got) != len(c.want) {
				t.Fatalf("refusals %v, want %d: %v", got, len(c.want), c.want)
			}
			for i, w := range c.want {
				field, msg, _ := strings.Cut(w, ": ")
				if got[i].Field != field || !strings.Contains(got[i].Message, msg) || got[i].Object != "Cluster/c" {
					t.Errorf("refusal %d = %s, want field %s with %q", i, got[i], field, msg)
				}
			}
		})
	}
	// A class the release does not ship is not judged here.
	objs, _ := utilyaml.ToUnstructured([]byte(strings.Replace(cluster("    - {name: workers, value: 99}\n"), "quick-start", "other", 1)))
	if got := topologyRefusals(&objs[0], classes, anyFile); len(got) != 0 {
		t.Errorf("another class's Cluster refused: %v", got)
	}
	// Two classes of one name: which one is meant is not known.
	shared := values.New(values.Options{})
	shared.LearnTemplate("clusterclass-quick-start.yaml", []byte(quickStart+"---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata: {name: quick-start}\nspec: {}\n"))
	objs, _ = utilyaml.ToUnstructured([]byte(cluster("    - {name: workers, value: 99}\n")))
	if got := topologyRefusals(&objs[0], shared.Classes(), anyFile); len(got) != 0 {
		t.Errorf("a Cluster of a class name two classes share refused: %v", got)
	}
	// Two class flavors ship a class of one name (CAPG's clusterclass and
	// gke-clusterclass, both ${CLUSTER_CLASS_NAME}): the flavor the
	// Cluster's needs applied first says which one it means.
	flavors := values.New(values.Options{})
	flavors.LearnTemplate("cluster-template-clusterclass.yaml", []byte(quickStart))
	flavors.LearnTemplate("cluster-template-gke-clusterclass.yaml", []byte("apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata: {name: quick-start}\nspec: {}\n"))
	if got := topologyRefusals(&objs[0], flavors.Classes(), anyFile); len(got) != 0 {
		t.Errorf("a Cluster of a class name two flavors share, judged without knowing which: %v", got)
	}
	got := topologyRefusals(&objs[0], flavors.Classes(), func(string) string { return "cluster-template-clusterclass.yaml" })
	if len(got) != 1 || got[0].Field != "spec.topology.variables[0].value" {
		t.Errorf("judged against the class of the flavor applied first: %v, want workers refused", got)
	}
}

// anyFile names no file: a Cluster means the one class of its name.
func anyFile(string) string { return "" }

func TestStandInRefusals_CELApart(t *testing.T) {
	in := &installer{vals: testChooser(t)}
	raw := []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  addresses: ${ADDRESSES}\n  nodes: ${NODES}\n  note: ${NOTE}\n")
	f := &File{}
	set, err := in.vals.For("cluster-template.yaml", raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range set.Names() {
		f.Variables = append(f.Variables, verify.Variable{Name: name, Required: true, Value: set.Values[name], Placeholder: set.StandIns[name]})
	}
	f.places = set.Places
	f.Refused = []Refusal{
		{Object: "Widget/w", Field: "spec.other", Message: "earlier"},
		{Object: "Widget/w", Field: "spec.addresses", Message: `Invalid value: "array": addresses must not be empty`, Reason: "422 Invalid"},
		{Object: "Widget/w", Field: "spec.nodes", Message: "should be greater than or equal to 3", Reason: "422 Invalid"},
		{Object: "Widget/w", Field: "spec", Message: `Invalid value: "object": failed rule: self.note != ''`, Reason: "422 Invalid"},
		{Object: "Widget/w", Field: "metadata.name", Message: "bad name", Reason: "422 Invalid"},
	}
	in.standInRefusals(f, widgetGVK, 1)
	ref := func(rs []Refusal) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Field+" "+strings.Join(r.StandIns, ","))
		}
		return out
	}
	// A CEL rule refusing a field a stand-in landed in is set apart; a
	// schema refusal stays a refusal, naming the stand-in; a refusal no
	// stand-in is in names none.
	wantRefused := []string{"spec.other ", "spec.nodes NODES=3", "metadata.name "}
	wantCEL := []string{"spec.addresses ADDRESSES=[capirepo-placeholder-0]", "spec ADDRESSES=[capirepo-placeholder-0],NODES=3,NOTE=capirepo-note"}
	if diff := cmp.Diff(wantRefused, ref(f.Refused)); diff != "" {
		t.Errorf("refused (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantCEL, ref(f.RefusedWithStandIns)); diff != "" {
		t.Errorf("refused with stand-ins (-want +got):\n%s", diff)
	}
	rep := &Report{Server: "https://s", Files: []*File{f}}
	if err := rep.refusedError(); err == nil || strings.Contains(err.Error(), "addresses") {
		t.Errorf("the error counts CEL refusals of stand-ins: %v", err)
	}
	var b strings.Builder
	_ = rep.WriteText(&b)
	for _, want := range []string{"refused with stand-ins Widget/w: field spec.addresses", "[with stand-ins ADDRESSES=[capirepo-placeholder-0]]", "--var NAME=VALUE"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestParseField(t *testing.T) {
	got := parseField("spec.template.spec.addresses[0].host")
	want := []any{"spec", "template", "spec", "addresses", 0, "host"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

var widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

func TestCoreDefaults_MachineDeploymentSelector(t *testing.T) {
	objs, err := utilyaml.ToUnstructured([]byte(`apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: md-0}
spec:
  clusterName: c
  template:
    spec: {clusterName: c}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: md-1, labels: {cluster.x-k8s.io/cluster-name: c}}
spec:
  clusterName: c
  selector: {matchLabels: {pool: a, cluster.x-k8s.io/cluster-name: c}}
  template:
    metadata: {labels: {pool: a, cluster.x-k8s.io/cluster-name: c}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: md-2}
spec: {clusterName: c}
`))
	if err != nil {
		t.Fatal(err)
	}
	if !coreDefaults(&objs[0]) {
		t.Fatal("a MachineDeployment without a selector was not defaulted")
	}
	want := map[string]any{"cluster.x-k8s.io/cluster-name": "c", "cluster.x-k8s.io/deployment-name": "md-0"}
	sel := objs[0].Object["spec"].(map[string]any)["selector"].(map[string]any)["matchLabels"]
	tmpl := objs[0].Object["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["labels"]
	if diff := cmp.Diff(want, sel); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, tmpl); diff != "" {
		t.Errorf("template labels (-want +got):\n%s", diff)
	}
	if objs[0].GetLabels()["cluster.x-k8s.io/cluster-name"] != "c" {
		t.Errorf("labels %v", objs[0].GetLabels())
	}
	if coreDefaults(&objs[1]) {
		t.Errorf("a complete MachineDeployment was changed: %v", objs[1].Object)
	}
	if coreDefaults(&objs[2]) {
		t.Error("a v1beta1 MachineDeployment was defaulted")
	}
}

// testChooser knows Widget's CRD and the quick-start ClusterClass.
func testChooser(t *testing.T) *values.Chooser {
	t.Helper()
	c := values.New(values.Options{})
	c.LearnComponents([]byte(widgetCRD))
	c.LearnTemplate("clusterclass-quick-start.yaml", []byte(quickStart))
	if len(c.Classes().Names()) != 1 {
		t.Fatalf("classes learned: %v", c.Classes().Names())
	}
	return c
}

// widgetCRD serves Widget with fields stand-ins land in.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              nodes: {type: integer, format: int32, minimum: 3}
              note: {type: string}
              addresses:
                type: array
                items: {type: string}
                x-kubernetes-validations: [{rule: self.size() > 0, message: addresses must not be empty}]
`

// quickStart is a ClusterClass whose variables have schemas.
const quickStart = `apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata: {name: quick-start}
spec:
  variables:
  - name: podCIDR
    required: true
    schema: {openAPIV3Schema: {type: string, format: cidr}}
  - name: workers
    required: false
    schema: {openAPIV3Schema: {type: integer, minimum: 3, maximum: 10}}
  - name: dns
    required: false
    schema: {openAPIV3Schema: {type: object, properties: {servers: {type: array, minItems: 1, items: {type: string, format: ipv4}}}}}
`
