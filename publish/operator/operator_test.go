package operator

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"

	"github.com/capirepo/capirepo/provider"
)

func TestSelect_EveryProviderTypeByTheOperatorsFileNames(t *testing.T) {
	types := []struct {
		typ    provider.Type
		opType string // GenericProvider.GetType in the operator's api/v1alpha2
	}{
		{clusterctlv1.CoreProviderType, "core"},
		{clusterctlv1.BootstrapProviderType, "bootstrap"},
		{clusterctlv1.ControlPlaneProviderType, "controlplane"},
		{clusterctlv1.InfrastructureProviderType, "infrastructure"},
		{clusterctlv1.IPAMProviderType, "ipam"},
		{clusterctlv1.RuntimeExtensionProviderType, "runtimeextension"},
		{clusterctlv1.AddonProviderType, "addon"},
	}
	for _, tt := range types {
		id := provider.ID{Name: "x", Type: tt.typ}
		if tt.typ == clusterctlv1.CoreProviderType {
			id.Name = "cluster-api"
		}
		full := tt.opType + "-" + id.Name + "-v1.2.3-"
		cases := []struct {
			name           string
			files          []string
			wantMeta, want string
		}{
			{"typed", []string{"metadata.yaml", tt.opType + "-components.yaml"}, "metadata.yaml", tt.opType + "-components.yaml"},
			{"generic components", []string{"metadata.yaml", "components.yaml"}, "metadata.yaml", "components.yaml"},
			{"versioned first", []string{"metadata.yaml", full + "metadata.yaml", tt.opType + "-components.yaml", full + "components.yaml", "components.yaml"},
				full + "metadata.yaml", full + "components.yaml"},
			{"typed over generic", []string{"metadata.yaml", tt.opType + "-components.yaml", "components.yaml"}, "metadata.yaml", tt.opType + "-components.yaml"},
		}
		for _, c := range cases {
			t.Run(tt.opType+"/"+c.name, func(t *testing.T) {
				files := map[string][]byte{}
				for _, f := range c.files {
					files[f] = []byte(f)
				}
				meta, comp, err := Select(sizes(files), id, "v1.2.3")
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]string{c.wantMeta, c.want}, []string{meta, comp}); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			})
		}
	}
}

func TestSelect_ClusterctlNamesTheOperatorDoesNotRead(t *testing.T) {
	for _, tc := range []struct {
		id    provider.ID
		files []string
	}{
		// clusterctl's names for these two types are not the operator's.
		{provider.ID{Name: "kubeadm", Type: clusterctlv1.ControlPlaneProviderType}, []string{"metadata.yaml", "control-plane-components.yaml"}},
		{provider.ID{Name: "x", Type: clusterctlv1.RuntimeExtensionProviderType}, []string{"metadata.yaml", "runtime-extension-components.yaml"}},
		// a components file under another name is not found either
		{provider.ID{Name: "x", Type: clusterctlv1.InfrastructureProviderType}, []string{"metadata.yaml", "infrastructure-components-development.yaml"}},
		// an empty file counts as missing
		{provider.ID{Name: "x", Type: clusterctlv1.InfrastructureProviderType}, []string{"infrastructure-components.yaml"}},
	} {
		files := map[string][]byte{}
		for _, f := range tc.files {
			files[f] = []byte("x")
		}
		if _, _, err := Select(sizes(files), tc.id, "v1.0.0"); err == nil {
			t.Errorf("%s %v: selected, want the operator's error", tc.id.Label(), tc.files)
		}
	}
	files := map[string][]byte{"metadata.yaml": {}, "infrastructure-components.yaml": []byte("x")}
	_, _, err := Select(sizes(files), provider.ID{Name: "x", Type: clusterctlv1.InfrastructureProviderType}, "v1.0.0")
	if err == nil || !strings.Contains(err.Error(), "metadata as infrastructure-x-v1.0.0-metadata.yaml or metadata.yaml") {
		t.Errorf("empty metadata.yaml: err = %v", err)
	}
}

func TestSelect_MultiProviderArtifact(t *testing.T) {
	// One artifact for a monorepo release: core, kubeadm bootstrap and
	// kubeadm control plane share a version; the two kubeadm providers
	// share a name and differ only by type.
	ids := []provider.ID{
		{Name: "cluster-api", Type: clusterctlv1.CoreProviderType},
		{Name: "kubeadm", Type: clusterctlv1.BootstrapProviderType},
		{Name: "kubeadm", Type: clusterctlv1.ControlPlaneProviderType},
		{Name: "docker", Type: clusterctlv1.InfrastructureProviderType},
	}
	files := map[string][]byte{}
	for _, id := range ids {
		files[FullMetadataFile(id, "v1.14.2")] = []byte("metadata of " + id.Label())
		files[FullComponentsFile(id, "v1.14.2")] = []byte("components of " + id.Label())
	}
	for _, id := range ids {
		meta, comp, err := Select(sizes(files), id, "v1.14.2")
		if err != nil {
			t.Fatal(err)
		}
		if string(files[meta]) != "metadata of "+id.Label() || string(files[comp]) != "components of "+id.Label() {
			t.Errorf("%s: picked %s and %s", id.Label(), meta, comp)
		}
	}
	// Another version of the same providers is not in it.
	if _, _, err := Select(sizes(files), ids[1], "v1.14.3"); err == nil {
		t.Error("v1.14.3 selected from a v1.14.2 artifact")
	}
}

func TestResourceYAML(t *testing.T) {
	r := Resource{ID: provider.ID{Name: "aws", Type: clusterctlv1.InfrastructureProviderType}, Namespace: "capa-system",
		Version: "v2.9.0", OCI: "registry.example.com/capi/infrastructure-aws:v2.9.0"}
	got, err := r.YAML()
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: operator.cluster.x-k8s.io/v1alpha2
kind: InfrastructureProvider
metadata:
  name: aws
  namespace: capa-system
spec:
  fetchConfig:
    oci: registry.example.com/capi/infrastructure-aws:v2.9.0
  version: v2.9.0
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	r.Selector = map[string]string{"a": "b"}
	if _, err := r.YAML(); err == nil {
		t.Error("both oci and selector accepted")
	}
}

func TestNamespace(t *testing.T) {
	comp := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capa-system\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: capa-system\n")
	if got := Namespace(comp); got != "capa-system" {
		t.Errorf("Namespace = %q", got)
	}
	id := provider.ID{Name: "x", Type: clusterctlv1.IPAMProviderType}
	if got := DefaultNamespace(id, []byte("kind: ConfigMap\n")); got != "ipam-x-system" {
		t.Errorf("DefaultNamespace = %q", got)
	}
}

// sizes gives Select the sizes of files.
func sizes(files map[string][]byte) map[string]int64 {
	out := make(map[string]int64, len(files))
	for n, b := range files {
		out[n] = int64(len(b))
	}
	return out
}
