package publish_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
)

func TestInitCommand(t *testing.T) {
	id := func(label string) provider.ID {
		i, err := provider.ParseLabel(label)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	for _, tc := range []struct {
		name   string
		ps     []publish.InitVersion
		config string
		want   string
	}{
		{"infrastructure only", []publish.InitVersion{{id("infrastructure-example"), "v0.1.99"}}, "/c/config.yaml",
			"clusterctl init --infrastructure example:v0.1.99 --config /c/config.yaml"},
		{"every type in clusterctl's order", []publish.InitVersion{
			{id("addon-helm"), "v0.3.0"}, {id("ipam-in-cluster"), "v1.0.0"}, {id("infrastructure-b"), "v2.0.0"},
			{id("infrastructure-a"), "v1.0.0"}, {id("control-plane-kubeadm"), "v1.14.99"}, {id("runtime-extension-x"), "v0.1.0"},
			{id("bootstrap-kubeadm"), "v1.14.99"}, {id("cluster-api"), "v1.14.99"},
		}, "/c/config.yaml",
			"clusterctl init --core cluster-api:v1.14.99 --bootstrap kubeadm:v1.14.99 --control-plane kubeadm:v1.14.99 --infrastructure a:v1.0.0,b:v2.0.0 --ipam in-cluster:v1.0.0 --runtime-extension x:v0.1.0 --addon helm:v0.3.0 --config /c/config.yaml"},
		{"config path quoted for the shell", []publish.InitVersion{{id("bootstrap-x"), "v1.0.0"}}, "/my dir/it's.yaml",
			`clusterctl init --bootstrap x:v1.0.0 --config '/my dir/it'\''s.yaml'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, publish.InitCommand(tc.ps, tc.config)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterctlConfig_YAMLReadByClusterctlShape(t *testing.T) {
	c := publish.ClusterctlConfig{Providers: []publish.ProviderURL{{Name: "example", Type: "InfrastructureProvider", URL: "file:///r/infrastructure-example/v0.1.0/infrastructure-components.yaml"}}, OverridesFolder: "/r/overrides"}
	data := c.YAML()
	want := `overridesFolder: /r/overrides
providers:
- name: example
  type: InfrastructureProvider
  url: file:///r/infrastructure-example/v0.1.0/infrastructure-components.yaml
`
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestClusterctlConfig_ProvidersOnly(t *testing.T) {
	got := publish.ClusterctlConfig{Providers: []publish.ProviderURL{{Name: "example", Type: "InfrastructureProvider",
		URL: "https://gitlab.example.com/api/v4/projects/g%2Fp/packages/generic/infrastructure-example/v0.1.0/infrastructure-components.yaml"}}}.YAML()
	want := `providers:
- name: example
  type: InfrastructureProvider
  url: https://gitlab.example.com/api/v4/projects/g%2Fp/packages/generic/infrastructure-example/v0.1.0/infrastructure-components.yaml
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
