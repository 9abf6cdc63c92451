package templates

import (
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

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		wantErr  string
		warnings []string
	}{
		{name: "good", files: map[string]string{"cluster-template.yaml": cluster}},
		{name: "empty documents dropped", files: map[string]string{"cluster-template.yaml": "---\n" + cluster + "---\n"}},
		{name: "not YAML", files: map[string]string{"cluster-template.yaml": "a: [\n"}, wantErr: "t/cluster-template.yaml:1: YAML does not parse: document 1: did not find expected node content"},
		{name: "no objects", files: map[string]string{"cluster-template.yaml": "# nothing\n"}, wantErr: "holds no objects"},
		{name: "document without kind", files: map[string]string{"cluster-template.yaml": "apiVersion: v1\nmetadata: {name: x}\n"}, wantErr: "document 1 (x): fields apiVersion and kind are required"},
		{name: "scalar document", files: map[string]string{"cluster-template.yaml": "just a string\n"}, wantErr: "document 1 is not an object"},
		{name: "namespace object", files: map[string]string{"cluster-template.yaml": cluster + "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: n\n"}, wantErr: "Namespace n: a cluster template must not create namespaces"},
		{name: "bad variable", files: map[string]string{"cluster-template.yaml": cluster + "spec: {x: '${A'}\n"}, wantErr: "variables do not parse"},
		{name: "v1beta1 topology class missing", files: map[string]string{"cluster-template.yaml": strings.Replace(cluster, "v1beta2", "v1beta1", 1) + "spec:\n  topology:\n    class: old\n"}, wantErr: "field spec.topology.class names ClusterClass \"old\""},
		{name: "class name is a variable", files: map[string]string{"cluster-template.yaml": cluster + "spec:\n  topology:\n    classRef:\n      name: ${CLASS}\n"},
			warnings: []string{"t/cluster-template.yaml: Cluster ${CLUSTER_NAME}: field spec.topology.classRef.name is a variable (${CLASS}); clusterctl cannot ship a ClusterClass for it"}},
		{name: "class file with variables and namespace", files: map[string]string{"clusterclass-q.yaml": "apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata:\n  name: q\n  namespace: ns\nspec:\n  x: ${FOO}\n"},
			warnings: []string{
				"t/clusterclass-q.yaml: holds variables FOO; ClusterClass files should not (clusterctl contract)",
				`t/clusterclass-q.yaml: ClusterClass q: field metadata.namespace is "ns"; ClusterClass objects should not set a namespace`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var files []release.File
			for n, d := range tt.files {
				files = append(files, release.File{Name: n, Data: []byte(d)})
			}
			warnings, err := Check("t", files)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.warnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
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
