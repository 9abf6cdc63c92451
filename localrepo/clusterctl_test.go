package localrepo

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
)

func TestOverridesFolder_FollowsClusterctlOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  map[string]string // below the temporary HOME
		xdg    bool              // XDG_CONFIG_HOME=$HOME/xdg
		env    map[string]string
		config string // --clusterctl-config, below HOME
		want   string // below HOME
	}{
		{name: "XDG default", xdg: true, want: "xdg/cluster-api/overrides"},
		{name: "HOME default", want: ".config/cluster-api/overrides"},
		{name: "legacy folder when XDG one is missing", files: map[string]string{".cluster-api/overrides/x": ""},
			xdg: true, want: ".cluster-api/overrides"},
		{name: "XDG folder wins over legacy when both exist",
			files: map[string]string{".cluster-api/overrides/x": "", "xdg/cluster-api/overrides/x": ""}, xdg: true, want: "xdg/cluster-api/overrides"},
		{name: "config file overridesFolder, expanded", files: map[string]string{"c.yaml": "overridesFolder: ${HOME}/from-config\n"},
			config: "c.yaml", want: "from-config"},
		{name: "config key matched case-insensitively", files: map[string]string{"c.yaml": "OverridesFolder: ${HOME}/ci\n"},
			config: "c.yaml", want: "ci"},
		{name: "default clusterctl.yaml in the XDG folder", files: map[string]string{"xdg/cluster-api/clusterctl.yaml": "overridesFolder: ${HOME}/xdg-config\n"},
			xdg: true, want: "xdg-config"},
		{name: "default clusterctl.yaml in ~/.cluster-api", files: map[string]string{".cluster-api/clusterctl.yaml": "overridesFolder: ${HOME}/legacy-config\n"},
			want: "legacy-config"},
		{name: "OVERRIDESFOLDER wins over the config", files: map[string]string{"c.yaml": "overridesFolder: /nowhere\n"},
			config: "c.yaml", env: map[string]string{"OVERRIDESFOLDER": "${HOME}/from-env"}, want: "from-env"},
		{name: "config without overridesFolder", files: map[string]string{"c.yaml": "providers: []\n"},
			config: "c.yaml", want: ".config/cluster-api/overrides"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := testtree.Write(t, tc.files)
			env := map[string]string{"HOME": home}
			for k, v := range tc.env {
				env[k] = v
			}
			e := Env{Home: home, Getenv: func(k string) string { return env[k] }}
			if tc.xdg {
				e.XDGConfigHome = filepath.Join(home, "xdg")
			}
			config := ""
			if tc.config != "" {
				config = filepath.Join(home, tc.config)
			}
			got, source, err := OverridesFolder(e, config)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(home, tc.want); got != want {
				t.Errorf("folder = %s (from %s), want %s", got, source, want)
			}
		})
	}
}

func TestOverridesFolder_Errors(t *testing.T) {
	home := testtree.Write(t, map[string]string{"rel.yaml": "overridesFolder: relative/path\n", "bad.yaml": "overridesFolder: [1]\n"})
	for _, tc := range []struct{ config, want string }{
		{"rel.yaml", "absolute"},
		{"bad.yaml", "overridesFolder must be a string"},
		{"missing.yaml", "missing.yaml"},
	} {
		_, _, err := OverridesFolder(Env{Home: home}, filepath.Join(home, tc.config))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.config, err, tc.want)
		}
	}
	if _, _, err := OverridesFolder(Env{}, ""); err == nil {
		t.Error("no HOME and no XDG_CONFIG_HOME: no error")
	}
}

func TestEnv_DevRoot(t *testing.T) {
	for _, tc := range []struct {
		env  Env
		want string
	}{
		{Env{XDGConfigHome: "/x", Home: "/h"}, "/x/cluster-api/dev-repository"},
		{Env{Home: "/h"}, "/h/.config/cluster-api/dev-repository"},
		{Env{XDGConfigHome: "relative", Home: "/h"}, "/h/.config/cluster-api/dev-repository"},
	} {
		got, err := tc.env.DevRoot()
		if err != nil || got != tc.want {
			t.Errorf("%+v: DevRoot = %s, %v; want %s", tc.env, got, err, tc.want)
		}
	}
}

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
		ps     []InitVersion
		config string
		want   string
	}{
		{"infrastructure only", []InitVersion{{id("infrastructure-example"), "v0.1.99"}}, "/c/config.yaml",
			"clusterctl init --infrastructure example:v0.1.99 --config /c/config.yaml"},
		{"every type in clusterctl's order", []InitVersion{
			{id("addon-helm"), "v0.3.0"}, {id("ipam-in-cluster"), "v1.0.0"}, {id("infrastructure-b"), "v2.0.0"},
			{id("infrastructure-a"), "v1.0.0"}, {id("control-plane-kubeadm"), "v1.14.99"}, {id("runtime-extension-x"), "v0.1.0"},
			{id("bootstrap-kubeadm"), "v1.14.99"}, {id("cluster-api"), "v1.14.99"},
		}, "/c/config.yaml",
			"clusterctl init --core cluster-api:v1.14.99 --bootstrap kubeadm:v1.14.99 --control-plane kubeadm:v1.14.99 --infrastructure a:v1.0.0,b:v2.0.0 --ipam in-cluster:v1.0.0 --runtime-extension x:v0.1.0 --addon helm:v0.3.0 --config /c/config.yaml"},
		{"config path quoted for the shell", []InitVersion{{id("bootstrap-x"), "v1.0.0"}}, "/my dir/it's.yaml",
			`clusterctl init --bootstrap x:v1.0.0 --config '/my dir/it'\''s.yaml'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, InitCommand(tc.ps, tc.config)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterctlConfig_YAMLReadByClusterctlShape(t *testing.T) {
	c := ClusterctlConfig{Providers: []ConfigProvider{{Name: "example", Type: "InfrastructureProvider", URL: "file:///r/infrastructure-example/v0.1.0/infrastructure-components.yaml"}}, OverridesFolder: "/r/overrides"}
	data, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	want := `overridesFolder: /r/overrides
providers:
- name: example
  type: InfrastructureProvider
  url: file:///r/infrastructure-example/v0.1.0/infrastructure-components.yaml
`
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
