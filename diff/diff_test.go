package diff_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/diff"
	"github.com/capirepo/capirepo/release"
)

const (
	core      = "cluster-api"
	coreComps = "cluster-api/v1.14.2/core-components.yaml"
	coreMeta  = "cluster-api/v1.14.2/metadata.yaml"
	md        = "machinedeployments.cluster.x-k8s.io"
	kcfg      = "kubeadmconfigs.bootstrap.cluster.x-k8s.io"
	kcfgComps = "bootstrap-kubeadm/v1.14.2/bootstrap-components.yaml"
)

// TestCompare_RealPair: cluster-api v1.13.0 to v1.14.2, as both trees build,
// upgrades cleanly: not one finding.
func TestCompare_RealPair(t *testing.T) {
	old, new := realPair(t)
	res := diff.Compare(old, new)
	if diff := cmp.Diff([]key{}, keys(res.Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if len(res.Notes) > 0 {
		t.Errorf("notes: %v", res.Notes)
	}
}

const quickClass = `apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata:
  name: quick
spec:
  controlPlane:
    templateRef:
      apiVersion: controlplane.cluster.x-k8s.io/v1beta2
      kind: KubeadmControlPlaneTemplate
      name: quick-control-plane
  infrastructure:
    templateRef:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
      kind: DockerClusterTemplate
      name: quick-cluster
  workers:
    machineDeployments:
    - class: default-worker
      bootstrap:
        templateRef:
          apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
          kind: KubeadmConfigTemplate
          name: quick-worker
      infrastructure:
        templateRef:
          apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
          kind: DockerMachineTemplate
          name: quick-worker
  variables:
  - name: imageRepository
    required: false
    schema: {openAPIV3Schema: {type: string}}
  - name: region
    required: false
    schema: {openAPIV3Schema: {type: string}}
`

// The same class in v1beta1's form: ref: under template:.
const quickClassV1beta1 = `apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata:
  name: quick
spec:
  controlPlane:
    ref:
      apiVersion: controlplane.cluster.x-k8s.io/v1beta1
      kind: KubeadmControlPlaneTemplate
      name: quick-control-plane
  infrastructure:
    ref:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: DockerClusterTemplate
      name: quick-cluster
  workers:
    machineDeployments:
    - class: default-worker
      template:
        bootstrap:
          ref:
            apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
            kind: KubeadmConfigTemplate
            name: quick-worker
        infrastructure:
          ref:
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerMachineTemplate
            name: quick-worker
  variables:
  - name: imageRepository
    required: false
    schema: {openAPIV3Schema: {type: string}}
  - name: region
    required: false
    schema: {openAPIV3Schema: {type: string}}
`

func addFile(t *testing.T, rel *release.Release, label, name, data string) {
	t.Helper()
	p, ok := rel.Provider(label)
	if !ok {
		t.Fatalf("no provider %s", label)
	}
	if err := p.Add(name, []byte(data)); err != nil {
		t.Fatal(err)
	}
}

// dropCRD removes a CRD from a release's components.
func dropCRD(t *testing.T, rel *release.Release, name string) {
	t.Helper()
	for _, p := range rel.Providers {
		docs := strings.Split(string(p.Components().Data), "\n---\n")
		n := len(docs)
		docs = slices.DeleteFunc(docs, func(d string) bool {
			return strings.Contains(d, "kind: CustomResourceDefinition") && strings.Contains(d, "\n  name: "+name+"\n")
		})
		if len(docs) < n {
			if err := p.Add(p.ComponentsFile, []byte(strings.Join(docs, "\n---\n"))); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no CRD %s", name)
}

// storeV1beta1 makes the MachineDeployment CRD of a release store v1beta1,
// as cluster-api releases before v1.11 did.
func storeV1beta1(t *testing.T, rel *release.Release) {
	editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
		version(c, "v1beta1").Storage = true
		version(c, "v1beta2").Storage = false
	})
}

// TestCompare_Rules breaks the real cluster-api v1.14.2 (or v1.13.0) once per
// case and checks exactly which findings appear: each breaking change is an
// error naming the CRD and the version. Every upgrade rule has a case.
func TestCompare_Rules(t *testing.T) {
	const series13 = "  - major: 1\n    minor: 13\n    contract: v1beta2\n"
	cases := []struct {
		name     string
		old, new func(t *testing.T, rel *release.Release)
		want     []key
		// providers are the providers compared; default: core alone.
		providers []string
	}{
		{name: "CAPI701 metadata without the old release's series",
			new: func(t *testing.T, rel *release.Release) {
				editFile(t, rel, core, "metadata.yaml", func(s string) string { return replace(t, s, series13, "") })
			},
			want: []key{{coreMeta, "CAPI701", E, "Metadata", "releaseSeries"}}},
		{name: "CAPI701 metadata without the new version's series",
			new: func(t *testing.T, rel *release.Release) {
				editFile(t, rel, core, "metadata.yaml", func(s string) string {
					return replace(t, s, "  - major: 1\n    minor: 14\n    contract: v1beta2\n", "")
				})
			},
			want: []key{{coreMeta, "CAPI701", E, "Metadata", "releaseSeries"}}},
		{name: "CAPI702 a contract clusterctl cannot upgrade to",
			new: func(t *testing.T, rel *release.Release) {
				editFile(t, rel, core, "metadata.yaml", func(s string) string {
					return replace(t, s, "minor: 14\n    contract: v1beta2", "minor: 14\n    contract: v1beta3")
				})
			},
			want: []key{{coreMeta, "CAPI702", E, "Metadata", "releaseSeries"}}},
		{name: "CAPI702 a contract change, and a series whose contract changed, are warnings",
			old: func(t *testing.T, rel *release.Release) {
				editFile(t, rel, core, "metadata.yaml", func(s string) string {
					return replace(t, s, "minor: 13\n    contract: v1beta2", "minor: 13\n    contract: v1beta1")
				})
			},
			want: []key{
				{coreMeta, "CAPI702", W, "Metadata", "releaseSeries"},
				{coreMeta, "CAPI702", W, "Metadata", "releaseSeries"},
			}},
		{name: "CAPI703 storage version removed",
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
					c.Spec.Versions = slices.DeleteFunc(c.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == "v1beta2" })
					c.Spec.Versions[0].Storage = true
				})
			},
			want: []key{{coreComps, "CAPI703", E, crd(md), "spec.versions[v1beta2]"}}},
		{name: "CAPI211 a CRD twice: the cluster holds the second copy, which drops the storage version",
			new: func(t *testing.T, rel *release.Release) {
				appendCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
					c.Spec.Versions = slices.DeleteFunc(c.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == "v1beta2" })
					c.Spec.Versions[0].Storage = true
				})
			},
			want: []key{
				{coreComps, "CAPI211", E, crd(md), "metadata.name"},
				{coreComps, "CAPI703", E, crd(md), "spec.versions[v1beta2]"},
			}},
		{name: "CAPI306 two storage versions",
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) { version(c, "v1beta1").Storage = true })
			},
			want: []key{{coreComps, "CAPI306", E, crd(md), "spec.versions[*].storage"}}},
		{name: "CAPI704 served version removed without unserving it first",
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
					c.Spec.Versions = slices.DeleteFunc(c.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == "v1beta1" })
				})
			},
			want: []key{{coreComps, "CAPI704", E, crd(md), "spec.versions[v1beta1]"}}},
		{name: "CAPI705 scope changed",
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = apiextensionsv1.ClusterScoped })
			},
			want: []key{{coreComps, "CAPI705", E, crd(md), "spec.scope"}}},
		{name: "CAPI705 plural changed: a CRD of another name",
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
					c.Name, c.Spec.Names.Plural = "machinedeploymentz.cluster.x-k8s.io", "machinedeploymentz"
				})
			},
			want: []key{{coreComps, "CAPI705", E, crd(md), "spec.names.plural"}}},
		{name: "CAPI706 CRD dropped",
			new:  func(t *testing.T, rel *release.Release) { dropCRD(t, rel, md) },
			want: []key{{coreComps, "CAPI706", E, crd(md), ""}}},
		{name: "CAPI707 field removed",
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
					setProp(c, "v1beta2", func(s *apiextensionsv1.JSONSchemaProps) { delete(s.Properties, "paused") }, "spec")
				})
			},
			want: []key{{coreComps, "CAPI707", E, crd(md), "v1beta2 spec.paused"}}},
		{name: "CAPI707 field newly required without a default",
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
					setProp(c, "v1beta2", func(s *apiextensionsv1.JSONSchemaProps) { s.Required = append(s.Required, "paused") }, "spec")
				})
			},
			want: []key{{coreComps, "CAPI707", E, crd(md), "v1beta2 spec.paused"}}},
		{name: "CAPI707 type changed",
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
					setProp(c, "v1beta2", func(s *apiextensionsv1.JSONSchemaProps) { s.Type, s.Format = "string", "" }, "spec", "replicas")
				})
			},
			want: []key{{coreComps, "CAPI707", E, crd(md), "v1beta2 spec.replicas"}}},
		{name: "CAPI707 enum value removed",
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
					setProp(c, "v1beta2", func(s *apiextensionsv1.JSONSchemaProps) { s.Enum = s.Enum[:2] }, "spec", "deletion", "order")
				})
			},
			want: []key{{coreComps, "CAPI707", E, crd(md), "v1beta2 spec.deletion.order"}}},
		{name: "CAPI708 a new limit and a new enum are warnings",
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
					setProp(c, "v1beta2", func(s *apiextensionsv1.JSONSchemaProps) { hundred := 100.0; s.Maximum = &hundred }, "spec", "replicas")
					setProp(c, "v1beta2", func(s *apiextensionsv1.JSONSchemaProps) {
						s.Enum = []apiextensionsv1.JSON{{Raw: []byte(`"a"`)}}
					}, "spec", "clusterName")
				})
			},
			want: []key{
				{coreComps, "CAPI708", W, crd(md), "v1beta2 spec.clusterName"},
				{coreComps, "CAPI708", W, crd(md), "v1beta2 spec.replicas"},
			}},
		// Versions the new release serves with different schemas and no
		// conversion are the release's own finding, the lint's CAPI317
		// (lint --against and release report it once): not the upgrade's.
		{name: "CAPI709 not on versions the new release serves, the lint's CAPI317",
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Conversion = nil })
			},
			want: []key{}},
		{name: "CAPI709 objects stored in a version the new release no longer serves, converted with strategy None",
			old: storeV1beta1,
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
					c.Spec.Conversion = nil
					version(c, "v1beta1").Served = false
				})
			},
			want: []key{{coreComps, "CAPI709", E, crd(md), "spec.conversion.strategy"}}},
		{name: "CAPI709 a warning when the old release converted them with strategy None already",
			old: func(t *testing.T, rel *release.Release) {
				storeV1beta1(t, rel)
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Conversion = nil })
			},
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
					c.Spec.Conversion = nil
					version(c, "v1beta1").Served = false
				})
			},
			want: []key{{coreComps, "CAPI709", W, crd(md), "spec.conversion.strategy"}}},
		{name: "CAPI710 contract labels dropped",
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, kcfg, func(c *apiextensionsv1.CustomResourceDefinition) {
					delete(c.Labels, "cluster.x-k8s.io/v1beta1")
					delete(c.Labels, "cluster.x-k8s.io/v1beta2")
				})
			},
			want: []key{{kcfgComps, "CAPI710", E, crd(kcfg), "metadata.labels"}}, providers: []string{"bootstrap-kubeadm"}},
		{name: "CAPI710 contract label naming a version the CRD does not serve",
			new: func(t *testing.T, rel *release.Release) {
				editCRD(t, rel, kcfg, func(c *apiextensionsv1.CustomResourceDefinition) { c.Labels["cluster.x-k8s.io/v1beta2"] = "v1beta3" })
			},
			want: []key{{kcfgComps, "CAPI710", E, crd(kcfg), "metadata.labels[cluster.x-k8s.io/v1beta2]"}}, providers: []string{"bootstrap-kubeadm"}},
		{name: "CAPI711 Namespace renamed",
			new: func(t *testing.T, rel *release.Release) {
				editFile(t, rel, core, "core-components.yaml", func(s string) string {
					return replace(t, s, "control-plane: controller-manager\n  name: capi-system\n", "control-plane: controller-manager\n  name: capi-system2\n")
				})
			},
			want: []key{{coreComps, "CAPI711", W, "Namespace/capi-system2", "metadata.name"}}},
		{name: "CAPI711 Namespace renamed with everything in it: one change, one warning",
			new: func(t *testing.T, rel *release.Release) {
				editFile(t, rel, core, "core-components.yaml", func(s string) string {
					s = replace(t, s, "control-plane: controller-manager\n  name: capi-system\n", "control-plane: controller-manager\n  name: capi-system2\n")
					return strings.ReplaceAll(s, "namespace: capi-system\n", "namespace: capi-system2\n")
				})
			},
			want: []key{{coreComps, "CAPI711", W, "Namespace/capi-system2", "metadata.name"}}},
		{name: "CAPI711 provider label changed",
			new: func(t *testing.T, rel *release.Release) {
				p, _ := rel.Provider("bootstrap-kubeadm")
				p.ID.Name = "kubeadm2"
			},
			want: []key{{"bootstrap-kubeadm2/v1.14.2/bootstrap-components.yaml", "CAPI711", W, "", ""}}, providers: []string{"bootstrap-kubeadm"}},
		{name: "CAPI712 a new variable without a default",
			new: func(t *testing.T, rel *release.Release) {
				editFile(t, rel, core, "core-components.yaml", func(s string) string {
					return replace(t, s, "--diagnostics-address=", "--token=${CAPI_NEW_TOKEN}\n        - --diagnostics-address=")
				})
			},
			want: []key{{coreComps, "CAPI712", W, "", ""}}},
		{name: "CAPI713 a ClusterClass drops a variable and changes a template kind",
			old: func(t *testing.T, rel *release.Release) {
				addFile(t, rel, core, "clusterclass-quick.yaml", quickClassV1beta1)
			},
			new: func(t *testing.T, rel *release.Release) {
				s := strings.Replace(quickClass, "kind: DockerClusterTemplate", "kind: FooClusterTemplate", 1)
				s = replace(t, s, "  - name: region\n    required: false\n    schema: {openAPIV3Schema: {type: string}}\n", "")
				addFile(t, rel, core, "clusterclass-quick.yaml", s)
			},
			want: []key{
				{"cluster-api/v1.14.2/clusterclass-quick.yaml", "CAPI713", W, "ClusterClass/quick", "spec.infrastructure.templateRef"},
				{"cluster-api/v1.14.2/clusterclass-quick.yaml", "CAPI713", W, "ClusterClass/quick", "spec.variables"},
			}},
		{name: "CAPI714 core and kubeadm more than three minors at once",
			old: func(t *testing.T, rel *release.Release) {
				rel.Version = "v1.10.0"
				for _, p := range rel.Providers {
					p.Version = "v1.10.0"
				}
			},
			want: []key{
				{"bootstrap-kubeadm/v1.14.2/metadata.yaml", "CAPI714", E, "", ""},
				{"bootstrap-kubeadm/v1.14.2/metadata.yaml", "CAPI702", W, "Metadata", "releaseSeries"},
				{coreMeta, "CAPI714", E, "", ""},
				{coreMeta, "CAPI702", W, "Metadata", "releaseSeries"},
				{"control-plane-kubeadm/v1.14.2/metadata.yaml", "CAPI714", E, "", ""},
				{"control-plane-kubeadm/v1.14.2/metadata.yaml", "CAPI702", W, "Metadata", "releaseSeries"},
			}, providers: []string{core, "bootstrap-kubeadm", "control-plane-kubeadm"}},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, new := realPair(t)
			if c.providers == nil {
				c.providers = []string{core}
			}
			only(old, c.providers...)
			only(new, c.providers...)
			if c.old != nil {
				c.old(t, old)
			}
			if c.new != nil {
				c.new(t, new)
			}
			res := diff.Compare(old, new)
			if diff := cmp.Diff(c.want, keys(res.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", diff, messages(res))
			}
			// An error about a CRD names it (the object) and the API version
			// (the field, and the message says it again); the CRD-wide
			// ones (identity, a CRD dropped) name the versions they affect
			// or none.
			for _, f := range res.Findings {
				if f.Severity != contract.Error || !strings.HasPrefix(f.Object, "CustomResourceDefinition/") || f.Rule == contract.RuleDuplicateObject {
					continue
				}
				v := apiVersion.FindString(f.Field)
				if v == "" && f.Rule != "CAPI705" && f.Rule != "CAPI706" {
					v = apiVersion.FindString(f.Message)
				}
				if (v == "" && f.Rule != "CAPI705" && f.Rule != "CAPI706") || !strings.Contains(f.Message, v) {
					t.Errorf("%s does not name the API version: %s", f.Rule, f)
				}
			}
		})
		for _, k := range c.want {
			covered[k.Rule] = true
		}
	}
	for _, r := range contract.Rules() {
		if r.Area == contract.AreaUpgrade && !covered[r.ID] && !slices.Contains(templateUserRules, r.ID) {
			t.Errorf("rule %s has no failing case", r.ID)
		}
	}
}

// only keeps the named providers of a release: a case compares the providers
// it changes, which keeps the suite fast.
func only(rel *release.Release, labels ...string) {
	rel.Providers = slices.DeleteFunc(rel.Providers, func(p *release.Provider) bool { return !slices.Contains(labels, p.Label()) })
}

var apiVersion = regexp.MustCompile(`v[0-9]+(alpha|beta)[0-9]+`)

func messages(res diff.Result) string {
	var b strings.Builder
	for _, f := range res.Findings {
		b.WriteString(f.String() + "\n")
	}
	return b.String()
}

// TestCompare_NotFindings: what the issue lists as no finding changes
// nothing (each of these upgrades is clean).
func TestCompare_NotFindings(t *testing.T) {
	cases := []struct {
		name string
		new  func(t *testing.T, rel *release.Release)
	}{
		{"a new served version", func(t *testing.T, rel *release.Release) {
			editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
				v := *version(c, "v1beta2").DeepCopy()
				v.Name, v.Storage = "v1beta3", false
				c.Spec.Versions = append(c.Spec.Versions, v)
			})
		}},
		{"a new optional field", func(t *testing.T, rel *release.Release) {
			editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
				setProp(c, "v1beta2", func(s *apiextensionsv1.JSONSchemaProps) {
					s.Properties["newField"] = apiextensionsv1.JSONSchemaProps{Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"a"`)}}}
				}, "spec")
			})
		}},
		{"a new required field with a default", func(t *testing.T, rel *release.Release) {
			editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
				setProp(c, "v1beta2", func(s *apiextensionsv1.JSONSchemaProps) {
					s.Properties["newField"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"a"`)}}
					s.Required = append(s.Required, "newField")
				}, "spec")
			})
		}},
		{"description changes", func(t *testing.T, rel *release.Release) {
			editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
				setProp(c, "v1beta2", func(s *apiextensionsv1.JSONSchemaProps) { s.Description = "changed" }, "spec", "replicas")
				setProp(c, "v1beta1", func(s *apiextensionsv1.JSONSchemaProps) { s.Description = "changed" }, "spec")
			})
		}},
		{"enum values added, and a limit or an enum dropped", func(t *testing.T, rel *release.Release) {
			editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) {
				setProp(c, "v1beta2", func(s *apiextensionsv1.JSONSchemaProps) {
					s.Enum = append(s.Enum, apiextensionsv1.JSON{Raw: []byte(`"Youngest"`)})
				}, "spec", "deletion", "order")
				setProp(c, "v1beta2", func(s *apiextensionsv1.JSONSchemaProps) { s.Enum = nil }, "spec", "rollout", "strategy", "type")
				setProp(c, "v1beta2", func(s *apiextensionsv1.JSONSchemaProps) { s.MaxLength, s.MinLength = nil, nil }, "spec", "clusterName")
			})
		}},
		{"a version that is not the storage version set served: false", func(t *testing.T, rel *release.Release) {
			editCRD(t, rel, md, func(c *apiextensionsv1.CustomResourceDefinition) { version(c, "v1beta1").Served = false })
		}},
		{"a new CRD", func(t *testing.T, rel *release.Release) {
			editFile(t, rel, core, "core-components.yaml", func(s string) string {
				return s + "\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: foos.cluster.x-k8s.io\nspec:\n  group: cluster.x-k8s.io\n  names: {kind: Foo, listKind: FooList, plural: foos, singular: foo}\n  scope: Namespaced\n  versions:\n  - name: v1beta2\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object}}\n"
			})
		}},
		{"a new variable with a default", func(t *testing.T, rel *release.Release) {
			editFile(t, rel, core, "core-components.yaml", func(s string) string {
				return replace(t, s, "--diagnostics-address=", "--level=${CAPI_NEW_LEVEL:=2}\n        - --diagnostics-address=")
			})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, new := realPair(t)
			only(old, core)
			only(new, core)
			c.new(t, new)
			if res := diff.Compare(old, new); len(res.Findings) > 0 || len(res.Notes) > 0 {
				t.Errorf("findings:\n%s%v", messages(res), res.Notes)
			}
		})
	}
}

// TestCompare_Deterministic: findings come sorted and once each, run after
// run (crdify's own runner orders some of its messages at random).
func TestCompare_Deterministic(t *testing.T) {
	old, new := realPair(t)
	only(old, core)
	only(new, core)
	editCRD(t, new, md, func(c *apiextensionsv1.CustomResourceDefinition) {
		setProp(c, "v1beta2", func(s *apiextensionsv1.JSONSchemaProps) {
			delete(s.Properties, "paused")
			delete(s.Properties, "replicas")
			s.Required = append(s.Required, "rollout", "deletion", "remediation")
		}, "spec")
	})
	first := messages(diff.Compare(old, new))
	if strings.Count(first, "CAPI707") != 5 {
		t.Fatalf("want 5 CAPI707 findings:\n%s", first)
	}
	for range 3 {
		if got := messages(diff.Compare(old, new)); got != first {
			t.Fatalf("another run gave other findings:\n%s\nthen:\n%s", first, got)
		}
	}
}

// poolCRD is the shape kustomize commonLabels give an IPAM pool kind (as
// cluster-api-ipam-provider-in-cluster's InClusterIPPool): the contract label
// config/crd stamps on every CRD, naming v1beta1, on a CRD that serves only
// v1alpha2. Core Cluster API never resolves a pool: nothing reads the label.
const poolCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: inclusterippools.ipam.cluster.x-k8s.io
  labels:
    cluster.x-k8s.io/provider: cluster-api
    cluster.x-k8s.io/v1beta1: v1beta1
spec:
  group: ipam.cluster.x-k8s.io
  names: {kind: InClusterIPPool, listKind: InClusterIPPoolList, plural: inclusterippools, singular: inclusterippool}
  scope: Namespaced
  versions:
  - name: v1alpha2
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object}}
`

// TestCompare_ContractLabelOnlyWhatTheUpgradeBreaks: CAPI710 is an upgrade
// error only where a label that led core Cluster API to a version the old
// release served leads to none the new one serves. A label that led nowhere
// in the old release already, and a CRD new in the new one, are the lint's
// findings (CAPI303, CAPI304), not the upgrade's.
func TestCompare_ContractLabelOnlyWhatTheUpgradeBreaks(t *testing.T) {
	addPool := func(t *testing.T, rel *release.Release) {
		editFile(t, rel, core, "core-components.yaml", func(s string) string { return s + "\n---\n" + poolCRD })
	}
	cases := []struct {
		name     string
		old, new func(t *testing.T, rel *release.Release)
		want     []key
	}{
		{name: "a label naming a version the CRD serves in neither release", old: addPool, new: addPool, want: []key{}},
		{name: "a CRD new in the new release whose label names a version it does not serve", new: addPool, want: []key{}},
		{name: "a label already unresolvable in the old release, dropped in the new one", old: addPool,
			new: func(t *testing.T, rel *release.Release) {
				addPool(t, rel)
				editCRD(t, rel, "inclusterippools.ipam.cluster.x-k8s.io", func(c *apiextensionsv1.CustomResourceDefinition) {
					delete(c.Labels, "cluster.x-k8s.io/v1beta1")
				})
			}, want: []key{}},
		{name: "a label that resolved in the old release and no longer does",
			old: func(t *testing.T, rel *release.Release) {
				addPool(t, rel)
				editCRD(t, rel, "inclusterippools.ipam.cluster.x-k8s.io", func(c *apiextensionsv1.CustomResourceDefinition) {
					c.Labels["cluster.x-k8s.io/v1beta1"] = "v1alpha2"
				})
			}, new: addPool,
			want: []key{{coreComps, "CAPI710", E, crd("inclusterippools.ipam.cluster.x-k8s.io"), "metadata.labels[cluster.x-k8s.io/v1beta1]"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, new := realPair(t)
			only(old, core)
			only(new, core)
			if c.old != nil {
				c.old(t, old)
			}
			c.new(t, new)
			res := diff.Compare(old, new)
			if diff := cmp.Diff(c.want, keys(res.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", diff, messages(res))
			}
		})
	}
}

// TestCompare_MoveLabelDropped: a CRD that carried clusterctl's move label in
// the old release and not in the new one is a warning (CAPI316); kept, or
// never there, it is none.
func TestCompare_MoveLabelDropped(t *testing.T) {
	const ext = "extensionconfigs.runtime.cluster.x-k8s.io" // cluster-scoped, as identities are
	label := func(t *testing.T, rel *release.Release) {
		editCRD(t, rel, ext, func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Labels["clusterctl.cluster.x-k8s.io/move-hierarchy"] = ""
		})
	}
	for _, c := range []struct {
		name     string
		old, new func(t *testing.T, rel *release.Release)
		want     []key
	}{
		{"dropped", label, nil, []key{{coreComps, "CAPI316", W, crd(ext), "metadata.labels[clusterctl.cluster.x-k8s.io/move-hierarchy]"}}},
		{"kept", label, label, []key{}},
		{"new", nil, label, []key{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			old, new := realPair(t)
			only(old, core)
			only(new, core)
			for _, f := range []struct {
				fn  func(*testing.T, *release.Release)
				rel *release.Release
			}{{c.old, old}, {c.new, new}} {
				if f.fn != nil {
					f.fn(t, f.rel)
				}
			}
			res := diff.Compare(old, new)
			if diff := cmp.Diff(c.want, keys(res.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", diff, messages(res))
			}
		})
	}
}
