package local

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/internal/testtree"
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
func TestEnv_DevRepository(t *testing.T) {
	for _, tc := range []struct {
		env  Env
		want string
	}{
		{Env{XDGConfigHome: "/x", Home: "/h"}, "/x/cluster-api/dev-repository"},
		{Env{Home: "/h"}, "/h/.config/cluster-api/dev-repository"},
		{Env{XDGConfigHome: "relative", Home: "/h"}, "/h/.config/cluster-api/dev-repository"},
	} {
		got, err := tc.env.DevRepository()
		if err != nil || got != tc.want {
			t.Errorf("%+v: DevRepository = %s, %v; want %s", tc.env, got, err, tc.want)
		}
	}
}
