package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/versions"
)

// copyRelease copies the release files of a version folder (not
// checksums.txt, the provenance or the bundles: what the kustomize + cp
// pipeline or an attacker writes) into dst.
func copyRelease(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == release.ChecksumsFile || release.IsAttached(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestVerify_EveryVersionClusterctlReadsIsJudged: an unsigned version
// folder beside a signed one, named as clusterctl takes it and capirepo did
// not (9.9.9, no v: clusterctl's local repository lists it, and fails to
// find its latest, which it asks for as v9.9.9), fails verify and verify --signatures by name, as does an
// unsigned v9.9.9 and a link named like a version.
func TestVerify_EveryVersionClusterctlReadsIsJudged(t *testing.T) {
	dist, _, _, pub := signedExample(t)
	sigs := []string{"verify", dist, "--signatures", "--key", pub}
	if code, _, stderr := runCmd(t, nil, sigs...); code != 0 {
		t.Fatalf("the signed dist: exit %d: %s", code, stderr)
	}
	label := filepath.Join(dist, "infrastructure-example")
	if _, ok := versions.Parse("9.9.9"); !ok {
		t.Fatal("clusterctl's rule does not take 9.9.9: the fixture tests nothing")
	}
	copyRelease(t, filepath.Join(label, "v0.1.0"), filepath.Join(label, "9.9.9"))
	for _, args := range [][]string{sigs, {"verify", dist}, {"verify", "file://" + dist, "--version", "v0.1.0"}, {"publish", "local", dist, "--out", t.TempDir()}} {
		code, _, stderr := runCmd(t, nil, args...)
		want := filepath.Join(label, "9.9.9") + ": clusterctl reads this folder as version 9.9.9 of infrastructure-example"
		if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "rename it to v9.9.9, or remove it") {
			t.Errorf("%v: exit %d, want 1 and %q:\n%s", args, code, want, stderr)
		}
	}

	if err := os.Rename(filepath.Join(label, "9.9.9"), filepath.Join(label, "v9.9.9")); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, nil, sigs...)
	if want := "infrastructure-example/v9.9.9: nothing is signed: no checksums.txt"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("an unsigned v9.9.9: exit %d, want 1 and %q:\n%s", code, want, stderr)
	}

	if err := os.RemoveAll(filepath.Join(label, "v9.9.9")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	copyRelease(t, filepath.Join(label, "v0.1.0"), outside)
	if err := os.Symlink(outside, filepath.Join(label, "v9.9.9")); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd(t, nil, sigs...)
	if want := filepath.Join(label, "v9.9.9") + " is a symbolic link"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("a link named v9.9.9: exit %d, want 1 and %q:\n%s", code, want, stderr)
	}
}

// TestVerify_AFolderRenderedTheMaintainersWay: the release files of a
// kustomize + cp pipeline (no checksums.txt), in a flat out/ folder, in a
// <label>/<version> tree and rendered with kubectl's kustomize, are verified (file:// too), with one note that
// there is nothing to check them against; --signatures fails on them, as
// nothing is signed; diff reads them; the install check reads them and
// goes on to the cluster.
func TestVerify_AFolderRenderedTheMaintainersWay(t *testing.T) {
	dist := buildExample(t)
	flat := filepath.Join(t.TempDir(), "out")
	copyRelease(t, filepath.Join(dist, "infrastructure-example", "v0.1.0"), flat)
	tree := t.TempDir()
	copyRelease(t, filepath.Join(dist, "infrastructure-example", "v0.1.0"), filepath.Join(tree, "infrastructure-example", "v0.1.0"))
	dirs := []string{flat, tree}
	if rendered := renderWithKubectl(t); rendered != "" {
		dirs = append(dirs, rendered)
	}
	for _, dir := range dirs {
		for _, arg := range []string{dir, "file://" + dir} {
			code, stdout, stderr := runCmd(t, nil, "verify", arg, "--version", "v0.1.0")
			if code != 0 || !strings.Contains(stdout, "flavor ha") {
				t.Errorf("verify %s: exit %d:\n%s%s", arg, code, stdout, stderr)
			}
			if n := strings.Count(stderr, "no checksums.txt in "); n != 1 || !strings.Contains(stderr, "nothing to check the files against") {
				t.Errorf("verify %s: the missing checksums.txt said %d times:\n%s", arg, n, stderr)
			}
		}
		_, _, _, pub := signedExample(t)
		code, _, stderr := runCmd(t, nil, "verify", dir, "--version", "v0.1.0", "--signatures", "--key", pub)
		if code != 1 || !strings.Contains(stderr, "nothing is signed: no checksums.txt") || !strings.Contains(stderr, "an unsigned release cannot pass a signature check") {
			t.Errorf("verify --signatures %s: exit %d:\n%s", dir, code, stderr)
		}
		code, _, stderr = runCmd(t, nil, "diff", dist, dir+"@v0.1.0")
		if code != 0 {
			t.Errorf("diff %s %s: exit %d:\n%s", dist, dir, code, stderr)
		}
		code, _, stderr = runCmd(t, nil, "verify", dir, "--version", "v0.1.0", "--install", "--kubeconfig", closedKubeconfig(t))
		if code != 1 || !strings.Contains(stderr, "cannot reach the API server at https://127.0.0.1:1") || strings.Contains(stderr, "not written by capirepo") {
			t.Errorf("verify --install %s: exit %d, want the release read and the server unreachable:\n%s", dir, code, stderr)
		}
	}
}

// TestVerify_AMirrorFolder: capirepo mirror's folder output (no
// checksums.txt of its own) is verified and diffed.
func TestVerify_AMirrorFolder(t *testing.T) {
	srv, cfg := mirrorUpstream(t)
	out := t.TempDir()
	env := map[string]string{"GITHUB_API_URL": srv.APIURL()}
	if code, _, stderr := runCmd(t, env, "mirror", "infrastructure-example", "--to", "file://"+out, "--clusterctl-config", cfg); code != 0 {
		t.Fatalf("mirror: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd(t, nil, "verify", out)
	if code != 0 || !strings.Contains(stdout, "infrastructure-example v0.1.0") || !strings.Contains(stderr, "no checksums.txt in "+filepath.Join(out, "infrastructure-example", "v0.1.0")) {
		t.Errorf("verify the mirror: exit %d:\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runCmd(t, nil, "diff", out, buildExample(t))
	if code != 0 {
		t.Errorf("diff the mirror: exit %d:\n%s", code, stderr)
	}
	code, _, stderr = runCmd(t, nil, "verify", out, "--install", "--kubeconfig", closedKubeconfig(t))
	if code != 1 || !strings.Contains(stderr, "cannot reach the API server at https://127.0.0.1:1") {
		t.Errorf("verify --install the mirror: exit %d, want the release read and the server unreachable:\n%s", code, stderr)
	}
}

// renderWithKubectl renders the example as a Makefile's release-manifests
// target does, with the kustomize in kubectl and cp, into out/ (no
// checksums.txt, the image tag the tree has); "" without kubectl.
func renderWithKubectl(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Log("kubectl is not installed: no folder rendered with the kustomize CLI")
		return ""
	}
	src := exampleDir(t)
	out := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, kustomization := range map[string]string{"infrastructure-components.yaml": "config/default", "cluster-template-ha.yaml": "templates/flavors/ha"} {
		data, err := exec.Command("kubectl", "kustomize", filepath.Join(src, kustomization)).Output()
		if err != nil {
			t.Fatalf("kubectl kustomize %s: %v", kustomization, err)
		}
		if err := os.WriteFile(filepath.Join(out, file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(src, "templates", "*.yaml"))
	for _, f := range append(files, filepath.Join(src, "metadata.yaml")) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// closedKubeconfig names an API server on a closed port.
func closedKubeconfig(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "kubeconfig")
	body := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: x}}]
`
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
