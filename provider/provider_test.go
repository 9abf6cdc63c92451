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
		"kind: Other\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries: [{major: 1, minor: 2, contract: v1beta2}]\n":                                             "Metadata field kind: kind is \"Other\"",
		"kind: Metadata\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries: [{major: 1, minor: 2}]\n":                                                             "releaseSeries[0].contract: release series 1.2 has no contract",
		"kind: Metadata\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries: [{major: 1, minor: 2, contract: v1beta2}, {major: 1, minor: 2, contract: v1beta1}]\n": "releaseSeries[1]: release series 1.2 is listed again (first at releaseSeries[0])",
		"kind: [": "not a Metadata document",
		"kind: Metadata\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries: [{major: -1, minor: 2, contract: v1beta2}]\n":                                          "releaseSeries[0].major: major is -1: a version number cannot be negative",
		"kind: Metadata\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries: [{major: 1, minor: 2, contract: v1beta2}, {major: 1, minor: -3, contract: v1beta2}]\n": "releaseSeries[1].minor: minor is -3",
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
			want:  []Spec{{Name: "infrastructure-aws", Kustomize: "config/default", ComponentsFile: "infrastructure-components.yaml", Metadata: "metadata.yaml", Templates: &Templates{Dir: "templates", LoadRestrictor: "rootOnly", Committed: "check", Conventional: true}, Build: Build{Main: ".", Platforms: DefaultPlatforms}}},
		},
		{
			// A bootstrap tree may keep templates for other providers' use: none published unless asked.
			name:  "conventions: commonLabels, bootstrap provider takes no templates",
			files: map[string]string{"config/default/kustomization.yaml": "commonLabels:\n  cluster.x-k8s.io/provider: bootstrap-talos\n", "templates/cluster-template.yaml": ""},
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
			// Was taken for the kustomization (the lookup took any path that
			// exists), then failed to read as a file.
			name:    "conventions: a folder named kustomization.yaml is not a kustomization",
			files:   map[string]string{"config/default/kustomization.yaml/x": ""},
			wantErr: "no kustomization.yaml in",
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
			name:  "cluster-api checkout from before core moved, conventions",
			files: map[string]string{"config/default/kustomization.yaml": "", "bootstrap/kubeadm/config/default/kustomization.yaml": "", "controlplane/kubeadm/config/default/kustomization.yaml": ""},
			want: []Spec{
				{Name: "cluster-api", Kustomize: "config/default", ComponentsFile: "core-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms}},
				{Name: "bootstrap-kubeadm", Kustomize: "bootstrap/kubeadm/config/default", ComponentsFile: "bootstrap-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms}},
				{Name: "control-plane-kubeadm", Kustomize: "controlplane/kubeadm/config/default", ComponentsFile: "control-plane-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms}},
			},
		},
		{
			name: "cluster-api checkout from before core moved, top-level settings naming CAPD",
			files: map[string]string{
				"config/default/kustomization.yaml": "", "bootstrap/kubeadm/config/default/kustomization.yaml": "", "controlplane/kubeadm/config/default/kustomization.yaml": "",
				"clusterctl-settings.json": `{"providers": ["cluster-api", "infrastructure-docker"]}`,
			},
			want: []Spec{
				{Name: "cluster-api", Kustomize: "config/default", ComponentsFile: "core-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms}},
				{Name: "infrastructure-docker", Kustomize: "test/infrastructure/docker/config/default", ComponentsFile: "infrastructure-components-development.yaml",
					Templates: &Templates{Dir: "test/infrastructure/docker/templates", LoadRestrictor: LoadRestrictorRootOnly, Committed: CommittedCheck}, Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms}},
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
			wantErr: "providers[0].templates.dir: path \"../elsewhere\" leaves the provider tree",
		},
		{
			name: "templates object",
			files: map[string]string{"capirepo.yaml": `providers:
- name: infrastructure-x
  templates:
    dir: templates
    flavors: [templates/cluster-templates/v1beta1]
    loadRestrictor: LoadRestrictionsNone
    exclude: ["cluster-template-rosa*.yaml"]
    files: {cluster-template.yaml: examples/clusterctl-templates/clusterctl-cluster.yaml}
- name: bootstrap-x
  templates: {dir: bootstrap/templates}
- name: control-plane-x
`},
			want: []Spec{
				{Name: "infrastructure-x", Kustomize: "config/default", ComponentsFile: "infrastructure-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms},
					Templates: &Templates{Dir: "templates", Flavors: []string{"templates/cluster-templates/v1beta1"}, LoadRestrictor: "none", Committed: "check",
						Exclude: []string{"cluster-template-rosa*.yaml"}, Files: map[string]string{"cluster-template.yaml": "examples/clusterctl-templates/clusterctl-cluster.yaml"}}},
				{Name: "bootstrap-x", Kustomize: "config/default", ComponentsFile: "bootstrap-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms},
					Templates: &Templates{Dir: "bootstrap/templates", LoadRestrictor: "rootOnly", Committed: "check"}},
				{Name: "control-plane-x", Kustomize: "config/default", ComponentsFile: "control-plane-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms}},
			},
		},
		{
			// Monorepo: templates/ goes to the provider configured for it, not to every infrastructure provider.
			name: "monorepo: templates only where configured",
			files: map[string]string{"templates/cluster-template.yaml": "", "capirepo.yaml": `providers:
- name: infrastructure-a
- name: infrastructure-b
  templates: templates
- name: infrastructure-c
  templates: {none: true}
`},
			want: []Spec{
				{Name: "infrastructure-a", Kustomize: "config/default", ComponentsFile: "infrastructure-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms}},
				{Name: "infrastructure-b", Kustomize: "config/default", ComponentsFile: "infrastructure-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms},
					Templates: &Templates{Dir: "templates", LoadRestrictor: "rootOnly", Committed: "check"}},
				{Name: "infrastructure-c", Kustomize: "config/default", ComponentsFile: "infrastructure-components.yaml", Metadata: "metadata.yaml", Build: Build{Main: ".", Platforms: DefaultPlatforms},
					Templates: &Templates{None: true}},
			},
		},
		{
			name:    "templates object is strict",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  templates: {dirs: t}\n"},
			wantErr: `unknown field "dirs"`,
		},
		{
			name:    "templates none with a folder",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  templates: {none: true, dir: t}\n"},
			wantErr: "providers[0].templates: none: true ships no templates",
		},
		{
			name:    "templates load restrictor",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  templates: {loadRestrictor: all}\n"},
			wantErr: `providers[0].templates.loadRestrictor: "all": use rootOnly (the default) or none`,
		},
		{
			name:    "templates file mapping with a path as name",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  templates: {files: {a/cluster-template.yaml: x.yaml}}\n"},
			wantErr: "providers[0].templates.files[a/cluster-template.yaml]",
		},
		{
			name:    "templates file mapping leaving the tree",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  templates: {files: {cluster-template.yaml: ../x.yaml}}\n"},
			wantErr: "leaves the provider tree",
		},
		{
			name:    "bad version",
			files:   map[string]string{"capirepo.yaml": "version: 1.0\nproviders:\n- name: infrastructure-x\n"},
			wantErr: `capirepo.yaml:1: version: expected a string, not the number 1.0: quote it ("1.0")`,
		},
		{
			name: "more components files, patches, image tag template and pull policy",
			files: map[string]string{
				"capirepo.yaml": `before: [make generate-manifests]
providers:
- name: infrastructure-x
  components:
  - {kustomize: config/supervisor, file: infrastructure-components-supervisor.yaml}
  image: {name: controller, tag: "{{ .VersionNoV }}", pullPolicy: IfNotPresent}
  patches:
  - {path: hack/release/role.yaml, target: {kind: ClusterRoleBinding}}
`,
				"hack/release/role.yaml": "- op: replace\n  path: /roleRef/name\n  value: x\n",
			},
			want: []Spec{{Name: "infrastructure-x", Kustomize: "config/default", ComponentsFile: "infrastructure-components.yaml", Metadata: "metadata.yaml",
				Image:      &Image{Name: "controller", Tag: "{{ .VersionNoV }}", PullPolicy: "IfNotPresent"},
				Components: []Components{{Kustomize: "config/supervisor", File: "infrastructure-components-supervisor.yaml"}},
				Patches:    []Patch{{Path: "hack/release/role.yaml", Target: &PatchTarget{Kind: "ClusterRoleBinding"}}},
				Build:      Build{Main: ".", Platforms: DefaultPlatforms}}},
		},
		{
			name:    "components file twice",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  components: [{kustomize: config/s, file: infrastructure-components.yaml}]\n"},
			wantErr: `providers[0].components[0].file: "infrastructure-components.yaml" is already a components file`,
		},
		{
			name:    "bad tag template",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  image: {tag: '{{ .Tag }}'}\n"},
			wantErr: "providers[0].image.tag",
		},
		{
			name:    "tag and newTag",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  image: {tag: '{{ .Version }}', newTag: v1}\n"},
			wantErr: "newTag and tag are both set",
		},
		{
			name:    "bad pull policy",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  image: {pullPolicy: IfNeeded}\n"},
			wantErr: `providers[0].image.pullPolicy: "IfNeeded" is not one of Always, IfNotPresent, Never`,
		},
		{
			name: "an image per Deployment (Sidero)",
			files: map[string]string{"capirepo.yaml": `providers:
- name: infrastructure-sidero
  images:
  - {deployment: caps-controller-manager, newName: ghcr.io/siderolabs/caps-controller-manager}
  - {deployment: sidero-controller-manager, container: manager, name: controller, newName: ghcr.io/siderolabs/sidero-controller-manager, tag: "{{ .VersionNoV }}", pullPolicy: IfNotPresent}
`},
			want: []Spec{{Name: "infrastructure-sidero", Kustomize: "config/default", ComponentsFile: "infrastructure-components.yaml", Metadata: "metadata.yaml",
				Images: []DeploymentImage{
					{Deployment: "caps-controller-manager", Image: Image{NewName: "ghcr.io/siderolabs/caps-controller-manager"}},
					{Deployment: "sidero-controller-manager", Container: "manager", Image: Image{Name: "controller", NewName: "ghcr.io/siderolabs/sidero-controller-manager", Tag: "{{ .VersionNoV }}", PullPolicy: "IfNotPresent"}},
				},
				Build: Build{Main: ".", Platforms: DefaultPlatforms}}},
		},
		{
			name:    "image and images",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  image: {newName: r/x}\n  images: [{deployment: x-controller-manager, newName: r/y}]\n"},
			wantErr: "providers[0].image: set with images: images gives each Deployment its image",
		},
		{
			name:    "images entry without a Deployment",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  images: [{newName: r/y}]\n"},
			wantErr: "providers[0].images[0].deployment: empty",
		},
		{
			name:    "images entry twice for one Deployment",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  images: [{deployment: d, newName: r/y}, {deployment: d, newName: r/z}]\n"},
			wantErr: "providers[0].images[1]: Deployment d is already given an image by images[0]",
		},
		{
			name:    "images entry with a bad pull policy",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  images: [{deployment: d, pullPolicy: Sometimes}]\n"},
			wantErr: `providers[0].images[0].pullPolicy: "Sometimes" is not one of`,
		},
		{
			name:    "patch file missing",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  patches: [{path: hack/p.yaml}]\n"},
			wantErr: "providers[0].patches[0].path: hack/p.yaml is not a file",
		},
		{
			name:    "patch file pattern with a folder",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  patches: [{patch: x, file: templates/cluster-template-*.yaml}]\n"},
			wantErr: `providers[0].patches[0].file: "templates/cluster-template-*.yaml" is not a release file name pattern`,
		},
		{
			name:    "templates.set value named with ${ }",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  templates: {dir: t, set: [{file: cluster-template-k3s-*.yaml, values: {'${CERTPATH}': /x}}]}\n"},
			wantErr: `providers[0].templates.set[0].values: "${CERTPATH}" is not a variable name`,
		},
		{
			name:    "templates.set without values",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  templates: {dir: t, set: [{file: cluster-template-k3s-*.yaml}]}\n"},
			wantErr: `providers[0].templates.set[0]: no values`,
		},
		{
			name:    "templates.set pattern with a folder",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-x\n  templates: {dir: t, set: [{file: t/cluster-template-*.yaml, values: {A: b}}]}\n"},
			wantErr: `providers[0].templates.set[0].file: "t/cluster-template-*.yaml" is not a release file name pattern`,
		},
		{
			name:    "empty before command",
			files:   map[string]string{"capirepo.yaml": "before: ['']\nproviders:\n- name: infrastructure-x\n"},
			wantErr: "before[0] is empty",
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

// TestCheckFlavorName: a flavor clusterctl can fetch and every target can
// carry is taken, whatever its case, dots or underscores (issue 45.7);
// what is refused says why, and which target when it is a target's rule.
func TestCheckFlavorName(t *testing.T) {
	for _, c := range []struct{ flavor, wantErr string }{
		{"v1.24.10-crs", ""},
		{"pre-v1.33", ""},
		{"v1.26.11-tkgv2.5.0-crs", ""},
		{"Ubuntu_22.04", ""},
		{"ha", ""},
		{"", "flavor name is empty"},
		{"a/b", `must not contain '/'`},
		{"a..b", "or '..'"},
		{"tab\there", "control character"},
		{strings.Repeat("x", 240), "file systems take at most 255"},
		{"my flavor", `holds ' ': GitHub renames a release asset whose name holds it (its REST API turns it into '.' or '-'), so clusterctl does not find cluster-template-my flavor.yaml there, and GitLab's generic packages refuse the file name; use letters, digits, '.', '-' and '_'`},
		{"k3s+calico", `holds '+': GitHub renames`},
		{"a(b):c", `holds '(', ')', ':'`},
	} {
		err := CheckFlavorName(c.flavor)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%q: %v, want it taken", c.flavor, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%q: err = %v, want %q", c.flavor, err, c.wantErr)
		}
	}
	// '+' is GitHub's rule only: GitLab's generic packages take it.
	if err := CheckFlavorName("k3s+calico"); err == nil || strings.Contains(err.Error(), "GitLab") {
		t.Errorf("k3s+calico: %v, want GitHub's rule alone", err)
	}
}
