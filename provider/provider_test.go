package provider

import (
	"strings"
	"testing"

	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/google/go-cmp/cmp"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
)

func TestParseLabel(t *testing.T) {
	tests := []struct {
		label      string
		want       ID
		components string
		wantErr    string
	}{
		{"cluster-api", ID{"cluster-api", clusterctlv1.CoreProviderType}, "core-components.yaml", ""},
		{"bootstrap-kubeadm", ID{"kubeadm", clusterctlv1.BootstrapProviderType}, "bootstrap-components.yaml", ""},
		{"control-plane-kubeadm", ID{"kubeadm", clusterctlv1.ControlPlaneProviderType}, "control-plane-components.yaml", ""},
		{"infrastructure-aws", ID{"aws", clusterctlv1.InfrastructureProviderType}, "infrastructure-components.yaml", ""},
		{"ipam-in-cluster", ID{"in-cluster", clusterctlv1.IPAMProviderType}, "ipam-components.yaml", ""},
		{"runtime-extension-nutanix", ID{"nutanix", clusterctlv1.RuntimeExtensionProviderType}, "runtime-extension-components.yaml", ""},
		{"addon-helm", ID{"helm", clusterctlv1.AddonProviderType}, "addon-components.yaml", ""},
		{"storage-x", ID{}, "", "no known type prefix"},
		{"infrastructure-", ID{}, "", "empty provider name"},
		{"infrastructure-A", ID{}, "", "lower-case"},
		{"infrastructure-a/b", ID{}, "", "lower-case"},
		{"runtime-extensions-x", ID{}, "", "no known type prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			got, err := ParseLabel(tt.label)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Error(diff)
			}
			if got.Label() != tt.label {
				t.Errorf("Label() = %s", got.Label())
			}
			if got.DefaultComponentsFile() != tt.components {
				t.Errorf("components = %s", got.DefaultComponentsFile())
			}
		})
	}
	if len(Types()) != 7 {
		t.Errorf("Types() = %d", len(Types()))
	}
}

func TestCheckFileName(t *testing.T) {
	for name, ok := range map[string]bool{
		"ha": true, "cluster-template-ha.yaml": true, "": false, "..": false, "a/b": false, `a\b`: false,
		"a..b": false, ".hidden": false, "x\n": false,
	} {
		if err := CheckFileName("flavor", name); (err == nil) != ok {
			t.Errorf("%q: err = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for v, ok := range map[string]bool{"v1.2.3": true, "v1.2.3-rc.1+build.5": true, "1.2.3": false, "v1.2": false, "": false, "vX": false} {
		if _, err := ParseVersion(v); (err == nil) != ok {
			t.Errorf("%q: err = %v, want ok=%v", v, err, ok)
		}
	}
}

const goodMetadata = `apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3
kind: Metadata
releaseSeries:
- {major: 1, minor: 2, contract: v1beta2}
- {major: 1, minor: 1, contract: v1beta1}
- {major: 0, minor: 9, contract: v1alpha4}
`

func TestParseMetadataAndCovers(t *testing.T) {
	m, err := ParseMetadata("metadata.yaml", []byte(goodMetadata))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		version string
		wantErr string
	}{
		{"v1.2.0", ""},
		{"v1.1.7", ""},
		{"v1.3.0", "add to releaseSeries:\n  - major: 1\n    minor: 3\n    contract: v1beta2"},
		{"v0.9.0", `contract "v1alpha4"; clusterctl accepts only v1beta2, v1beta1`},
	}
	for _, tt := range tests {
		v, _ := ParseVersion(tt.version)
		err := CheckCovers("metadata.yaml", m, v)
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: err = %v, want %q", tt.version, err, tt.wantErr)
		}
	}
	bad := map[string]string{
		"kind: Metadata\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\n":                                                                                                    "releaseSeries is empty",
		"kind: Metadata\napiVersion: v1\nreleaseSeries: [{major: 1, minor: 2, contract: v1beta2}]\n":                                                                            "apiVersion",
		"kind: Other\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries: [{major: 1, minor: 2, contract: v1beta2}]\n":                                             "field kind",
		"kind: Metadata\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries: [{major: 1, minor: 2}]\n":                                                             "releaseSeries[0].contract is empty",
		"kind: Metadata\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries: [{major: 1, minor: 2, contract: v1beta2}, {major: 1, minor: 2, contract: v1beta1}]\n": "releaseSeries[1] repeats 1.2",
		"kind: [": "not a Metadata document",
	}
	for data, want := range bad {
		if _, err := ParseMetadata("m.yaml", []byte(data)); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "m.yaml") {
			t.Errorf("%q: err = %v, want %q", data, err, want)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		config  string
		want    []Spec
		wantErr string
	}{
		{
			name:  "conventions: label from config/default labels",
			files: map[string]string{"config/default/kustomization.yaml": "labels:\n- pairs:\n    cluster.x-k8s.io/provider: infrastructure-aws\n", "templates/x": ""},
			want:  []Spec{{Name: "infrastructure-aws", Kustomize: "config/default", ComponentsFile: "infrastructure-components.yaml", Metadata: "metadata.yaml", Templates: "templates", Build: Build{Main: ".", Platforms: DefaultPlatforms}}},
		},
		{
			name:  "conventions: commonLabels",
			files: map[string]string{"config/default/kustomization.yaml": "commonLabels:\n  cluster.x-k8s.io/provider: bootstrap-talos\n"},
			want:  []Spec{{Name: "bootstrap-talos", Kustomize: "config/default", ComponentsFile: "bootstrap-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms}}},
		},
		{
			name:    "conventions: no label",
			files:   map[string]string{"config/default/kustomization.yaml": "resources: []\n"},
			wantErr: "no cluster.x-k8s.io/provider label",
		},
		{
			name:    "nothing at all",
			files:   map[string]string{"README": ""},
			wantErr: "no capirepo.yaml or clusterctl-settings.json",
		},
		{
			name:  "cluster-api checkout",
			files: map[string]string{"core/config/default/kustomization.yaml": "", "bootstrap/kubeadm/config/default/kustomization.yaml": ""},
			want: []Spec{
				{Name: "cluster-api", Kustomize: "core/config/default", ComponentsFile: "core-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms}},
				{Name: "bootstrap-kubeadm", Kustomize: "bootstrap/kubeadm/config/default", ComponentsFile: "bootstrap-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms}},
				{Name: "control-plane-kubeadm", Kustomize: "controlplane/kubeadm/config/default", ComponentsFile: "control-plane-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms}},
			},
		},
		{
			name:  "clusterctl-settings.json",
			files: map[string]string{"clusterctl-settings.json": `{"name": "infrastructure-docker", "config": {"componentsFile": "infrastructure-components-development.yaml", "nextVersion": "v1.14.99", "configFolder": "test/config/default"}}`},
			want:  []Spec{{Name: "infrastructure-docker", Kustomize: "test/config/default", ComponentsFile: "infrastructure-components-development.yaml", NextVersion: "v1.14.99", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms}}},
		},
		{
			name:    "capirepo.yaml is strict",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  kustomise: config\n"},
			wantErr: `unknown field "kustomise"`,
		},
		{
			name:    "duplicate provider",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n- name: infrastructure-x\n"},
			wantErr: "providers[1].name",
		},
		{
			name:    "path leaving the tree",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  templates: ../elsewhere\n"},
			wantErr: "providers[0].templates: path \"../elsewhere\" leaves the provider tree",
		},
		{
			name:    "bad version",
			files:   map[string]string{"capirepo.yaml": "version: 1.0\nproviders:\n- name: infrastructure-x\n"},
			wantErr: `capirepo.yaml:1: version: expected a string, not the number 1.0: quote it ("1.0")`,
		},
		{
			name:    "waiver without reason",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\nlint:\n  disable:\n  - rule: CAPI101\n"},
			wantErr: "lint.disable[0]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			testtree.WriteInto(t, dir, tt.files)
			cfg, err := LoadConfig(dir, tt.config)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.Providers); diff != "" {
				t.Errorf("providers (-want +got):\n%s", diff)
			}
		})
	}
}
