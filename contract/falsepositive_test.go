package contract_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/contract"
)

// crdDoc is a CRD in the fixture's group with one schema per version.
func crdDoc(kind, plural, labels string, versions ...string) string {
	var b strings.Builder
	b.WriteString("---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + plural + "." + group + "\n  labels:\n    cluster.x-k8s.io/provider: infrastructure-foo\n")
	b.WriteString(labels)
	b.WriteString("spec:\n  group: " + group + "\n  names: {kind: " + kind + ", listKind: " + kind + "List, plural: " + plural + ", singular: " + strings.ToLower(kind) + ", categories: [cluster-api]}\n  scope: Namespaced\n  versions:\n")
	for _, v := range versions {
		b.WriteString(v)
	}
	return b.String()
}

// TestLint_NoFalsePositives: patterns of real releases that are no defect
// (issue 20). Each case failed before the lint classified contract kinds by
// evidence and read contract labels as core does; want lists what remains.
func TestLint_NoFalsePositives(t *testing.T) {
	cases := []struct {
		name string
		edit func(t *testing.T, fs files)
		want []key
	}{
		{"CAPI304 labels core never reads: older contracts, non-latest entries of the resolved value", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "fooclusters."+group, func(m map[string]any) bool {
				set(t, m, "v1alpha3", "metadata", "labels", "cluster.x-k8s.io/v1alpha3")
				set(t, m, "v1alpha4", "metadata", "labels", "cluster.x-k8s.io/v1alpha4")
				set(t, m, "v1beta0_v1beta1", "metadata", "labels", "cluster.x-k8s.io/v1beta2")
				return true
			})
		}, nil},
		{"CAPI304 on an identity kind, which no core controller resolves", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "fooidentities."+group, func(m map[string]any) bool {
				set(t, m, "v1alpha1_v1beta9", "metadata", "labels", "cluster.x-k8s.io/v1beta2")
				return true
			})
		}, nil},
		{"CAPI309 an old v1beta1 label while the v1beta2 label names a version with the status fields", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachines."+group, func(m map[string]any) bool {
				set(t, m, "v1alpha1", "metadata", "labels", "cluster.x-k8s.io/v1beta1")
				// v1alpha1 has neither status.ready nor providerID.
				set(t, m, map[string]any{"type": "object", "properties": map[string]any{"spec": map[string]any{"type": "object"}}}, "spec", "versions", 0, "schema", "openAPIV3Schema")
				return true
			})
		}, nil},
		{"CAPI502 namespace: default in every object of a template", func(t *testing.T, fs files) {
			var b strings.Builder
			for _, doc := range strings.Split(fs[tmpl], "---\n") {
				b.WriteString("---\n" + strings.Replace(strings.Replace(doc, "  namespace: ${NAMESPACE}\n", "", 1), "metadata:\n  name:", "metadata:\n  namespace: default\n  name:", 1))
			}
			fs[tmpl] = b.String()
		}, nil},
		{"CAPI503 a flavor that ships only a ClusterClass", func(t *testing.T, fs files) {
			fs["cluster-template-quick-clusterclass.yaml"] = fs[ccFile]
		}, nil},
		{"CAPI309/CAPI310 a pool entry kind named ...Machine, with no Template and no reference", func(t *testing.T, fs files) {
			fs[comps] += crdDoc("FooMachinePoolMachine", "foomachinepoolmachines", "    cluster.x-k8s.io/v1beta2: v1beta1\n",
				"  - name: v1beta1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object, properties: {spec: {type: object}}}\n")
			fs.replace(t, comps, "resources: [foomachinepooltemplates]", "resources: [foomachinepooltemplates, foomachinepoolmachines]")
		}, nil},
		{"CAPI308 a control-plane group kind named ...Cluster is no InfraCluster", func(t *testing.T, fs files) {
			fs[comps] += strings.ReplaceAll(crdDoc("FooManagedCluster", "foomanagedclusters", "    cluster.x-k8s.io/v1beta2: v1beta1\n",
				"  - name: v1beta1\n    served: true\n    storage: true\n    subresources: {status: {}}\n    schema:\n      openAPIV3Schema: {type: object, properties: {spec: {type: object}}}\n")+
				crdDoc("FooManagedClusterTemplate", "foomanagedclustertemplates", "    cluster.x-k8s.io/v1beta2: v1beta1\n",
					"  - name: v1beta1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {template: {type: object}}}}}\n"),
				group, "controlplane.foo.example.com")
			fs[comps] += "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: foo-cp-aggregated\n  labels:\n    cluster.x-k8s.io/provider: infrastructure-foo\n    cluster.x-k8s.io/aggregate-to-manager: \"true\"\nrules:\n- apiGroups: [controlplane.foo.example.com]\n  resources: ['*']\n  verbs: ['*']\n"
		}, nil},
		{"CAPI206 a bundled operator's container also named manager", func(t *testing.T, fs files) {
			fs[comps] += "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bundled-operator\n  namespace: foo-system\n  labels:\n    cluster.x-k8s.io/provider: infrastructure-foo\nspec:\n  selector:\n    matchLabels: {app: bundled}\n  template:\n    metadata:\n      labels: {app: bundled}\n    spec:\n      containers:\n      - name: manager\n        image: quay.io/other/operator:v3.2.1\n"
		}, nil},
		{"CAPI001 a template that is YAML only after substitution (a variable splices in a block)", func(t *testing.T, fs files) {
			fs[tmpl] += "---\napiVersion: infrastructure.foo.example.com/v1beta1\nkind: FooMachineTemplate\nmetadata:\n  name: ${CLUSTER_NAME}-md\nspec:\n  template:\n    spec:\n${FOO_MACHINE_SPEC}\n"
		}, nil},
		{"CAPI001 checked after substitution: a Namespace in a document that parses only substituted is found", func(t *testing.T, fs files) {
			fs[tmpl] += "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n${EXTRA_METADATA}\n"
		}, []key{{"CAPI501", E, tmpl, "Namespace/ns", "kind"}}},
		{"CAPI001 where no value the variables could take makes it parse: an error (issue 44)", func(t *testing.T, fs files) {
			fs[tmpl] += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n${BROKEN}\n"
		}, []key{{"CAPI001", E, tmpl, "document 5", ""}}},
		{"CAPI503/CAPI504 a published YAML file clusterctl does not read holds a topology Cluster (checked as YAML only)", func(t *testing.T, fs files) {
			fs["cluster-class-topology-example.yaml"] = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: test\n  namespace: default\nspec:\n  topology:\n    classRef:\n      name: quick-start\n"
			fs["cluster-class.yaml"] = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata:\n  name: quick-start\n  namespace: default\n"
			fs["example_variables.rc"] = "export FOO_REGION=west\n"
			fs["values.yaml"] = "replicas: 2\n"
		}, nil},
		{"CAPI001 a template that does not parse, with variables but none on the failing lines: no substitution mends it", func(t *testing.T, fs files) {
			fs[tmpl] += "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${CLUSTER_NAME}-cfg\ndata:\n  values: |\n    x\n  items:\n  - name: controlPlaneType:\n"
		}, []key{{"CAPI001", E, tmpl, "document 5", ""}}},
		{"CAPI001 a published YAML file clusterctl does not read still parses", func(t *testing.T, fs files) {
			fs["image-template-node.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n"
		}, []key{{"CAPI001", E, "image-template-node.yaml", "document 1", ""}}},
		{"CAPI309/CAPI310 a remediation template a class names in a machine deployment's health check (v1beta2 and v1beta1)", func(t *testing.T, fs files) {
			for _, kind := range []string{"FooRemediation", "FooRemediationTemplate"} {
				fs[comps] += crdDoc(kind, strings.ToLower(kind)+"s", "    cluster.x-k8s.io/v1beta2: v1beta1\n",
					"  - name: v1beta1\n    served: true\n    storage: true\n    subresources: {status: {}}\n    schema:\n      openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {template: {type: object}}}}}\n")
			}
			fs.replace(t, comps, "resources: [foomachinepooltemplates]", "resources: [foomachinepooltemplates, fooremediations, fooremediationtemplates]")
			fs[ccFile] += "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata:\n  name: quick-two\nspec:\n  controlPlane:\n    healthCheck:\n      remediation:\n        templateRef: {apiVersion: infrastructure.foo.example.com/v1beta1, kind: FooRemediationTemplate, name: cp}\n  workers:\n    machineDeployments:\n    - class: md\n      healthCheck:\n        remediation:\n          templateRef: {apiVersion: infrastructure.foo.example.com/v1beta1, kind: FooRemediationTemplate, name: md}\n"
			fs["clusterclass-old.yaml"] = "apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata:\n  name: old\nspec:\n  workers:\n    machineDeployments:\n    - class: md\n      machineHealthCheck:\n        remediationTemplate: {apiVersion: infrastructure.foo.example.com/v1beta1, kind: FooRemediationTemplate, name: md}\n"
		}, []key{{"CAPI604", W, ccFile, "ClusterClass/quick-two", "metadata.name"}}},
		{"CAPI507 a kind of a shared Cluster API group another provider defines (CAPA's KubeadmConfigTemplate beside its EKSConfig)", func(t *testing.T, fs files) {
			fs[comps] += strings.ReplaceAll(crdDoc("EKSConfig", "eksconfigs", "    cluster.x-k8s.io/v1beta2: v1beta1\n",
				"  - name: v1beta1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n"), group, "bootstrap.cluster.x-k8s.io")
			fs[tmpl] += "---\napiVersion: bootstrap.cluster.x-k8s.io/v1beta2\nkind: KubeadmConfigTemplate\nmetadata:\n  name: ${CLUSTER_NAME}-md\n"
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := readDir(t, "testdata/release")
			c.edit(t, fs)
			r := contract.Lint(fs.release(t, label, version), contract.Options{})
			want := c.want
			if want == nil {
				want = []key{}
			}
			sortKeys(want)
			if diff := cmp.Diff(want, keys(r.Findings, prefix)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nreport:\n%s", diff, text(r))
			}
		})
	}
}

// TestLint_CAPI206_TheTagTheBuildSet: the manager image tag a build set
// from image.tag is the release's (issue 31): the version without its v
// always, any other tag when the build says it set it.
func TestLint_CAPI206_TheTagTheBuildSet(t *testing.T) {
	const img = "image: registry.example.com/foo/manager:v0.1.0"
	capi206 := []key{{"CAPI206", W, comps, "Deployment/foo-system/foo-controller-manager", "spec.template.spec.containers[0].image"}}
	cases := []struct {
		name, tag string
		opts      contract.Options
		want      []key
	}{
		{"the version without its v", "0.1.0", contract.Options{}, []key{}},
		{"a tag the build set", "v0.1.0-ubi", contract.Options{ImageTags: map[string]string{label: "v0.1.0-ubi"}}, []key{}},
		{"the same tag, not set by the build", "v0.1.0-ubi", contract.Options{}, capi206},
		{"another provider's tag set by the build", "v0.1.0-ubi", contract.Options{ImageTags: map[string]string{"infrastructure-bar": "v0.1.0-ubi"}}, capi206},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := readDir(t, "testdata/release")
			fs.replace(t, comps, img, "image: registry.example.com/foo/manager:"+c.tag)
			r := contract.Lint(fs.release(t, label, version), c.opts)
			if diff := cmp.Diff(c.want, keys(r.Findings, prefix)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nreport:\n%s", diff, text(r))
			}
		})
	}
}
