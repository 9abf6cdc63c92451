package verify

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/values"
)

// Fixtures of real releases' shapes that clusterctl reads (issue 43): a
// flavor whose class is a variable naming the class of a shipped
// clusterclass file whose ClusterClass takes its name from the same
// variable (cluster-api-provider-vsphere's topology flavors, two class
// files named so), and fragment variables alone on a line
// (cluster-api-provider-metal3's ${CTLPLANE_KUBEADM_EXTRA_CONFIG} at the
// start of a line under kubeadmConfigSpec, harvester's
// ${RANCHER_TURTLES_LABEL} under labels:).
const (
	vsphereTopology = `apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: '${CLUSTER_NAME}'
  namespace: '${NAMESPACE}'
spec:
  topology:
    class: '${CLUSTER_CLASS_NAME}'
    controlPlane:
      replicas: ${CONTROL_PLANE_MACHINE_COUNT}
    variables:
    - name: infraServer
      value:
        thumbprint: '${EXAMPLE_TLS_THUMBPRINT}'
        url: '${EXAMPLE_SERVER}'
    version: '${KUBERNETES_VERSION}'
    workers:
      machineDeployments:
      - class: ${CLUSTER_CLASS_NAME}-worker
        name: md-0
        replicas: ${WORKER_MACHINE_COUNT}
`
	vsphereClass = `apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata:
  name: '${CLUSTER_CLASS_NAME}'
spec:
  infrastructure:
    ref:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
      kind: ExampleClusterTemplate
      name: '${CLUSTER_CLASS_NAME}'
      namespace: '${NAMESPACE}'
  variables:
  - name: infraServer
    required: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          thumbprint: {type: string}
          url: {type: string}
  workers:
    machineDeployments:
    - class: ${CLUSTER_CLASS_NAME}-worker
      template:
        infrastructure:
          ref:
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: ExampleMachineTemplate
            name: ${CLUSTER_CLASS_NAME}-worker
            namespace: '${NAMESPACE}'
`
	metal3Fragment = `apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: ${CLUSTER_NAME}
  namespace: ${NAMESPACE}
spec:
  infrastructureRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: ExampleCluster
    name: ${CLUSTER_NAME}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata:
  name: ${CLUSTER_NAME}
  namespace: ${NAMESPACE}
spec:
  replicas: ${CONTROL_PLANE_MACHINE_COUNT}
  version: ${KUBERNETES_VERSION}
  kubeadmConfigSpec:
    initConfiguration:
      nodeRegistration:
        name: '{{ ds.meta_data.name }}'
${CTLPLANE_KUBEADM_EXTRA_CONFIG}
`
	harvesterLabels = `apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  namespace: ${NAMESPACE}
  name: ${CLUSTER_NAME}
  labels:
${RANCHER_TURTLES_LABEL}
    ccm: external
spec:
  infrastructureRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
    kind: ExampleCluster
    name: ${CLUSTER_NAME}-hv
`
)

func TestDir_RealShapesClusterctlReads(t *testing.T) {
	p := goodProvider(t)
	for name, data := range map[string]string{
		"cluster-template-vsphere-topology.yaml": vsphereTopology,
		"clusterclass-template.yaml":             vsphereClass,
		"clusterclass-template-supervisor.yaml":  vsphereClass,
		"cluster-template-metal3.yaml":           metal3Fragment,
		"cluster-template-harvester.yaml":        harvesterLabels,
	} {
		if err := p.Add(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Dir(context.Background(), writeRelease(t, p), Options{})
	if err != nil {
		t.Fatalf("verify refuses a release clusterctl reads: %v", err)
	}
	got := map[string]*TemplateReport{}
	for _, f := range rep.Providers[0].Flavors {
		got[f.Name] = f
	}
	value := func(flavor, name string) (string, bool) {
		f := got[flavor]
		if f == nil {
			t.Fatalf("flavor %s not read", flavor)
		}
		i := slices.IndexFunc(f.Variables, func(v Variable) bool { return v.Name == name })
		if i < 0 {
			t.Fatalf("flavor %s: no variable %s in %v", flavor, name, f.Variables)
		}
		return f.Variables[i].Value, f.Variables[i].Placeholder
	}
	for _, c := range []struct{ flavor, name, want string }{
		{"vsphere-topology", "CLUSTER_CLASS_NAME", "template"},
		{"metal3", "CTLPLANE_KUBEADM_EXTRA_CONFIG", ""},
		{"harvester", "RANCHER_TURTLES_LABEL", ""},
	} {
		if v, standIn := value(c.flavor, c.name); v != c.want || !standIn {
			t.Errorf("flavor %s: %s = %q (stand-in %v), want the stand-in %q", c.flavor, c.name, v, standIn, c.want)
		}
	}
	if classes := got["vsphere-topology"].ClusterClasses; !slices.Equal(classes, []string{"capirepo-verify/template"}) {
		t.Errorf("vsphere-topology merged the classes %v, want capirepo-verify/template", classes)
	}
	// Each class file read on its own gets its own name from the variable.
	for _, cc := range rep.Providers[0].ClusterClasses {
		if cc.Name != "template" && cc.Name != "template-supervisor" {
			continue
		}
		i := slices.IndexFunc(cc.Variables, func(v Variable) bool { return v.Name == "CLUSTER_CLASS_NAME" })
		if i < 0 || cc.Variables[i].Value != cc.Name {
			t.Errorf("%s: CLUSTER_CLASS_NAME = %v, want %q", cc.File, cc.Variables, cc.Name)
		}
	}
}

// A flavor's values file applies to the ClusterClass clusterctl fetches for
// that flavor's topology Cluster, as the one generate run substitutes both
// with the same values; a values file for every flavor does not win there.
func TestDir_FlavorValuesReachTheClassItFetches(t *testing.T) {
	p := goodProvider(t)
	edit(t, p, "clusterclass-example-quick-start.yaml", "  name: example-quick-start\nspec:", "  name: example-quick-start\n  labels: {region: '${CLASS_REGION}'}\nspec:")
	real := values.Real{
		Variables: map[string]string{"CLASS_REGION": "everywhere"},
		Flavors:   map[string]map[string]string{"topology": {"CLASS_REGION": "mine"}},
	}
	rep, err := Dir(context.Background(), writeRelease(t, p), Options{Values: real})
	if err != nil {
		t.Fatal(err)
	}
	value := func(files []*TemplateReport, name string) string {
		for _, f := range files {
			if f.Name != name {
				continue
			}
			for _, v := range f.Variables {
				if v.Name == "CLASS_REGION" {
					return v.Value
				}
			}
		}
		t.Fatalf("%s: no CLASS_REGION read", name)
		return ""
	}
	if got := value(rep.Providers[0].Flavors, "topology"); got != "mine" {
		t.Errorf("flavor topology's class read with CLASS_REGION=%q, want the flavor's own value mine", got)
	}
	if got := value(rep.Providers[0].ClusterClasses, "example-quick-start"); got != "everywhere" {
		t.Errorf("the class file on its own read with CLASS_REGION=%q, want everywhere", got)
	}
}

// A topology Cluster whose labels are one variable, a whole map: clusterctl
// reads it with a map given (its class is found by converting the Cluster),
// so verify must read it with a stand-in that is a map, not a text.
func TestDir_LabelsMapAsOneVariable(t *testing.T) {
	p := goodProvider(t)
	edit(t, p, "cluster-template-topology.yaml", "  name: ${CLUSTER_NAME}\n", "  name: ${CLUSTER_NAME}\n  labels:\n    ${CLUSTER_LABELS}\n")
	rep, err := Dir(context.Background(), writeRelease(t, p), Options{})
	if err != nil {
		t.Fatalf("verify refuses a flavor clusterctl reads: %v", err)
	}
	for _, f := range rep.Providers[0].Flavors {
		for _, v := range f.Variables {
			if v.Name == "CLUSTER_LABELS" && (v.Value != "{}" || !v.Placeholder) {
				t.Errorf("CLUSTER_LABELS = %q (stand-in %v), want the stand-in {}", v.Value, v.Placeholder)
			}
		}
	}
}

// A template file the caller knows clusterctl fails to read (its lint
// error waived) is reported with the waiver, not an error; the components
// file never is: clusterctl init fails without it.
func TestDir_WaivedTemplateReportedNotFailed(t *testing.T) {
	p := goodProvider(t)
	edit(t, p, "cluster-template-topology.yaml", "  name: ${CLUSTER_NAME}\n", "  name: ${CLUSTER_NAME}\n  bad: [unclosed\n")
	dir := writeRelease(t, p)
	if _, err := Dir(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "cluster-template-topology.yaml") {
		t.Fatalf("without a waiver: err = %v, want the flavor's error", err)
	}
	waived := map[string]string{"infrastructure-example/v0.1.0/cluster-template-topology.yaml": Waiver("CAPI001", "fixed next release")}
	rep, err := Dir(context.Background(), dir, Options{Waived: waived})
	if err != nil {
		t.Fatalf("with the flavor waived: %v", err)
	}
	w := rep.Providers[0].Waived
	if len(w) != 1 || w[0].File != "cluster-template-topology.yaml" || w[0].Waiver != "CAPI001 waived: fixed next release" || !strings.Contains(w[0].Error, "yaml") {
		t.Errorf("waived = %+v", w)
	}
	if len(rep.Providers[0].Flavors) != 1 {
		t.Errorf("flavors read: %d, want the default one", len(rep.Providers[0].Flavors))
	}

	edit(t, p, "infrastructure-components.yaml", "kind: Namespace\n", "kind: Namespace\nbad: [unclosed\n")
	waived["infrastructure-example/v0.1.0/infrastructure-components.yaml"] = Waiver("CAPI001", "no")
	if _, err := Dir(context.Background(), writeRelease(t, p), Options{Waived: waived}); err == nil || !strings.Contains(err.Error(), "infrastructure-components.yaml") {
		t.Errorf("a waived components file: err = %v, want its error", err)
	}
}
