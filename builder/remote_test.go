package builder

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capirepo/capirepo/internal/testtree"
)

// sharedTmp is the temp folder every process shares, read before any test
// could make the builder point $TMPDIR at its private folder.
var sharedTmp = os.TempDir()

const planted = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planted\ndata:\n  from: another-process\n"

// TestBuild_AllowRemoteKeepsLocalPathsInTheTree: a base another process left
// in the shared temp folder is refused with and without --allow-remote.
func TestBuild_AllowRemoteKeepsLocalPathsInTheTree(t *testing.T) {
	evil, err := os.MkdirTemp(sharedTmp, "planted-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(evil) })
	for name, data := range map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": planted} {
		if err := os.WriteFile(filepath.Join(evil, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := testtree.Minimal(nil)
	files["config/default/kustomization.yaml"] += "- " + evil + "\n"
	dir := testtree.Write(t, files)
	for _, allow := range []bool{false, true} {
		res, err := build(t, dir, Options{AllowRemote: allow})
		if err == nil {
			if strings.Contains(string(res.Release.Providers[0].Components().Data), "another-process") {
				t.Fatalf("allowRemote=%v: a base from the shared temp folder went into the release", allow)
			}
			t.Fatalf("allowRemote=%v: built", allow)
		}
		// Refused before it is read: as an absolute path, or as outside the tree.
		if !strings.Contains(err.Error(), "outside the provider tree") && !strings.Contains(err.Error(), "is absolute; name it relative") {
			t.Errorf("allowRemote=%v: err = %v, want the path refused as outside the tree", allow, err)
		}
	}
}

// TestBuild_AllowRemoteClonesIntoAPrivateFolder: a remote base (a git
// repository by file:// URL, so no network) is cloned into the builder's
// private folder (mode 0700), read from there, and removed afterwards.
func TestBuild_AllowRemoteClonesIntoAPrivateFolder(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	for name, data := range map[string]string{"base/kustomization.yaml": "resources: [cm.yaml]\n", "base/cm.yaml": strings.ReplaceAll(planted, "another-process", "the-remote-base")} {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	files := testtree.Minimal(nil)
	files["config/default/kustomization.yaml"] += "- file://" + repo + "//base?ref=main\n"
	dir := testtree.Write(t, files)
	res, err := build(t, dir, Options{AllowRemote: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Release.Providers[0].Components().Data), "the-remote-base") {
		t.Error("the remote base is not in the components")
	}
	scratch, err := remoteScratch()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(scratch)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("private folder mode %v, want 0700", fi.Mode().Perm())
	}
	if filepath.Dir(scratch) != filepath.Clean(evalOrSelf(sharedTmp)) {
		t.Errorf("private folder %s is not a new folder in the temp folder %s", scratch, sharedTmp)
	}
	entries, _ := os.ReadDir(scratch)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "kustomize-") {
			t.Errorf("clone %s left in the private folder", e.Name())
		}
	}
}

func evalOrSelf(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// TestBuild_RemoteFilesAreRefusedInEveryFieldAndLetterCase: kustomize
// fetches a URL over HTTP wherever a kustomization names a file, past the
// tree's confined file system, and parses the scheme in any letter case;
// without --allow-remote none of them is fetched.
func TestBuild_RemoteFilesAreRefusedInEveryFieldAndLetterCase(t *testing.T) {
	var fetched atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		_, _ = w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fetched\n"))
	}))
	defer srv.Close()
	upper := strings.Replace(srv.URL, "http://", "HTTP://", 1)
	tests := []struct {
		name, kustomization, field string
	}{
		{"a resource by an upper-case URL", "resources:\n- manager.yaml\n- " + upper + "/x.yaml\n", "field resources[1]"},
		{"a patch", "resources:\n- manager.yaml\npatches:\n- path: " + srv.URL + "/p.yaml\n", "field patches[0].path"},
		{"a strategic-merge patch", "resources:\n- manager.yaml\npatchesStrategicMerge:\n- " + srv.URL + "/p.yaml\n", "field patchesStrategicMerge[0]"},
		{"a CRD schema", "resources:\n- manager.yaml\ncrds:\n- " + srv.URL + "/c.yaml\n", "field crds[0]"},
		{"a config map generator's file", "resources:\n- manager.yaml\nconfigMapGenerator:\n- name: c\n  files:\n  - " + srv.URL + "/f.txt\n", "field configMapGenerator[0].files[0]"},
		{"a config map generator's file under a key", "resources:\n- manager.yaml\nconfigMapGenerator:\n- name: c\n  files:\n  - key=" + srv.URL + "/f.txt\n", "field configMapGenerator[0].files[0]"},
		{"a secret generator's env file", "resources:\n- manager.yaml\nsecretGenerator:\n- name: s\n  envs:\n  - " + upper + "/f.env\n", "field secretGenerator[0].envs[0]"},
		{"a generator's deprecated env file", "resources:\n- manager.yaml\nconfigMapGenerator:\n- name: c\n  env: " + srv.URL + "/f.env\n", "field configMapGenerator[0].env"},
		{"a generator", "resources:\n- manager.yaml\ngenerators:\n- " + srv.URL + "/g.yaml\n", "field generators[0]"},
		{"a transformer", "resources:\n- manager.yaml\ntransformers:\n- " + srv.URL + "/t.yaml\n", "field transformers[0]"},
		{"a validator", "resources:\n- manager.yaml\nvalidators:\n- " + srv.URL + "/v.yaml\n", "field validators[0]"},
		{"a transformer configuration", "resources:\n- manager.yaml\nconfigurations:\n- " + srv.URL + "/c.yaml\n", "field configurations[0]"},
		{"an OpenAPI schema", "resources:\n- manager.yaml\nopenapi:\n  path: " + srv.URL + "/o.json\n", "field openapi.path"},
		{"a replacement", "resources:\n- manager.yaml\nreplacements:\n- path: " + srv.URL + "/r.yaml\n", "field replacements[0].path"},
		{"a JSON 6902 patch", "resources:\n- manager.yaml\npatchesJson6902:\n- target: {group: apps, version: v1, kind: Deployment, name: x}\n  path: " + srv.URL + "/p.yaml\n", "field patchesJson6902[0].path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fetched.Store(0)
			err := buildErr(t, map[string]string{"config/manager/kustomization.yaml": tt.kustomization})
			wantErrParts(t, err, "config/manager/kustomization.yaml: "+tt.field, "is a remote", "--allow-remote")
			if n := fetched.Load(); n != 0 {
				t.Errorf("fetched %d times", n)
			}
		})
	}
}

// TestBuild_LocalFilesInEveryFieldBuild: the check for remote files refuses
// nothing kustomize reads from the tree: generator files and env files
// (under a key too), a transformer configuration, an OpenAPI schema, a
// replacement, a JSON 6902 patch and a transformer folder all build.
func TestBuild_LocalFilesInEveryFieldBuild(t *testing.T) {
	files := testtree.Minimal(map[string]string{
		"config/manager/kustomization.yaml": `resources:
- manager.yaml
configMapGenerator:
- name: settings
  files:
  - plain.txt
  - renamed=other.txt
  envs:
  - a.env
secretGenerator:
- name: creds
  env: b.env
generatorOptions:
  disableNameSuffixHash: true
configurations:
- kustomizeconfig.yaml
openapi:
  path: schema.json
replacements:
- path: replacement.yaml
patchesJson6902:
- target: {group: apps, version: v1, kind: Deployment, name: controller-manager}
  path: json6902.yaml
transformers:
- annotate
`,
		"config/manager/plain.txt":                   "plain\n",
		"config/manager/other.txt":                   "other\n",
		"config/manager/a.env":                       "A=from-env\n",
		"config/manager/b.env":                       "B=secret\n",
		"config/manager/kustomizeconfig.yaml":        "nameReference:\n- kind: ConfigMap\n  version: v1\n  fieldSpecs:\n  - kind: Deployment\n    path: spec/template/spec/volumes/configMap/name\n",
		"config/manager/schema.json":                 `{"definitions": {}}`,
		"config/manager/replacement.yaml":            "source:\n  kind: ConfigMap\n  name: settings\n  fieldPath: data.A\ntargets:\n- select:\n    kind: Deployment\n  fieldPaths:\n  - metadata.annotations.from-env\n  options:\n    create: true\n",
		"config/manager/json6902.yaml":               "- op: add\n  path: /spec/minReadySeconds\n  value: 7\n",
		"config/manager/annotate/kustomization.yaml": "resources:\n- annotations.yaml\n",
		"config/manager/annotate/annotations.yaml":   "apiVersion: builtin\nkind: AnnotationsTransformer\nmetadata:\n  name: annotate\nannotations:\n  transformed: by-a-folder\nfieldSpecs:\n- path: metadata/annotations\n  create: true\n",
	})
	res, err := build(t, testtree.Write(t, files), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := string(res.Release.Providers[0].Components().Data)
	for _, want := range []string{"plain.txt: |\n    plain", "renamed: |\n    other", "A: from-env", "B: c2VjcmV0", "from-env: from-env", "minReadySeconds: 7", "transformed: by-a-folder"} {
		if !strings.Contains(got, want) {
			t.Errorf("components lack %q:\n%s", want, got)
		}
	}
}

// TestBuild_RemoteEntryInsideATransformerFolderIsRefused: kustomize builds a
// folder named under transformers: as a kustomization, so the check goes
// into it and names the file and field of the remote entry there.
func TestBuild_RemoteEntryInsideATransformerFolderIsRefused(t *testing.T) {
	var fetched atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		_, _ = w.Write([]byte("apiVersion: builtin\nkind: AnnotationsTransformer\nmetadata:\n  name: a\nannotations:\n  fetched: \"yes\"\nfieldSpecs:\n- path: metadata/annotations\n  create: true\n"))
	}))
	defer srv.Close()
	err := buildErr(t, map[string]string{
		"config/manager/kustomization.yaml":          "resources:\n- manager.yaml\ntransformers:\n- annotate\n",
		"config/manager/annotate/kustomization.yaml": "resources:\n- " + srv.URL + "/t.yaml\n",
	})
	wantErrParts(t, err, "config/manager/annotate/kustomization.yaml: field resources[0]", "is a remote", "--allow-remote")
	if n := fetched.Load(); n != 0 {
		t.Errorf("fetched %d times", n)
	}
}
