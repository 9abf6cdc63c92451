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
