package builder

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/templates"
)

// TestCollect_RealTrees: the templates of real provider trees, collected
// with the config docs/providers.md gives, equal what the maintainers'
// own pipeline publishes, file for file.
func TestCollect_RealTrees(t *testing.T) {
	tests := []struct {
		name   string
		module string
		dir    string // the provider inside the module
		cfg    provider.Templates
		// published lists what the maintainers' pipeline ships, from the
		// templates folder as it is.
		published func(names []string) []string
	}{
		{
			// .goreleaser.yaml: release.extra_files: glob ./templates/*.yaml
			name: "CAPA", module: testtree.CAPAModule,
			cfg: provider.Templates{Dir: "templates", Files: map[string]string{"rosa-network.yaml": "templates/rosa-network.yaml"}},
			published: func(names []string) []string {
				return filter(names, func(n string) bool { return strings.HasSuffix(n, ".yaml") })
			},
		},
		{
			// Makefile release-templates: cp templates/cluster-template* $(RELEASE_DIR)/
			name: "CAPG", module: testtree.CAPGModule,
			cfg: provider.Templates{Dir: "templates"},
			published: func(names []string) []string {
				return filter(names, func(n string) bool { return strings.HasPrefix(n, "cluster-template") })
			},
		},
		{
			// cmd/clusterctl/hack/create-local-repository.py: copy_tree("test/infrastructure/docker/templates", ...)
			name: "CAPD", module: testtree.CAPDModule, dir: "infrastructure/docker",
			cfg:       provider.Templates{Dir: "templates"},
			published: func(names []string) []string { return names },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(testtree.ModuleDir(t, tt.module), filepath.FromSlash(tt.dir))
			fs, err := newTreeFS(root)
			if err != nil {
				t.Fatal(err)
			}
			tt.cfg.LoadRestrictor, tt.cfg.Committed = provider.LoadRestrictorRootOnly, provider.CommittedCheck
			set, err := templates.Gather(fs, root, tt.cfg, func(dir string) ([]byte, error) { return renderFlavor(fs, dir, false, false) })
			if err != nil {
				t.Fatal(err)
			}
			// The checks are another matter (CAPA's multitenancy-clusterclass
			// template names a class it carries itself, which clusterctl
			// still fetches as clusterclass-<class>.yaml on a fresh cluster).
			if _, err := templates.Check(filepath.Join(root, "templates"), set.Files); err != nil {
				t.Logf("%s: templates.Check: %v", tt.name, err)
			}
			entries, err := os.ReadDir(filepath.Join(root, "templates"))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				if !e.IsDir() {
					names = append(names, e.Name())
				}
			}
			sort.Strings(names)
			want := map[string]string{}
			for _, n := range tt.published(names) {
				data, err := os.ReadFile(filepath.Join(root, "templates", n))
				if err != nil {
					t.Fatal(err)
				}
				want[n] = string(data)
			}
			got := map[string]string{}
			for _, f := range set.Files {
				got[f.Name] = string(f.Data)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("templates differ from the maintainers' pipeline (-want +got):\n%s", diff)
			}
			t.Logf("%s: %d templates, warnings: %v", tt.name, len(got), set.Warnings)
		})
	}
}

func filter(names []string, keep func(string) bool) []string {
	var out []string
	for _, n := range names {
		if keep(n) {
			out = append(out, n)
		}
	}
	return out
}
