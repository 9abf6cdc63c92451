package rehearse

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// components is a components file with everything served differently, and
// variables in the places that break when a file is re-encoded carelessly:
// an unquoted whole value of an integer field, a quoted default, a flow
// list, a comment.
const components = `# The provider's components.
apiVersion: v1
kind: Namespace
metadata:
  name: capi-example-system
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: examples.infrastructure.cluster.x-k8s.io
  annotations:
    cert-manager.io/inject-ca-from: capi-example-system/capi-example-serving-cert
spec:
  group: infrastructure.cluster.x-k8s.io
  names: {kind: Example, plural: examples}
  scope: Namespaced
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig:
        service: {name: capi-example-webhook-service, namespace: capi-example-system, path: /convert}
  versions:
  - name: v1beta2
    served: true
    storage: true
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: others.infrastructure.cluster.x-k8s.io
spec:
  group: infrastructure.cluster.x-k8s.io
  names: {kind: Other, plural: others}
  scope: Namespaced
  versions:
  - name: v1beta2
    served: true
    storage: true
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: capi-example-controller-manager
  namespace: capi-example-system
spec:
  replicas: ${EXAMPLE_REPLICAS:=1}
  selector: {matchLabels: {control-plane: controller-manager}}
  template:
    spec:
      containers:
      - name: manager
        args:
        - "--namespace=${EXAMPLE_WATCH_NAMESPACE:=\"\"}"
        - --v=${EXAMPLE_LOG_LEVEL:=0}
        ports: [{containerPort: 9443}]
---
apiVersion: v1
kind: Secret
metadata:
  name: capi-example-manager-bootstrap-credentials
  namespace: capi-example-system
data:
  credentials: ${EXAMPLE_B64ENCODED_CREDENTIALS}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: capi-example-validating-webhook-configuration
webhooks: []
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: capi-example-mutating-webhook-configuration
webhooks: []
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.example.com
spec:
  service: {name: capi-example-metrics, namespace: capi-example-system}
`

// TestServed_TakesWebhooksOutAndKeepsTheRestAsClusterctlReadsIt checks what
// the rehearsal's repository serves of a components file: the webhook
// configurations and the APIService gone, the conversion webhook None, the
// Deployment at 0 replicas, and every other object, once clusterctl has
// substituted the variables, as the release has it.
func TestServed_TakesWebhooksOutAndKeepsTheRestAsClusterctlReadsIt(t *testing.T) {
	id, _ := provider.ParseLabel("infrastructure-example")
	p := &release.Provider{ID: id, Version: "v0.1.0", ComponentsFile: "infrastructure-components.yaml"}
	for name, data := range map[string]string{p.ComponentsFile: components, "metadata.yaml": "kind: Metadata\n", "cluster-template.yaml": "kind: Cluster\n"} {
		if err := p.Add(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	out, s, err := served(p)
	if err != nil {
		t.Fatal(err)
	}
	want := Served{Provider: "infrastructure-example", Version: "v0.1.0", File: p.ComponentsFile,
		Removed: []string{"ValidatingWebhookConfiguration/capi-example-validating-webhook-configuration",
			"MutatingWebhookConfiguration/capi-example-mutating-webhook-configuration", "APIService/v1beta1.metrics.example.com"},
		NoConversion: []string{"CustomResourceDefinition/examples.infrastructure.cluster.x-k8s.io"},
		ScaledDown:   []string{"Deployment/capi-example-controller-manager"}}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("served (-want +got):\n%s", d)
	}
	for _, name := range []string{"metadata.yaml", "cluster-template.yaml"} {
		a, _ := p.File(name)
		b, ok := out.File(name)
		if !ok || string(a.Data) != string(b.Data) {
			t.Errorf("%s served as %q, want it unchanged", name, b.Data)
		}
	}
	// EXAMPLE_REPLICAS set only the replicas the repository serves as 0.
	vars := variables(t, p)
	delete(vars, "EXAMPLE_REPLICAS")
	if d := cmp.Diff(vars, variables(t, out)); d != "" {
		t.Errorf("the variables clusterctl finds changed (-release +served):\n%s", d)
	}

	// What clusterctl makes of each, with a value for every variable.
	before, after := substituted(t, p), substituted(t, out)
	if len(after) != len(before)-3 {
		t.Fatalf("%d objects served, want %d", len(after), len(before)-3)
	}
	for i := range after {
		b, a := before[i], after[i]
		switch a.GetKind() {
		case "CustomResourceDefinition":
			if a.GetName() == "examples.infrastructure.cluster.x-k8s.io" {
				unstructured.SetNestedMap(b.Object, map[string]any{"strategy": "None"}, "spec", "conversion")
			}
		case "Deployment":
			if r, _, _ := unstructured.NestedFieldNoCopy(b.Object, "spec", "replicas"); r != float64(3) {
				t.Errorf("the release's replicas %v, want the variable's value 3", r)
			}
			b.Object["spec"].(map[string]any)["replicas"] = float64(0)
		}
		if d := cmp.Diff(b.Object, a.Object); d != "" {
			t.Errorf("%s/%s (-release +served):\n%s", a.GetKind(), a.GetName(), d)
		}
	}
}

// TestServed_UnchangedFileServedAsIs checks that a components file with
// nothing to take out is served byte for byte.
func TestServed_UnchangedFileServedAsIs(t *testing.T) {
	id, _ := provider.ParseLabel("bootstrap-example")
	const data = "# no webhooks\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: x   # aligned comment\n"
	p := &release.Provider{ID: id, Version: "v1.0.0", ComponentsFile: "bootstrap-components.yaml"}
	if err := p.Add(p.ComponentsFile, []byte(data)); err != nil {
		t.Fatal(err)
	}
	out, s, err := served(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Changed() || string(out.Components().Data) != data {
		t.Errorf("served %q, %+v; want the file as it is", out.Components().Data, s)
	}
}

// TestServed_NotYAMLBeforeSubstitution checks that a components file that
// is YAML only after clusterctl substitutes it is refused with the file named.
func TestServed_NotYAMLBeforeSubstitution(t *testing.T) {
	id, _ := provider.ParseLabel("infrastructure-example")
	p := &release.Provider{ID: id, Version: "v0.1.0", ComponentsFile: "infrastructure-components.yaml"}
	if err := p.Add(p.ComponentsFile, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: [unclosed\n")); err != nil {
		t.Fatal(err)
	}
	_, _, err := served(p)
	if err == nil || !contains(err.Error(), "infrastructure-example v0.1.0: infrastructure-components.yaml") {
		t.Errorf("got %v, want an error naming the provider and file", err)
	}
}

func variables(t *testing.T, p *release.Provider) map[string]*string {
	t.Helper()
	vars, err := yamlprocessor.NewSimpleProcessor().GetVariableMap(p.Components().Data)
	if err != nil {
		t.Fatal(err)
	}
	return vars
}

func substituted(t *testing.T, p *release.Provider) []unstructured.Unstructured {
	t.Helper()
	values := map[string]string{"EXAMPLE_REPLICAS": "3", "EXAMPLE_B64ENCODED_CREDENTIALS": "Y3JlZHM=", "EXAMPLE_LOG_LEVEL": "2"}
	out, err := yamlprocessor.NewSimpleProcessor().Process(p.Components().Data, func(n string) (string, error) {
		return values[n], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := utilyaml.ToUnstructured(out)
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return objs
}

// workloads holds every kind that runs Pods, and a Deployment of another
// API group (not Kubernetes' apps: not a workload of the API server's).
const workloads = `apiVersion: apps/v1
kind: Deployment
metadata: {name: dp, namespace: ns}
spec:
  selector: {matchLabels: {app: dp}}
  template: {spec: {containers: [{name: c, image: i}]}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s, namespace: ns}
spec:
  replicas: 2
  selector: {matchLabels: {app: s}}
  template: {spec: {containers: [{name: c, image: i}]}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: r, namespace: ns}
spec:
  selector: {matchLabels: {app: r}}
  template: {spec: {containers: [{name: c, image: i}]}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: d, namespace: ns}
spec:
  selector: {matchLabels: {app: d}}
  template:
    spec:
      nodeSelector: {kubernetes.io/os: linux}
      containers: [{name: c, image: i}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns}
spec:
  template: {spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj, namespace: ns}
spec:
  schedule: "@hourly"
  suspend: false
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  containers: [{name: c, image: i}]
---
apiVersion: example.com/v1
kind: Deployment
metadata: {name: other, namespace: ns}
spec: {replicas: 1}
`

// TestServed_StopsEveryWorkload checks that no kind that runs Pods runs
// one from the rehearsal's repository: the set ones at 0 replicas, the
// jobs suspended, the DaemonSet and the Pod on no node (the DaemonSet's own
// node selector kept beside it), and that a Deployment of another group and
// every other field are served as the release has them.
func TestServed_StopsEveryWorkload(t *testing.T) {
	id, _ := provider.ParseLabel("infrastructure-example")
	p := &release.Provider{ID: id, Version: "v0.1.0", ComponentsFile: "infrastructure-components.yaml"}
	if err := p.Add(p.ComponentsFile, []byte(workloads)); err != nil {
		t.Fatal(err)
	}
	out, s, err := served(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Deployment/dp", "StatefulSet/s", "ReplicaSet/r", "DaemonSet/d", "Job/j", "CronJob/cj", "Pod/p"}
	if d := cmp.Diff(want, s.ScaledDown); d != "" {
		t.Errorf("workloads stopped (-want +got):\n%s", d)
	}
	before, after := substituted(t, p), substituted(t, out)
	if len(after) != len(before) {
		t.Fatalf("%d objects served, want %d", len(after), len(before))
	}
	set := func(o map[string]any, v any, path ...string) {
		if err := unstructured.SetNestedField(o, v, path...); err != nil {
			t.Fatal(err)
		}
	}
	for i := range after {
		b, a := before[i].Object, after[i].Object
		switch after[i].GetName() {
		case "dp", "s", "r": // dp and r with no replicas of their own: an integer, not "0"
			set(b, float64(0), "spec", "replicas")
		case "j", "cj":
			set(b, true, "spec", "suspend")
		case "d":
			set(b, "true", "spec", "template", "spec", "nodeSelector", NoNode)
		case "p":
			set(b, map[string]any{NoNode: "true"}, "spec", "nodeSelector")
		}
		if d := cmp.Diff(b, a); d != "" {
			t.Errorf("%s/%s (-release with its workloads stopped +served):\n%s", after[i].GetKind(), after[i].GetName(), d)
		}
	}
}
