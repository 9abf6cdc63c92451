package builder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/internal/testtree"
)

const cluster = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\n"

// TestBuild_BadInput: each broken tree fails with an error naming the file,
// the object and the field.
func TestBuild_BadInput(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		opts    Options
		setup   func(t *testing.T, dir string)
		wantErr []string
	}{
		{
			name:    "missing kustomization",
			files:   map[string]string{"config/default/kustomization.yaml": "", "capirepo.yaml": "providers:\n- name: infrastructure-test\n"},
			wantErr: []string{"config/default", "no kustomization file"},
		},
		{
			name:    "broken kustomization",
			files:   map[string]string{"config/default/kustomization.yaml": "resources: [a\n", "capirepo.yaml": "providers:\n- name: infrastructure-test\n"},
			wantErr: []string{"config/default/kustomization.yaml"},
		},
		{
			name:    "resource YAML does not parse",
			files:   map[string]string{"config/manager/manager.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x\n"},
			wantErr: []string{"manager.yaml"},
		},
		{
			name:    "version not semver",
			opts:    Options{Version: "v1.2"},
			wantErr: []string{`"v1.2"`, "not semantic"},
		},
		{
			name:    "version without v",
			opts:    Options{Version: "1.2.3"},
			wantErr: []string{`"1.2.3"`, "must start with 'v'"},
		},
		{
			name:    "unknown provider type prefix",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: storage-test\n"},
			wantErr: []string{"capirepo.yaml", "providers[0].name", "storage-test", "no known type prefix"},
		},
		{
			name:    "flavor file name with ..",
			files:   map[string]string{"templates/cluster-template-a..b.yaml": cluster},
			wantErr: []string{"cluster-template-a..b.yaml", "flavor name", ".."},
		},
		{
			name:    "components file name with /",
			files:   map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-test\n  componentsFile: ../x.yaml\n"},
			wantErr: []string{"capirepo.yaml", "providers[0].componentsFile", "../x.yaml"},
		},
		{
			name: "symlink pointing outside the tree",
			setup: func(t *testing.T, dir string) {
				outside := t.TempDir()
				testtree.WriteInto(t, outside, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: secret-stuff\n"})
				if err := os.Symlink(filepath.Join(outside, "cm.yaml"), filepath.Join(dir, "config/manager/cm.yaml")); err != nil {
					t.Fatal(err)
				}
			},
			files:   map[string]string{"config/manager/kustomization.yaml": "resources:\n- manager.yaml\n- cm.yaml\n"},
			wantErr: []string{"cm.yaml is a symlink to", "outside the provider tree"},
		},
		{
			name: "symlinked base folder outside the tree",
			setup: func(t *testing.T, dir string) {
				outside := testtree.Write(t, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"})
				if err := os.Symlink(outside, filepath.Join(dir, "config/extra")); err != nil {
					t.Fatal(err)
				}
			},
			files:   map[string]string{"config/default/kustomization.yaml": "namespace: test-system\nresources:\n- namespace.yaml\n- ../manager\n- ../extra\n", "capirepo.yaml": "providers:\n- name: infrastructure-test\n"},
			wantErr: []string{"extra", "outside the provider tree"},
		},
		{
			name: "YAML alias bomb",
			files: map[string]string{
				"config/manager/kustomization.yaml": "resources:\n- manager.yaml\n- bomb.yaml\n",
				"config/manager/bomb.yaml":          aliasBomb(),
			},
			wantErr: []string{"bomb.yaml"},
		},
		{
			name: "file over the size limit",
			setup: func(t *testing.T, dir string) {
				f, err := os.Create(filepath.Join(dir, "config/manager/big.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Truncate(MaxFileSize + 1); err != nil {
					t.Fatal(err)
				}
				_ = f.Close()
			},
			files:   map[string]string{"config/manager/kustomization.yaml": "resources:\n- manager.yaml\n- big.yaml\n"},
			wantErr: []string{"big.yaml", "over the 64 MiB limit"},
		},
		{
			name:    "remote git base",
			files:   map[string]string{"config/manager/kustomization.yaml": "resources:\n- manager.yaml\n- github.com/kubernetes-sigs/cluster-api//config/crd?ref=v1.14.2\n"},
			wantErr: []string{"config/manager/kustomization.yaml", "field resources[1]", "remote base", "--allow-remote"},
		},
		{
			name:    "remote http resource",
			files:   map[string]string{"config/manager/kustomization.yaml": "resources:\n- manager.yaml\n- https://example.com/x.yaml\n"},
			wantErr: []string{"field resources[1]", "https://example.com/x.yaml", "remote base"},
		},
		{
			name:    "helm inflation",
			files:   map[string]string{"config/manager/kustomization.yaml": "resources:\n- manager.yaml\nhelmCharts:\n- name: x\n  repo: https://charts.example.com\n"},
			wantErr: []string{"field helmCharts", "helm chart inflation is off"},
		},
		{
			name: "exec KRM function",
			files: map[string]string{
				"config/manager/kustomization.yaml": "resources:\n- manager.yaml\ntransformers:\n- fn.yaml\n",
				"config/manager/fn.yaml":            "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: f\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: /bin/touch\n",
			},
			wantErr: []string{"config/manager", "external plugins disabled"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := testtree.Write(t, testtree.Minimal(tt.files))
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			_, err := build(t, dir, tt.opts)
			if err == nil {
				t.Fatal("Build succeeded, want an error")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not mention %q:\n%v", want, err)
				}
			}
		})
	}
}

// aliasBomb is a billion-laughs document: a few KB that would expand to
// billions of nodes.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("  a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestBuild_AllowRemoteLetsCheckPass(t *testing.T) {
	// With --allow-remote the local-only check is skipped; kustomize then
	// tries to fetch, which fails here without network: the error is
	// kustomize's, not capirepo's refusal.
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"config/manager/kustomization.yaml": "resources:\n- manager.yaml\n- https://127.0.0.1:1/x.yaml\n",
	}))
	_, err := build(t, dir, Options{AllowRemote: true})
	if err == nil || strings.Contains(err.Error(), "--allow-remote") {
		t.Fatalf("want kustomize's fetch error, got %v", err)
	}
}
