package contract_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/contract"
)

const (
	comps   = "infrastructure-components.yaml"
	tmpl    = "cluster-template.yaml"
	topo    = "cluster-template-topology.yaml"
	ccFile  = "clusterclass-quick.yaml"
	meta    = "metadata.yaml"
	group   = "infrastructure.foo.example.com"
	label   = "infrastructure-foo"
	version = "v0.1.0"
	prefix  = label + "/" + version + "/"
)

func crd(plural string) string { return "CustomResourceDefinition/" + plural + "." + group }

// schema is the path to a property of the v1beta1 (storage, labelled) schema.
func schema(props ...any) []any {
	p := []any{"spec", "versions", 1, "schema", "openAPIV3Schema"}
	for _, x := range props {
		p = append(p, "properties", x)
	}
	return p
}

func schemaField(path string) string {
	return "spec.versions[1].schema.openAPIV3Schema.properties." + path
}

const (
	E = contract.Error
	W = contract.Warning
	I = contract.Info
)

func TestLint_GoodFixtureHasNoFindings(t *testing.T) {
	fs := readDir(t, "testdata/release")
	r := contract.Lint(fs.release(t, label, version), contract.Options{})
	if diff := cmp.Diff([]key{}, keys(r.Findings, prefix)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// TestLint_Rules breaks the good fixture once per case and checks exactly
// which findings appear.
func TestLint_Rules(t *testing.T) {
	cases := []struct {
		name string
		edit func(t *testing.T, fs files)
		want []key
	}{
		// Files.
		{"CAPI001 a document is a list", func(t *testing.T, fs files) {
			fs[tmpl] += "---\n- a\n- b\n"
		}, []key{{"CAPI001", E, tmpl, "document 5", ""}}},
		{"CAPI001 a document has no kind", func(t *testing.T, fs files) {
			fs[tmpl] += "---\napiVersion: v1\nmetadata: {name: x}\n"
		}, []key{{"CAPI001", E, tmpl, "document 5", "kind"}}},
		{"CAPI002 a default written ${V-d}", func(t *testing.T, fs files) {
			fs.replace(t, tmpl, "${FOO_REGION:=west}", "${FOO_REGION-west}")
		}, []key{{"CAPI002", E, tmpl, "", ""}}},

		{"CAPI003 a variable with an empty default", func(t *testing.T, fs files) {
			fs.replace(t, comps, "${FOO_LOG_LEVEL:=2}", "${FOO_LOG_LEVEL:=}")
		}, []key{{"CAPI003", W, comps, "", ""}}},
		{"CAPI003 not on a one-space default, which clusterctl keeps", func(t *testing.T, fs files) {
			fs.replace(t, comps, "${FOO_LOG_LEVEL:=2}", "${FOO_LOG_LEVEL:= }")
		}, []key{}},

		// Repository.
		{"CAPI101 no metadata.yaml", func(t *testing.T, fs files) { delete(fs, meta) },
			[]key{{"CAPI101", E, meta, "", ""}}},
		{"CAPI102 wrong apiVersion", func(t *testing.T, fs files) {
			fs.replace(t, meta, "/v1alpha3", "/v1alpha4")
		}, []key{{"CAPI102", E, meta, "Metadata", "apiVersion"}}},
		{"CAPI102 no kind: clusterctl v1.11.0 refuses it (cluster-api #12712), and users of the contract may run it", func(t *testing.T, fs files) {
			fs.replace(t, meta, "kind: Metadata\n", "")
		}, []key{{"CAPI102", E, meta, "Metadata", "kind"}}},
		{"CAPI102 no apiVersion", func(t *testing.T, fs files) {
			fs.replace(t, meta, "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\n", "")
		}, []key{{"CAPI102", E, meta, "Metadata", "apiVersion"}}},
		{"CAPI102 no releaseSeries", func(t *testing.T, fs files) {
			fs[meta] = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\n"
		}, []key{{"CAPI102", E, meta, "Metadata", "releaseSeries"}}},
		{"CAPI103 release series contract clusterctl refuses", func(t *testing.T, fs files) {
			fs.replace(t, meta, "minor: 1\n  contract: v1beta2", "minor: 1\n  contract: v1alpha4")
		}, []key{{"CAPI103", E, meta, "Metadata", "releaseSeries[0].contract"}}},
		{"CAPI104 a series listed twice", func(t *testing.T, fs files) {
			fs[meta] += "- major: 0\n  minor: 1\n  contract: v1beta2\n"
		}, []key{{"CAPI104", E, meta, "Metadata", "releaseSeries[2]"}}},
		{"CAPI105 version not covered", func(t *testing.T, fs files) {
			fs.replace(t, meta, "minor: 1\n", "minor: 3\n")
		}, []key{{"CAPI105", E, meta, "Metadata", "releaseSeries"}}},
		{"CAPI106 components file named otherwise", func(t *testing.T, fs files) {
			fs.rename(t, comps, "foo-components.yaml")
		}, []key{{"CAPI106", W, "foo-components.yaml", "", ""}}},
		{"CAPI107 an old series names no contract version", func(t *testing.T, fs files) {
			fs.replace(t, meta, "v1alpha4", "v1gamma1")
		}, []key{{"CAPI107", W, meta, "Metadata", "releaseSeries[1].contract"}}},

		// Components.
		{"CAPI201 no Namespace", func(t *testing.T, fs files) {
			fs.edit(t, comps, "Namespace", "foo-system", func(map[string]any) bool { return false })
		}, []key{{"CAPI201", E, comps, "", ""}}},
		{"CAPI201 two Namespaces", func(t *testing.T, fs files) {
			fs[comps] += "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: other\n  labels: {cluster.x-k8s.io/provider: infrastructure-foo}\n"
		}, []key{{"CAPI201", E, comps, "Namespace/other", "kind"}}},
		{"CAPI202 object in another namespace", func(t *testing.T, fs files) {
			fs.replace(t, comps, "name: foo-manager\n  namespace: foo-system", "name: foo-manager\n  namespace: elsewhere")
		}, []key{{"CAPI202", E, comps, "ServiceAccount/elsewhere/foo-manager", "metadata.namespace"}}},
		{"CAPI202 object without namespace is a warning", func(t *testing.T, fs files) {
			fs.replace(t, comps, "name: foo-manager\n  namespace: foo-system\n", "name: foo-manager\n")
		}, []key{{"CAPI202", W, comps, "ServiceAccount/foo-manager", "metadata.namespace"}}},
		{"CAPI203 provider label missing and wrong", func(t *testing.T, fs files) {
			fs.edit(t, comps, "ServiceAccount", "foo-manager", func(m map[string]any) bool {
				set(t, m, nil, "metadata", "labels")
				return true
			})
			fs.edit(t, comps, "Certificate", "foo-serving-cert", func(m map[string]any) bool {
				set(t, m, "infrastructure-bar", "metadata", "labels", "cluster.x-k8s.io/provider")
				return true
			})
		}, []key{
			{"CAPI203", W, comps, "Certificate/foo-system/foo-serving-cert", "metadata.labels[cluster.x-k8s.io/provider]"},
			{"CAPI203", W, comps, "ServiceAccount/foo-system/foo-manager", "metadata.labels[cluster.x-k8s.io/provider]"},
		}},
		{"CAPI204 no container named manager", func(t *testing.T, fs files) {
			fs.replace(t, comps, "- name: manager", "- name: controller")
		}, []key{{"CAPI204", E, comps, "Deployment/foo-system/foo-controller-manager", "spec.template.spec.containers"}}},
		{"CAPI205 floating tags", func(t *testing.T, fs files) {
			fs.replace(t, comps, "foo/manager:v0.1.0", "foo/manager:latest")
			fs.replace(t, comps, "kube-rbac-proxy:v0.16.0", "kube-rbac-proxy")
		}, []key{
			// One finding per rule and object, listing its fields.
			{"CAPI205", E, comps, "Deployment/foo-system/foo-controller-manager", "spec.template.spec.containers[0].image, spec.template.spec.containers[1].image"},
		}},
		{"CAPI206 manager image of another release (kamaji v0.15.1 shipped :v0.15.0)", func(t *testing.T, fs files) {
			fs.replace(t, comps, "foo/manager:v0.1.0", "foo/manager:v0.0.9")
		}, []key{{"CAPI206", E, comps, "Deployment/foo-system/foo-controller-manager", "spec.template.spec.containers[0].image"}}},
		{"CAPI206 manager image tagged with no version", func(t *testing.T, fs files) {
			fs.replace(t, comps, "foo/manager:v0.1.0", "foo/manager:sha-1a2b3c4")
		}, []key{{"CAPI206", W, comps, "Deployment/foo-system/foo-controller-manager", "spec.template.spec.containers[0].image"}}},
		{"CAPI207 image without registry, image with a variable", func(t *testing.T, fs files) {
			fs.replace(t, comps, "registry.k8s.io/kubebuilder/kube-rbac-proxy:v0.16.0", "kube-rbac-proxy:v0.16.0")
			fs.replace(t, comps, "registry.example.com/foo/init@sha256:", "${INIT_IMAGE:=registry.example.com/foo/init}@sha256:")
		}, []key{
			{"CAPI207", E, comps, "Deployment/foo-system/foo-controller-manager", "spec.template.spec.containers[1].image"},
			{"CAPI207", W, comps, "Deployment/foo-system/foo-controller-manager", "spec.template.spec.initContainers[0].image"},
		}},
		{"CAPI205 and CAPI207 reach every pod-bearing kind; clusterctl parses only Deployments' and DaemonSets'", func(t *testing.T, fs files) {
			fs[comps] += `---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: foo-db, namespace: foo-system, labels: {cluster.x-k8s.io/provider: infrastructure-foo}}
spec:
  template:
    spec:
      containers:
      - {name: db, image: "postgres:16"}
      - {name: vars, image: "${DB_IMAGE}"}
      - {name: bad, image: "Registry.example/Foo:1"}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: foo-gc, namespace: foo-system, labels: {cluster.x-k8s.io/provider: infrastructure-foo}}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - {name: gc, image: "registry.example.com/foo/gc:latest"}
          - {name: none}
`
		}, []key{
			// postgres:16 is pulled as docker.io/library/postgres: fine where
			// clusterctl does not parse it; a variable is not clusterctl's.
			{"CAPI205", E, comps, "CronJob/foo-system/foo-gc", "spec.jobTemplate.spec.template.spec.containers[0].image"},
			{"CAPI207", E, comps, "CronJob/foo-system/foo-gc", "spec.jobTemplate.spec.template.spec.containers[1].image"},
			{"CAPI207", W, comps, "StatefulSet/foo-system/foo-db", "spec.template.spec.containers[2].image"},
		}},
		{"CAPI210 images from staging registries, pinned or not; a promoted one is fine", func(t *testing.T, fs files) {
			fs.replace(t, comps, "registry.example.com/foo/manager:v0.1.0", "gcr.io/k8s-staging-foo/manager:v0.1.0")
			fs.replace(t, comps, "registry.example.com/foo/init@sha256", "us-central1-docker.pkg.dev/k8s-staging-images/foo/init@sha256")
		}, []key{
			{"CAPI210", W, comps, "Deployment/foo-system/foo-controller-manager", "spec.template.spec.containers[0].image, spec.template.spec.initContainers[0].image"},
		}},
		{"CAPI208 CA injected from a missing or malformed Certificate", func(t *testing.T, fs files) {
			fs.edit(t, comps, "ValidatingWebhookConfiguration", "foo-validating-webhook-configuration", func(m map[string]any) bool {
				set(t, m, "foo-system/nope", "metadata", "annotations", "cert-manager.io/inject-ca-from")
				return true
			})
			fs.edit(t, comps, "CustomResourceDefinition", "fooclusters."+group, func(m map[string]any) bool {
				set(t, m, "foo-serving-cert", "metadata", "annotations", "cert-manager.io/inject-ca-from")
				m["spec"].(map[string]any)["conversion"] = map[string]any{"strategy": "Webhook"} // two served versions: the API server calls it
				return true
			})
		}, []key{
			{"CAPI208", E, comps, crd("fooclusters"), "metadata.annotations[cert-manager.io/inject-ca-from]"},
			{"CAPI208", E, comps, "ValidatingWebhookConfiguration/foo-validating-webhook-configuration", "metadata.annotations[cert-manager.io/inject-ca-from]"},
		}},
		{"CAPI208 a leftover kustomize variable on a CRD whose conversion webhook is never called", func(t *testing.T, fs files) {
			// One served version, strategy Webhook (as a kubebuilder
			// cainjection patch leaves it), and strategy None.
			fs.edit(t, comps, "CustomResourceDefinition", "fooclusters."+group, func(m map[string]any) bool {
				set(t, m, "$(CERTIFICATE_NAMESPACE)/$(CERTIFICATE_NAME)", "metadata", "annotations", "cert-manager.io/inject-ca-from")
				m["spec"].(map[string]any)["conversion"] = map[string]any{"strategy": "Webhook"}
				for _, v := range m["spec"].(map[string]any)["versions"].([]any) {
					if v.(map[string]any)["name"] == "v1alpha1" {
						v.(map[string]any)["served"] = false
					}
				}
				return true
			})
			fs.edit(t, comps, "CustomResourceDefinition", "foomachines."+group, func(m map[string]any) bool {
				set(t, m, "$(CERTIFICATE_NAMESPACE)/$(CERTIFICATE_NAME)", "metadata", "annotations", "cert-manager.io/inject-ca-from")
				delete(m["spec"].(map[string]any), "conversion")
				for _, v := range m["spec"].(map[string]any)["versions"].([]any) {
					if v.(map[string]any)["name"] == "v1alpha1" {
						v.(map[string]any)["served"] = false
					}
				}
				return true
			})
		}, []key{
			{"CAPI208", W, comps, crd("fooclusters"), "metadata.annotations[cert-manager.io/inject-ca-from]"},
			{"CAPI208", W, comps, crd("foomachines"), "metadata.annotations[cert-manager.io/inject-ca-from]"},
		}},
		{"CAPI317 two served versions with different schemas and conversion None", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachines."+group, func(m map[string]any) bool {
				set(t, m, nil, "spec", "conversion")
				return true
			})
		}, []key{{"CAPI317", E, comps, crd("foomachines"), "spec.conversion.strategy"}}},
		{"CAPI317 strategy None spelt out, and the unserved storage version counts", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachines."+group, func(m map[string]any) bool {
				set(t, m, map[string]any{"strategy": "None"}, "spec", "conversion")
				set(t, m, "v1alpha1", "metadata", "labels", "cluster.x-k8s.io/v1beta2") // core resolves a served version
				for _, v := range at(t, m, "spec", "versions").([]any) {
					if v.(map[string]any)["name"] == "v1beta1" {
						v.(map[string]any)["served"] = false
					}
				}
				return true
			})
		}, []key{{"CAPI317", E, comps, crd("foomachines"), "spec.conversion.strategy"}}},
		{"CAPI317 not on schemas that differ only in descriptions, nor on a version not served", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachines."+group, func(m map[string]any) bool {
				set(t, m, nil, "spec", "conversion")
				versions := at(t, m, "spec", "versions").([]any)
				schema, err := yaml.Marshal(at(t, versions[1], "schema"))
				if err != nil {
					t.Fatal(err)
				}
				var described map[string]any
				if err := yaml.Unmarshal(schema, &described); err != nil {
					t.Fatal(err)
				}
				set(t, described, "the v1alpha1 spec", "openAPIV3Schema", "properties", "spec", "description")
				set(t, versions[0], described, "schema")
				return true
			})
			fs.edit(t, comps, "CustomResourceDefinition", "fooclusters."+group, func(m map[string]any) bool {
				set(t, m, nil, "spec", "conversion")
				for _, v := range at(t, m, "spec", "versions").([]any) {
					if v.(map[string]any)["name"] == "v1alpha1" {
						v.(map[string]any)["served"] = false
					}
				}
				return true
			})
		}, []key{}},
		{"CAPI316 a cluster-scoped identity an InfraCluster's identityRef names, without a move label", func(t *testing.T, fs files) {
			addIdentity(t, fs, "")
		}, []key{{"CAPI316", W, comps, crd("fooclusteridentities"), "metadata.labels"}}},
		{"CAPI316 the identity's CRD carries move-hierarchy", func(t *testing.T, fs files) {
			addIdentity(t, fs, "    clusterctl.cluster.x-k8s.io/move-hierarchy: \"\"\n")
		}, []key{}},
		{"CAPI209 Deployment in an API version clusterctl cannot convert", func(t *testing.T, fs files) {
			fs.replace(t, comps, "apiVersion: apps/v1\n", "apiVersion: apps/v1beta2\n")
		}, []key{{"CAPI209", E, comps, "Deployment/foo-system/foo-controller-manager", "apiVersion"}}},
		{"CAPI211 the manager Deployment twice, the second copy with another image", func(t *testing.T, fs files) {
			fs.appendCopy(t, comps, "Deployment", "foo-controller-manager", func(m map[string]any) {
				set(t, m, "registry.example.com/foo/manager:v0.0.9", "spec", "template", "spec", "containers", 0, "image")
			})
		}, []key{
			// The second copy's image is the one judged: another release's
			// version, an error (the first copy's v0.1.0 would pass).
			{"CAPI211", E, comps, "Deployment/foo-system/foo-controller-manager", "metadata.name"},
			{"CAPI206", E, comps, "Deployment/foo-system/foo-controller-manager", "spec.template.spec.containers[0].image"},
		}},

		// CRDs.
		{"CAPI301 cluster-scoped InfraMachine; a cluster-scoped identity is fine", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachines."+group, func(m map[string]any) bool {
				set(t, m, "Cluster", "spec", "scope")
				return true
			})
		}, []key{{"CAPI301", E, comps, crd("foomachines"), "spec.scope"}}},
		{"CAPI302 InfraCluster without status subresource", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "fooclusters."+group, func(m map[string]any) bool {
				set(t, m, nil, "spec", "versions", 1, "subresources")
				return true
			})
		}, []key{{"CAPI302", E, comps, crd("fooclusters"), "spec.versions[1].subresources.status"}}},
		{"CAPI303 no contract label: error on a contract kind, warning on an identity", func(t *testing.T, fs files) {
			for _, plural := range []string{"foomachinetemplates", "fooidentities"} {
				fs.edit(t, comps, "CustomResourceDefinition", plural+"."+group, func(m map[string]any) bool {
					set(t, m, nil, "metadata", "labels", "cluster.x-k8s.io/v1beta2")
					return true
				})
			}
		}, []key{
			{"CAPI303", W, comps, crd("fooidentities"), "metadata.labels"},
			{"CAPI303", E, comps, crd("foomachinetemplates"), "metadata.labels"},
		}},
		{"CAPI304 contract label names a version the CRD does not serve", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "fooclustertemplates."+group, func(m map[string]any) bool {
				set(t, m, "v1alpha1_v1beta3", "metadata", "labels", "cluster.x-k8s.io/v1beta2")
				return true
			})
		}, []key{{"CAPI304", E, comps, crd("fooclustertemplates"), "metadata.labels[cluster.x-k8s.io/v1beta2]"}}},
		{"CAPI305 CRD name not CalculateCRDName; the skip annotation waives it", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "fooidentities."+group, func(m map[string]any) bool {
				set(t, m, "fooidentitys."+group, "metadata", "name")
				return true
			})
			fs.edit(t, comps, "CustomResourceDefinition", "foomachines."+group, func(m map[string]any) bool {
				set(t, m, "machines.foo", "metadata", "name")
				set(t, m, map[string]any{"clusterctl.cluster.x-k8s.io/skip-crd-name-preflight-check": ""}, "metadata", "annotations")
				return true
			})
		}, []key{{"CAPI305", E, comps, "CustomResourceDefinition/fooidentitys." + group, "metadata.name"}}},
		{"CAPI306 two storage versions", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "fooidentities."+group, func(m map[string]any) bool {
				versions := at(t, m, "spec", "versions").([]any)
				second := map[string]any{"name": "v1beta2", "served": true, "storage": true, "schema": at(t, versions[0], "schema")}
				set(t, m, append(versions, second), "spec", "versions")
				return true
			})
		}, []key{{"CAPI306", E, comps, crd("fooidentities"), "spec.versions[*].storage"}}},
		{"CAPI307 wrong listKind", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachinepools."+group, func(m map[string]any) bool {
				set(t, m, "FooMachinePools", "spec", "names", "listKind")
				return true
			})
		}, []key{{"CAPI307", E, comps, crd("foomachinepools"), "spec.names.listKind"}}},
		{"CAPI308 InfraCluster without endpoint port (v1beta2 contract: warning)", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "fooclusters."+group, func(m map[string]any) bool {
				set(t, m, nil, append(schema("spec", "controlPlaneEndpoint"), "properties", "port")...)
				return true
			})
		}, []key{{"CAPI308", W, comps, crd("fooclusters"), schemaField("spec.properties.controlPlaneEndpoint.properties.port")}}},
		{"CAPI308 InfraCluster labelled for v1beta1 only: endpoint is an error, status.ready is required", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "fooclusters."+group, func(m map[string]any) bool {
				set(t, m, nil, "metadata", "labels", "cluster.x-k8s.io/v1beta2")
				set(t, m, "v1beta1", "metadata", "labels", "cluster.x-k8s.io/v1beta1")
				set(t, m, nil, schema("spec", "controlPlaneEndpoint")...)
				return true
			})
		}, []key{
			{"CAPI314", W, comps, crd("fooclusters"), "metadata.labels[cluster.x-k8s.io/v1beta2]"},
			{"CAPI308", E, comps, crd("fooclusters"), schemaField("spec.properties.controlPlaneEndpoint.properties.host") + ", " + schemaField("spec.properties.controlPlaneEndpoint.properties.port")},
			{"CAPI309", E, comps, crd("fooclusters"), schemaField("status.properties.ready")},
		}},
		{"CAPI309 InfraMachine without status.initialization", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachines."+group, func(m map[string]any) bool {
				set(t, m, nil, append(schema("status"), "properties", "initialization")...)
				return true
			})
		}, []key{{"CAPI309", E, comps, crd("foomachines"), schemaField("status.properties.initialization.properties.provisioned")}}},
		{"CAPI310 InfraMachine providerID is not a string", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachines."+group, func(m map[string]any) bool {
				set(t, m, "integer", append(schema("spec", "providerID"), "type")...)
				return true
			})
		}, []key{{"CAPI310", E, comps, crd("foomachines"), schemaField("spec.properties.providerID")}}},
		{"CAPI311 InfraMachinePool without status.replicas", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachinepools."+group, func(m map[string]any) bool {
				set(t, m, nil, append(schema("status"), "properties", "replicas")...)
				return true
			})
		}, []key{{"CAPI311", E, comps, crd("foomachinepools"), schemaField("status.properties.replicas")}}},
		{"CAPI312 InfraMachinePool without a Template CRD", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachinepooltemplates."+group, func(map[string]any) bool { return false })
		}, []key{{"CAPI312", W, comps, crd("foomachinepools"), "spec.names.kind"}}},
		{"CAPI313 contract kind outside the cluster-api category", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachines."+group, func(m map[string]any) bool {
				set(t, m, nil, "spec", "names", "categories")
				return true
			})
		}, []key{{"CAPI313", I, comps, crd("foomachines"), "spec.names.categories"}}},
		{"CAPI314 contract kind not labelled for the series contract", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachinepools."+group, func(m map[string]any) bool {
				set(t, m, nil, "metadata", "labels", "cluster.x-k8s.io/v1beta2")
				set(t, m, "v1beta1", "metadata", "labels", "cluster.x-k8s.io/v1beta1")
				return true
			})
		}, []key{{"CAPI314", W, comps, crd("foomachinepools"), "metadata.labels[cluster.x-k8s.io/v1beta2]"}}},
		{"CAPI315 unquoted number and boolean where the CRD type has a string", func(t *testing.T, fs files) {
			fs.edit(t, comps, "CustomResourceDefinition", "foomachines."+group, func(m map[string]any) bool {
				set(t, m, 123, append(schema("spec", "providerID"), "description")...)
				set(t, m, true, "metadata", "labels", "example.com/managed")
				return true
			})
		}, []key{
			{"CAPI315", E, comps, crd("foomachines"), "metadata.labels[example.com/managed], " + schemaField("spec.properties.providerID.description")},
		}},

		// RBAC.
		{"CAPI401 aggregated role lacks watch on a foreign group", func(t *testing.T, fs files) {
			fs.replace(t, comps, "verbs: [get, list, watch, create", "verbs: [get, list, create")
		}, []key{
			{"CAPI401", E, comps, crd("fooclusters"), "spec.group"},
			{"CAPI401", E, comps, crd("fooclustertemplates"), "spec.group"},
			{"CAPI401", E, comps, crd("foomachinepools"), "spec.group"},
			{"CAPI401", E, comps, crd("foomachines"), "spec.group"},
			{"CAPI401", E, comps, crd("foomachinetemplates"), "spec.group"},
		}},

		// Templates.
		{"CAPI501 template whose only Namespace is the target namespace: a warning (kubectl delete -f deletes it)", func(t *testing.T, fs files) {
			fs[tmpl] += "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${NAMESPACE}\n"
		}, []key{{"CAPI501", W, tmpl, "Namespace/${NAMESPACE}", "kind"}}},
		{"CAPI501 template with a Namespace of a literal name", func(t *testing.T, fs files) {
			fs[tmpl] += "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: workloads\n"
		}, []key{{"CAPI501", E, tmpl, "Namespace/workloads", "kind"}}},
		{"CAPI501 template with the target namespace and a second one", func(t *testing.T, fs files) {
			fs[tmpl] += "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${NAMESPACE:=default}\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${CLUSTER_NAME}-addons\n"
		}, []key{
			{"CAPI501", E, tmpl, "Namespace/${CLUSTER_NAME}-addons", "kind"},
			{"CAPI501", E, tmpl, "Namespace/${NAMESPACE:=default}", "kind"},
		}},
		{"CAPI502 template object in a fixed namespace", func(t *testing.T, fs files) {
			fs.replace(t, tmpl, "kind: FooCluster\nmetadata:\n  name: ${CLUSTER_NAME}\n", "kind: FooCluster\nmetadata:\n  name: ${CLUSTER_NAME}\n  namespace: default\n")
		}, []key{{"CAPI502", W, tmpl, "FooCluster/default/${CLUSTER_NAME}", "metadata.namespace"}}},
		{"CAPI503 template without a Cluster", func(t *testing.T, fs files) {
			fs.edit(t, tmpl, "Cluster", "${CLUSTER_NAME}", func(map[string]any) bool { return false })
		}, []key{{"CAPI503", W, tmpl, "", ""}}},
		{"CAPI504 topology class not shipped", func(t *testing.T, fs files) {
			fs.replace(t, topo, "name: quick", "name: slow")
		}, []key{{"CAPI504", E, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name"}}},
		{"CAPI504 v1beta1 topology class not shipped", func(t *testing.T, fs files) {
			fs.replace(t, topo, "    classRef:\n      name: quick\n", "    class: slow\n")
			fs.replace(t, topo, "cluster.x-k8s.io/v1beta2", "cluster.x-k8s.io/v1beta1")
		}, []key{{"CAPI504", E, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.class"}}},
		{"CAPI506 v1beta2 topology class name empty", func(t *testing.T, fs files) {
			fs.replace(t, topo, "name: quick", "name: \"\"")
		}, []key{{"CAPI506", E, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name"}}},
		{"CAPI506 v1beta2 topology with v1beta1's class field", func(t *testing.T, fs files) {
			fs.replace(t, topo, "    classRef:\n      name: quick\n", "    class: quick\n")
		}, []key{{"CAPI506", E, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name"}}},
		{"CAPI506 v1beta1 topology without class", func(t *testing.T, fs files) {
			fs.replace(t, topo, "    classRef:\n      name: quick\n", "")
			fs.replace(t, topo, "cluster.x-k8s.io/v1beta2", "cluster.x-k8s.io/v1beta1")
		}, []key{{"CAPI506", E, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.class"}}},
		{"CAPI507 a template kind of the provider's group without CRD", func(t *testing.T, fs files) {
			fs.replace(t, tmpl, "kind: FooCluster\nmetadata:", "kind: FooClustr\nmetadata:")
		}, []key{{"CAPI507", W, tmpl, "FooClustr/${CLUSTER_NAME}", "kind"}}},
		{"CAPI507 a ClusterClass reference to a kind of the provider's group without CRD", func(t *testing.T, fs files) {
			fs.replace(t, ccFile, "      kind: FooClusterTemplate\n", "      kind: FooClusterTemplat\n")
		}, []key{{"CAPI507", W, ccFile, "ClusterClass/quick", "spec.infrastructure.templateRef.kind"}}},
		{"CAPI503 an empty template", func(t *testing.T, fs files) {
			fs[tmpl] = "---\n"
		}, []key{{"CAPI503", W, tmpl, "", ""}}},
		{"CAPI604 an empty ClusterClass file", func(t *testing.T, fs files) {
			fs[ccFile] = "---\n---\n"
		}, []key{{"CAPI604", W, ccFile, "", ""}}},
		{"CAPI605 a ClusterClass variable without required", func(t *testing.T, fs files) {
			fs.replace(t, ccFile, "      name: quick-cluster\n---\n", "      name: quick-cluster\n  variables:\n  - name: region\n    required: true\n    schema: {openAPIV3Schema: {type: string}}\n  - name: flavor\n    schema: {openAPIV3Schema: {type: string}}\n---\n")
		}, []key{{"CAPI605", E, ccFile, "ClusterClass/quick", "spec.variables[1].required"}}},
		{"CAPI605 a v1beta1 ClusterClass inline in a template, which only Cluster API v1.10 and older took without required", func(t *testing.T, fs files) {
			fs[tmpl] += "---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata:\n  name: inline\nspec:\n  infrastructure:\n    ref: {apiVersion: infrastructure.foo.example.com/v1beta1, kind: FooClusterTemplate, name: quick-cluster}\n  variables:\n  - name: region\n    schema: {openAPIV3Schema: {type: string}}\n"
		}, []key{{"CAPI605", E, tmpl, "ClusterClass/inline", "spec.variables[0].required"}}},
		{"CAPI605 not on required: false", func(t *testing.T, fs files) {
			fs.replace(t, ccFile, "      name: quick-cluster\n---\n", "      name: quick-cluster\n  variables:\n  - name: region\n    required: false\n    schema: {openAPIV3Schema: {type: string}}\n---\n")
		}, []key{}},
		{"CAPI505 topology class from a variable", func(t *testing.T, fs files) {
			fs.replace(t, topo, "name: quick", "name: ${CLASS:=quick}")
		}, []key{{"CAPI505", W, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name"}}},
		{"CAPI505 topology class from a variable, the class shipped inline and not as a file", func(t *testing.T, fs files) {
			fs.replace(t, topo, "name: quick", "name: ${CLASS:=inline}")
			fs[topo] += "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata:\n  name: ${CLASS:=inline}\n"
		}, []key{{"CAPI505", E, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name"}}},

		// ClusterClass files.
		{"CAPI601 variable in a ClusterClass file", func(t *testing.T, fs files) {
			fs.replace(t, ccFile, "region: west", "region: ${FOO_REGION}")
		}, []key{{"CAPI601", W, ccFile, "FooClusterTemplate/quick-cluster", "spec.template.spec.region"}}},
		{"CAPI602 namespace in a ClusterClass file", func(t *testing.T, fs files) {
			fs.replace(t, ccFile, "name: quick-cluster\nspec:", "name: quick-cluster\n  namespace: default\nspec:")
		}, []key{{"CAPI602", W, ccFile, "FooClusterTemplate/default/quick-cluster", "metadata.namespace"}}},
		{"CAPI603 namespace in a template reference", func(t *testing.T, fs files) {
			fs.replace(t, ccFile, "      name: quick-cluster\n", "      name: quick-cluster\n      namespace: default\n")
		}, []key{{"CAPI603", W, ccFile, "ClusterClass/quick", "spec.infrastructure.templateRef.namespace"}}},
		{"CAPI604 ClusterClass file named after another class", func(t *testing.T, fs files) {
			fs.rename(t, ccFile, "clusterclass-fast.yaml")
		}, []key{
			{"CAPI504", E, topo, "Cluster/${CLUSTER_NAME}", "spec.topology.classRef.name"},
			{"CAPI604", W, "clusterclass-fast.yaml", "ClusterClass/quick", "metadata.name"},
		}},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := readDir(t, "testdata/release")
			c.edit(t, fs)
			r := contract.Lint(fs.release(t, label, version), contract.Options{})
			want := c.want
			sortKeys(want)
			if diff := cmp.Diff(want, keys(r.Findings, prefix)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nreport:\n%s", diff, text(r))
			}
		})
		for _, k := range c.want {
			covered[k.Rule] = true
		}
	}
	for _, r := range contract.Rules() {
		// The upgrade rules compare two releases: package diff's
		// TestCompare_Rules breaks a release once for each.
		if !covered[r.ID] && r.Area != contract.AreaUpgrade {
			t.Errorf("rule %s has no failing case", r.ID)
		}
	}
}

// addIdentity adds a cluster-scoped FooClusterIdentity CRD with the extra
// labels, and a spec.identityRef naming it to every version of FooCluster,
// as CAPA's AWSCluster names its identities.
func addIdentity(t *testing.T, fs files, labels string) {
	t.Helper()
	fs[comps] += strings.Replace(crdDoc("FooClusterIdentity", "fooclusteridentities", "    cluster.x-k8s.io/v1beta2: v1beta1\n"+labels,
		"  - name: v1beta1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n"), "scope: Namespaced", "scope: Cluster", 1)
	fs.replace(t, comps, "resources: [foomachinepooltemplates]", "resources: [foomachinepooltemplates, fooclusteridentities]")
	fs.edit(t, comps, "CustomResourceDefinition", "fooclusters."+group, func(m map[string]any) bool {
		child := func(m map[string]any, k string) map[string]any {
			c, ok := m[k].(map[string]any)
			if !ok {
				c = map[string]any{}
				m[k] = c
			}
			return c
		}
		for _, v := range at(t, m, "spec", "versions").([]any) {
			schema := child(child(v.(map[string]any), "schema"), "openAPIV3Schema")
			props := child(child(child(schema, "properties"), "spec"), "properties")
			props["identityRef"] = map[string]any{"type": "object", "properties": map[string]any{
				"kind": map[string]any{"type": "string", "enum": []any{"FooClusterIdentity", "Secret"}},
				"name": map[string]any{"type": "string"},
			}}
		}
		return true
	})
}
