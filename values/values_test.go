package values

import (
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// lbClass is a ClusterClass whose name is a variable and whose
// loadBalancer variable is an object with required properties.
const lbClass = `apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata:
  name: ${CLUSTER_CLASS_NAME}
spec:
  variables:
  - name: loadBalancer
    required: true
    schema:
      openAPIV3Schema:
        type: object
        required: [host, port]
        properties:
          host: {type: string, minLength: 1}
          port: {type: integer, minimum: 1, maximum: 65535}
          scheme: {type: string, enum: [internet-facing, internal]}
`

const lbTopology = `apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: ${CLUSTER_NAME}
spec:
  topology:
    class: ${CLUSTER_CLASS_NAME}
    version: ${KUBERNETES_VERSION}
    variables:
    - name: loadBalancer
      value: ${LOAD_BALANCER}
`

// An object-typed class variable used in spec.topology.variables gets an
// object of the class's schema (it got "{}", which the install check
// refused as its own stand-in), and the class is the one whose file takes
// its name from the same variable.
func TestFor_ObjectClassVariableOfAClassNamedByTheVariable(t *testing.T) {
	c := New(Options{})
	c.LearnTemplate("clusterclass-lb.yaml", []byte(lbClass))
	c.LearnTemplate("clusterclass-aaa.yaml", []byte("apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata: {name: aaa}\n"))
	set, err := c.For("cluster-template-topology.yaml", []byte(lbTopology), Fixed("ns", ""))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"CLUSTER_CLASS_NAME": "lb", "LOAD_BALANCER": `{"host":"capirepo-placeholder","port":1}`}
	if diff := cmp.Diff(want, set.Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	declared, ok := c.Classes().Declared("lb")
	if !ok {
		t.Fatal("class lb not learned")
	}
	out, err := Substitute([]byte(lbTopology), merged(Fixed("ns", ""), set.Values))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := toUnstructured(out)
	if err != nil {
		t.Fatal(err)
	}
	vars := objs[0].Object["spec"].(map[string]any)["topology"].(map[string]any)["variables"].([]any)
	value := vars[0].(map[string]any)["value"]
	if res := validate.NewSchemaValidator(declared["loadBalancer"], nil, "", strfmt.Default).Validate(value); !res.IsValid() {
		t.Errorf("the stand-in %v does not fit the class's schema: %v", value, res.Errors)
	}

	// The class file read on its own takes its name from its file.
	cls, err := c.For("clusterclass-lb.yaml", []byte(lbClass), Fixed("ns", ""))
	if err != nil {
		t.Fatal(err)
	}
	if got := cls.Values["CLUSTER_CLASS_NAME"]; got != "lb" || !cls.StandIns["CLUSTER_CLASS_NAME"] {
		t.Errorf("clusterclass-lb.yaml: CLUSTER_CLASS_NAME = %q, want the stand-in lb", got)
	}
}

// Real values win: a flavor's own, then every file's, then the lookup
// (over a variable's default, as clusterctl's variables client is asked
// first); only what none gives is a stand-in.
func TestFor_RealValuesFirst(t *testing.T) {
	c := New(Options{Real: Real{
		Variables: map[string]string{"REGION": "eu-west-1", "ZONE": "a"},
		Flavors:   map[string]map[string]string{"ha": {"ZONE": "b"}},
		Lookup: func(name string) (string, bool) {
			switch name {
			case "SSH_KEY":
				return "ssh-ed25519 AAAA", true
			case "LEVEL":
				return "3", true
			}
			return "", false
		},
	}})
	raw := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  region: ${REGION}\n  zone: ${ZONE:=z}\n  key: ${SSH_KEY}\n  other: ${OTHER}\n  level: ${LEVEL:=0}\n  mode: ${MODE:=fast}\n")
	set, err := c.For("cluster-template-ha.yaml", raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"REGION": "eu-west-1", "ZONE": "b", "SSH_KEY": "ssh-ed25519 AAAA", "OTHER": "capirepo-other", "LEVEL": "3"}
	if diff := cmp.Diff(want, set.Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"OTHER": true}, set.StandIns); diff != "" {
		t.Errorf("stand-ins (-want +got):\n%s", diff)
	}
}

func merged(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
