package templates

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

const cluster = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\n"

func memFS(t *testing.T, files map[string]string) filesys.FileSystem {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	for name, data := range files {
		if err := fs.WriteFile(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

// fakeRender stands in for kustomize: it returns the flavor folder's c.yaml.
func fakeRender(fs filesys.FileSystem) Renderer {
	return func(dir string) ([]byte, error) { return fs.ReadFile(dir + "/c.yaml") }
}

func TestCollect(t *testing.T) {
	fs := memFS(t, map[string]string{
		"/t/cluster-template.yaml":                 cluster,
		"/t/cluster-template-plain.yaml":           cluster,
		"/t/clusterclass-quick.yaml":               "apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata:\n  name: quick\n",
		"/t/README.md":                             "not a release file",
		"/t/other.yaml":                            "not a release file either",
		"/t/flavors/base/kustomization.yaml":       "resources: [c.yaml]\n",
		"/t/flavors/base/c.yaml":                   cluster,
		"/t/flavors/gen/kustomization.yaml":        "resources: [c.yaml, ../base]\n",
		"/t/flavors/gen/c.yaml":                    cluster + "spec:\n  topology:\n    classRef:\n      name: quick\n",
		"/t/flavors/notakustomization/readme.yaml": "x: 1\n",
	})
	set, err := Collect(fs, "/", provider.Templates{Dir: "t"}, fakeRender(fs))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range set.Files {
		names = append(names, f.Name)
	}
	want := []string{"cluster-template-gen.yaml", "cluster-template-plain.yaml", "cluster-template.yaml", "clusterclass-quick.yaml"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if len(set.Warnings) != 0 {
		t.Errorf("warnings = %v", set.Warnings)
	}
}

func TestCollect_Errors(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		wantErr string
	}{
		{"default flavor differs from its committed render", map[string]string{
			"/t/cluster-template.yaml": cluster, "/t/flavors/default/kustomization.yaml": "", "/t/flavors/default/c.yaml": cluster + "spec: {x: 1}\n",
		}, `/t/cluster-template.yaml: the committed render is stale: flavor default (/t/flavors/default) renders Cluster ${CLUSTER_NAME} differently`},
		{"two flavors publish one name", map[string]string{
			"/t/flavors/default/kustomization.yaml": "", "/t/flavors/default/c.yaml": cluster,
			"/t/flavors/cluster-template/kustomization.yaml": "", "/t/flavors/cluster-template/c.yaml": cluster,
		}, `/t/flavors/default: flavor "default" publishes cluster-template.yaml, as /t/flavors/cluster-template does`},
		{"upper-case class name", map[string]string{"/t/clusterclass-Quick.yaml": cluster}, "ClusterClass name"},
		{"render failure names the flavor", map[string]string{"/t/flavors/broken/kustomization.yaml": ""}, "flavor broken"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := memFS(t, tt.files)
			_, err := Collect(fs, "/", provider.Templates{Dir: "t"}, fakeRender(fs))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestCheck_LeavesContractChecksToTheLint: what clusterctl relies on is a
// lint rule (package contract) so that waivers apply; Check refuses only a
// file unsafe to read, and says nothing of the rest.
func TestCheck_LeavesContractChecksToTheLint(t *testing.T) {
	for name, data := range map[string]string{
		"not YAML":                     "a: [\n",
		"YAML only after substitution": cluster + "spec:\n${EXTRA}\n",
		"namespace object":             cluster + "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: n\n",
		"bad variable":                 cluster + "spec: {x: '${A'}\n",
		"topology class missing":       cluster + "spec:\n  topology:\n    classRef:\n      name: q\n",
	} {
		warnings, err := Check("t", []release.File{{Name: "cluster-template.yaml", Data: []byte(data)}})
		if err != nil || len(warnings) > 0 {
			t.Errorf("%s: Check = %v, %v; want nothing (the lint reports it)", name, warnings, err)
		}
	}
	bomb := "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 9; i++ {
		bomb += fmt.Sprintf("a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	if _, err := Check("t", []release.File{{Name: "cluster-template.yaml", Data: []byte(bomb)}}); err == nil || !strings.Contains(err.Error(), "alias") {
		t.Errorf("alias bomb: err = %v, want a refusal", err)
	}
}

// FuzzCheck: the template checks never panic, whatever the file holds.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(cluster))
	f.Add([]byte(cluster + "spec:\n  topology:\n    classRef:\n      name: q\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Check("t", []release.File{{Name: "cluster-template.yaml", Data: data}, {Name: "clusterclass-q.yaml", Data: data}})
	})
}
