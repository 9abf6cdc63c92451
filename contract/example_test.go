package contract_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/builder/buildtest"

	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"

	"github.com/capirepo/capirepo/internal/testtree"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/release"
)

const (
	exampleDir     = "../examples/infrastructure-example"
	exampleLabel   = "infrastructure-example"
	exampleVersion = "v0.1.0"
)

// clusterAPIDir is cluster-api v1.14.2 in the module cache.
var clusterAPIDir = testtree.ClusterAPIDir()

func build(t *testing.T, dir, version string) *release.Release {
	t.Helper()
	res := buildtest.Build(t, dir, version)
	return res.Release
}

func TestLint_ExampleHasNoErrors(t *testing.T) {
	r := contract.Lint(build(t, exampleDir, exampleVersion), contract.Options{})
	if r.HasErrors() {
		t.Errorf("the example has errors:\n%s", text(r))
	}
	if len(r.Findings) > 0 {
		t.Logf("findings:\n%s", text(r))
	}
}

func TestLint_ClusterAPIProvidersHaveNoErrors(t *testing.T) {
	if _, err := os.Stat(clusterAPIDir); err != nil {
		t.Skipf("cluster-api v1.14.2 is not in the module cache (%v); run go mod download sigs.k8s.io/cluster-api@v1.14.2", err)
	}
	rel := build(t, clusterAPIDir, "v1.14.2")
	if len(rel.Providers) != 3 {
		t.Fatalf("want cluster-api's 3 providers, got %d", len(rel.Providers))
	}
	r := contract.Lint(rel, contract.Options{})
	if r.HasErrors() {
		t.Errorf("cluster-api has errors:\n%s", text(r))
	}
	if len(r.Findings) > 0 {
		t.Logf("findings:\n%s", text(r))
	}
}

// TestLint_ExampleMutations breaks the example's rendered release one way at
// a time and checks that the break is reported, by the intended rule only.
func TestLint_ExampleMutations(t *testing.T) {
	base := build(t, exampleDir, exampleVersion).Providers[0]
	const (
		comps = "infrastructure-components.yaml"
		tmpl  = "cluster-template.yaml"
		ha    = "cluster-template-ha.yaml"
		topo  = "cluster-template-topology.yaml"
		cc    = "clusterclass-example-quick-start.yaml"
		crdG  = ".infrastructure.cluster.x-k8s.io"
	)
	eachVersion := func(t *testing.T, m map[string]any, fn func(v map[string]any)) {
		for _, v := range at(t, m, "spec", "versions").([]any) {
			fn(v.(map[string]any))
		}
	}
	editCRD := func(t *testing.T, fs files, plural string, fn func(m map[string]any)) {
		fs.edit(t, comps, "CustomResourceDefinition", plural+crdG, func(m map[string]any) bool { fn(m); return true })
	}
	mutations := []struct {
		rule string
		name string
		edit func(t *testing.T, fs files)
	}{
		{"CAPI001", "a document that is a list", func(t *testing.T, fs files) { fs[tmpl] += "\n---\n- 1\n" }},
		{"CAPI002", "a ${VAR-default}", func(t *testing.T, fs files) {
			fs.replace(t, tmpl, "${KUBERNETES_VERSION}", "${KUBERNETES_VERSION-v1.33.0}")
		}},
		{"CAPI101", "metadata.yaml dropped", func(t *testing.T, fs files) { delete(fs, "metadata.yaml") }},
		{"CAPI102", "Metadata kind misspelt", func(t *testing.T, fs files) {
			fs.replace(t, "metadata.yaml", "kind: Metadata", "kind: Metdata")
		}},
		{"CAPI102", "an extra series with a negative minor", func(t *testing.T, fs files) {
			fs["metadata.yaml"] += "- major: 0\n  minor: -1\n  contract: v1beta2\n"
		}},
		{"CAPI103", "series contract v1alpha3", func(t *testing.T, fs files) {
			fs.replace(t, "metadata.yaml", "contract: v1beta2", "contract: v1alpha3")
		}},
		{"CAPI104", "series listed twice", func(t *testing.T, fs files) {
			fs["metadata.yaml"] += "- major: 0\n  minor: 1\n  contract: v1beta2\n"
		}},
		{"CAPI105", "series for another minor", func(t *testing.T, fs files) {
			fs.replace(t, "metadata.yaml", "minor: 1", "minor: 2")
		}},
		{"CAPI106", "components file renamed", func(t *testing.T, fs files) { fs.rename(t, comps, "components.yaml") }},
		{"CAPI107", "an extra series with a made-up contract", func(t *testing.T, fs files) {
			fs["metadata.yaml"] += "- major: 0\n  minor: 0\n  contract: v2\n"
		}},
		{"CAPI201", "a second Namespace", func(t *testing.T, fs files) {
			fs[comps] += "\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: second\n  labels: {cluster.x-k8s.io/provider: infrastructure-example}\n"
		}},
		{"CAPI202", "the webhook Service in another namespace", func(t *testing.T, fs files) {
			fs.edit(t, comps, "Service", "capi-example-webhook-service", func(m map[string]any) bool {
				set(t, m, "elsewhere", "metadata", "namespace")
				return true
			})
		}},
		{"CAPI203", "the Secret without provider label", func(t *testing.T, fs files) {
			fs.edit(t, comps, "Secret", "capi-example-manager-bootstrap-credentials", func(m map[string]any) bool {
				set(t, m, nil, "metadata", "labels", "cluster.x-k8s.io/provider")
				return true
			})
		}},
		{"CAPI204", "manager container renamed", func(t *testing.T, fs files) {
			fs.replace(t, comps, "name: manager\n", "name: controller\n")
		}},
		{"CAPI205", "manager image :latest", func(t *testing.T, fs files) {
			fs.replace(t, comps, "capi-example-controller:v0.1.0", "capi-example-controller:latest")
		}},
		{"CAPI206", "manager image of another release", func(t *testing.T, fs files) {
			fs.replace(t, comps, "capi-example-controller:v0.1.0", "capi-example-controller:v0.0.1")
		}},
		{"CAPI210", "manager image from a staging registry", func(t *testing.T, fs files) {
			fs.replace(t, comps, "ghcr.io/capirepo/capi-example-controller:v0.1.0", "gcr.io/k8s-staging-capi-example/capi-example-controller:v0.1.0")
		}},
		{"CAPI207", "manager image without registry", func(t *testing.T, fs files) {
			fs.replace(t, comps, "ghcr.io/capirepo/capi-example-controller:v0.1.0", "capi-example-controller:v0.1.0")
		}},
		{"CAPI208", "webhook CA from a missing Certificate", func(t *testing.T, fs files) {
			fs.edit(t, comps, "MutatingWebhookConfiguration", "capi-example-mutating-webhook-configuration", func(m map[string]any) bool {
				set(t, m, "capi-example-system/missing-cert", "metadata", "annotations", "cert-manager.io/inject-ca-from")
				return true
			})
		}},
		{"CAPI209", "ClusterRoleBinding in rbac v1beta1", func(t *testing.T, fs files) {
			fs.edit(t, comps, "ClusterRoleBinding", "capi-example-manager-rolebinding", func(m map[string]any) bool {
				set(t, m, "rbac.authorization.k8s.io/v1beta1", "apiVersion")
				return true
			})
		}},
		{"CAPI301", "ExampleMachine cluster-scoped", func(t *testing.T, fs files) {
			editCRD(t, fs, "examplemachines", func(m map[string]any) { set(t, m, "Cluster", "spec", "scope") })
		}},
		{"CAPI302", "ExampleMachinePool without status subresource", func(t *testing.T, fs files) {
			editCRD(t, fs, "examplemachinepools", func(m map[string]any) {
				eachVersion(t, m, func(v map[string]any) { delete(v, "subresources") })
			})
		}},
		{"CAPI303", "ExampleMachineTemplate without contract label", func(t *testing.T, fs files) {
			editCRD(t, fs, "examplemachinetemplates", func(m map[string]any) {
				set(t, m, nil, "metadata", "labels", "cluster.x-k8s.io/v1beta2")
			})
		}},
		{"CAPI304", "contract label names an unserved version", func(t *testing.T, fs files) {
			editCRD(t, fs, "exampleclustertemplates", func(m map[string]any) {
				set(t, m, "v1beta1_v1beta9", "metadata", "labels", "cluster.x-k8s.io/v1beta2")
			})
		}},
		{"CAPI305", "ExampleCluster CRD misnamed", func(t *testing.T, fs files) {
			editCRD(t, fs, "exampleclusters", func(m map[string]any) { set(t, m, "example-clusters"+crdG, "metadata", "name") })
		}},
		{"CAPI306", "ExampleMachine with no storage version", func(t *testing.T, fs files) {
			editCRD(t, fs, "examplemachines", func(m map[string]any) {
				eachVersion(t, m, func(v map[string]any) { v["storage"] = false })
			})
		}},
		{"CAPI307", "ExampleCluster listKind", func(t *testing.T, fs files) {
			editCRD(t, fs, "exampleclusters", func(m map[string]any) { set(t, m, "ExampleClusters", "spec", "names", "listKind") })
		}},
		{"CAPI308", "ExampleCluster without controlPlaneEndpoint", func(t *testing.T, fs files) {
			editCRD(t, fs, "exampleclusters", func(m map[string]any) {
				eachVersion(t, m, func(v map[string]any) {
					set(t, v, nil, "schema", "openAPIV3Schema", "properties", "spec", "properties", "controlPlaneEndpoint")
				})
			})
		}},
		{"CAPI309", "ExampleMachine without status.initialization", func(t *testing.T, fs files) {
			editCRD(t, fs, "examplemachines", func(m map[string]any) {
				eachVersion(t, m, func(v map[string]any) {
					set(t, v, nil, "schema", "openAPIV3Schema", "properties", "status", "properties", "initialization")
				})
			})
		}},
		{"CAPI310", "ExampleMachine without providerID", func(t *testing.T, fs files) {
			editCRD(t, fs, "examplemachines", func(m map[string]any) {
				eachVersion(t, m, func(v map[string]any) {
					set(t, v, nil, "schema", "openAPIV3Schema", "properties", "spec", "properties", "providerID")
				})
			})
		}},
		{"CAPI311", "ExampleMachinePool without providerIDList", func(t *testing.T, fs files) {
			editCRD(t, fs, "examplemachinepools", func(m map[string]any) {
				eachVersion(t, m, func(v map[string]any) {
					set(t, v, nil, "schema", "openAPIV3Schema", "properties", "spec", "properties", "providerIDList")
				})
			})
		}},
		{"CAPI312", "ExampleMachinePoolTemplate CRD dropped", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "examplemachinepooltemplates"+crdG, func(map[string]any) bool { return false })
		}},
		{"CAPI313", "ExampleCluster without categories", func(t *testing.T, fs files) {
			editCRD(t, fs, "exampleclusters", func(m map[string]any) { set(t, m, nil, "spec", "names", "categories") })
		}},
		{"CAPI314", "ExampleMachinePool labelled for v1beta1 only", func(t *testing.T, fs files) {
			editCRD(t, fs, "examplemachinepools", func(m map[string]any) {
				set(t, m, nil, "metadata", "labels", "cluster.x-k8s.io/v1beta2")
				set(t, m, "v1beta1", "metadata", "labels", "cluster.x-k8s.io/v1beta1")
			})
		}},
		{"CAPI315", "a description written as a number in the ExampleCluster schema", func(t *testing.T, fs files) {
			editCRD(t, fs, "exampleclusters", func(m map[string]any) {
				eachVersion(t, m, func(v map[string]any) {
					set(t, v, 123, "schema", "openAPIV3Schema", "properties", "spec", "description")
				})
			})
		}},
		{"CAPI317", "ExampleCluster serves an older version of another schema, with no conversion webhook", func(t *testing.T, fs files) {
			editCRD(t, fs, "exampleclusters", func(m map[string]any) {
				versions := at(t, m, "spec", "versions").([]any)
				old := map[string]any{"name": "v1alpha1", "served": true, "storage": false, "subresources": map[string]any{"status": map[string]any{}},
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
				set(t, m, append(versions, old), "spec", "versions")
			})
		}},
		{"CAPI401", "ExampleMachine and its template moved to a group the aggregated role does not grant", func(t *testing.T, fs files) {
			for _, plural := range []string{"examplemachines", "examplemachinetemplates"} {
				editCRD(t, fs, plural, func(m map[string]any) {
					set(t, m, plural+".infrastructure.example.com", "metadata", "name")
					set(t, m, "infrastructure.example.com", "spec", "group")
				})
			}
			// The templates refer to the kinds in their new group.
			moved := regexp.MustCompile(`infrastructure\.cluster\.x-k8s\.io(/v1beta1)?(\n\s*kind: ExampleMachine(Template)?\n)`)
			for name := range fs {
				if strings.HasPrefix(name, "cluster") {
					fs[name] = moved.ReplaceAllString(fs[name], "infrastructure.example.com$1$2")
				}
			}
		}},
		{"CAPI501", "a Namespace in the default template", func(t *testing.T, fs files) {
			fs[tmpl] += "\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${NAMESPACE}\n"
		}},
		{"CAPI502", "the ha Cluster in namespace default", func(t *testing.T, fs files) {
			fs.edit(t, ha, "Cluster", "${CLUSTER_NAME}", func(m map[string]any) bool {
				set(t, m, "default", "metadata", "namespace")
				return true
			})
		}},
		{"CAPI503", "the ha template without its Cluster", func(t *testing.T, fs files) {
			fs.edit(t, ha, "Cluster", "${CLUSTER_NAME}", func(map[string]any) bool { return false })
		}},
		{"CAPI504", "topology names an unshipped class", func(t *testing.T, fs files) {
			fs.replace(t, topo, "name: example-quick-start", "name: example-slow-start")
		}},
		{"CAPI505", "topology class from a variable", func(t *testing.T, fs files) {
			fs.replace(t, topo, "name: example-quick-start", "name: ${CLASS:=example-quick-start}")
		}},
		{"CAPI506", "topology class name emptied", func(t *testing.T, fs files) {
			fs.replace(t, topo, "name: example-quick-start", "name: \"\"")
		}},
		{"CAPI507", "the ha template's Cluster refers to a misspelt kind of the provider's group", func(t *testing.T, fs files) {
			fs.edit(t, ha, "Cluster", "${CLUSTER_NAME}", func(m map[string]any) bool {
				set(t, m, "ExampleClustr", "spec", "infrastructureRef", "kind")
				return true
			})
		}},
		{"CAPI601", "a variable in the ClusterClass file", func(t *testing.T, fs files) {
			fs.edit(t, cc, "ClusterClass", "example-quick-start", func(m map[string]any) bool {
				set(t, m, map[string]any{"owner": "${OWNER}"}, "metadata", "labels")
				return true
			})
		}},
		{"CAPI602", "a namespace in the ClusterClass file", func(t *testing.T, fs files) {
			fs.edit(t, cc, "ClusterClass", "example-quick-start", func(m map[string]any) bool {
				set(t, m, "default", "metadata", "namespace")
				return true
			})
		}},
		{"CAPI603", "a namespace in a template reference", func(t *testing.T, fs files) {
			fs.edit(t, cc, "ClusterClass", "example-quick-start", func(m map[string]any) bool {
				set(t, m, "default", "spec", "infrastructure", "templateRef", "namespace")
				return true
			})
		}},
		{"CAPI605", "a ClusterClass variable without required", func(t *testing.T, fs files) {
			fs.replace(t, cc, "    required: false\n", "")
		}},
		{"CAPI604", "ClusterClass file holding another class", func(t *testing.T, fs files) {
			fs.edit(t, cc, "ClusterClass", "example-quick-start", func(m map[string]any) bool {
				set(t, m, "example-other", "metadata", "name")
				return true
			})
		}},
	}
	if len(mutations) < 20 {
		t.Fatalf("want at least 20 mutations, have %d", len(mutations))
	}
	before := contract.Lint(rebuild(t, fromProvider(base)), contract.Options{})
	for _, m := range mutations {
		t.Run(m.rule+" "+m.name, func(t *testing.T) {
			fs := fromProvider(base)
			m.edit(t, fs)
			after := contract.Lint(rebuild(t, fs), contract.Options{})
			added := subtract(keys(after.Findings, ""), keys(before.Findings, ""))
			if len(added) == 0 {
				t.Fatalf("%s did not report the break", m.rule)
			}
			var other []key
			for _, k := range added {
				if k.Rule != m.rule {
					other = append(other, k)
				}
			}
			if diff := cmp.Diff([]key(nil), other); diff != "" {
				t.Errorf("findings of other rules appeared (-want +got):\n%s\nreport:\n%s", diff, text(after))
			}
		})
	}
}

func rebuild(t *testing.T, fs files) *release.Release {
	return fs.release(t, exampleLabel, exampleVersion)
}

// subtract returns the keys of a that are not in b, counting duplicates.
func subtract(a, b []key) []key {
	left := map[key]int{}
	for _, k := range b {
		left[k]++
	}
	var out []key
	for _, k := range a {
		if left[k] > 0 {
			left[k]--
			continue
		}
		out = append(out, k)
	}
	return out
}

// TestExample_GenerateProviderNeedsOnlyTheCredentials: clusterctl's own
// processor substitutes the example's components with only the credentials
// set (clusterctl generate provider), and the watch namespace comes out
// empty (all namespaces), as its README says; the example has no CAPI003.
func TestExample_GenerateProviderNeedsOnlyTheCredentials(t *testing.T) {
	rel := build(t, exampleDir, exampleVersion)
	comps := rel.Providers[0].Components().Data
	out, err := yamlprocessor.NewSimpleProcessor().Process(comps, func(name string) (string, error) {
		if name == "EXAMPLE_B64ENCODED_CREDENTIALS" {
			return "Y3JlZHM=", nil
		}
		return "", fmt.Errorf("%s is not set", name)
	})
	if err != nil {
		t.Fatalf("clusterctl would refuse the example with only the credentials set: %v", err)
	}
	if !strings.Contains(string(out), `- --namespace=""`) {
		t.Errorf("the watch namespace is not the default \"\" after substitution")
	}
	r := contract.Lint(rel, contract.Options{})
	if slices.ContainsFunc(r.Findings, func(f contract.Finding) bool { return f.Rule == contract.RuleEmptyDefault }) {
		t.Errorf("the example has a CAPI003 finding:\n%s", text(r))
	}
}
