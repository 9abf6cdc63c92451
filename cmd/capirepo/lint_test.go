package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/internal/testtree"
)

// copyDir copies the regular files of src into dst, but skip.
func copyDir(t *testing.T, src, dst string, skip ...string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || strings.Contains(strings.Join(skip, " "), e.Name()) {
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

// TestLint_AnyReleaseFolder: lint reads release assets in every layout
// clusterctl reads them from, with no checksums.txt, and honours the
// waivers of --config; a path it cannot read names the layouts it tried.
func TestLint_AnyReleaseFolder(t *testing.T) {
	dist := filepath.Join(t.TempDir(), "dist")
	if code, _, stderr := runCmd(t, nil, "build", "--dir", exampleDir(t), "--version", "v0.1.0", "--out", dist); code != 0 {
		t.Fatalf("build: %s", stderr)
	}
	built := filepath.Join(dist, "infrastructure-example", "v0.1.0")
	tmp := t.TempDir()
	overrides := filepath.Join(tmp, "overrides")
	copyDir(t, built, filepath.Join(overrides, "infrastructure-example", "v0.1.0"), "checksums.txt")
	copyDir(t, built, filepath.Join(overrides, "infrastructure-example", "v0.0.9"), "checksums.txt")
	download := filepath.Join(tmp, "download") // a GitHub release download: flat, no label, no version
	copyDir(t, built, download, "checksums.txt")
	for _, c := range []struct{ name, path, want string }{
		{"dist", dist, ""},
		{"overrides folder, newest version", overrides, "linting v0.1.0, the newest version"},
		{"single version folder", filepath.Join(overrides, "infrastructure-example", "v0.1.0"), ""},
		{"GitHub release download", download, "provider infrastructure-example, from the objects"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, nil, "lint", c.path)
			if code != 0 || !strings.Contains(stderr, "0 errors") || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d: %s", code, stderr)
			}
		})
	}

	// A manager container renamed in the download; a config's waiver clears it.
	comps := filepath.Join(download, "infrastructure-components.yaml")
	data, err := os.ReadFile(comps)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(comps, bytes.Replace(data, []byte("        name: manager\n"), []byte("        name: controller\n"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, nil, "lint", download); code != 1 || !strings.Contains(stderr, "CAPI204") {
		t.Errorf("renamed manager: exit %d: %s", code, stderr)
	}
	cfg := filepath.Join(tmp, "capirepo.yaml")
	if err := os.WriteFile(cfg, []byte("providers:\n- name: infrastructure-example\nlint:\n  disable:\n  - rule: CAPI204\n    reason: fixed next release\n  - rule: CAPI102\n    reason: fixed next release\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, nil, "lint", "--config", cfg, download); code != 0 || !strings.Contains(stderr, "(waived: fixed next release)") {
		t.Errorf("--config waiver on a release folder: exit %d: %s", code, stderr)
	}
	// A metadata.yaml clusterctl refuses: the waiver does not clear it.
	if err := os.WriteFile(filepath.Join(download, "metadata.yaml"), []byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Nope\nreleaseSeries: [{major: 0, minor: 1, contract: v1beta2}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, nil, "lint", "--config", cfg, download); code != 1 || !strings.Contains(stderr, "waiver CAPI102 (fixed next release) cannot waive") {
		t.Errorf("refused metadata: exit %d: %s", code, stderr)
	}

	empty := t.TempDir()
	if code, _, stderr := runCmd(t, nil, "lint", empty); code != 1 || !strings.Contains(stderr, "<label>/<version>/") || !strings.Contains(stderr, "GitHub release download") {
		t.Errorf("empty folder: exit %d: %s", code, stderr)
	}
}

// TestLint_SourceTreeWithoutVersion: a pull request's lint needs no
// --version: the newest release series of metadata.yaml, said on stderr.
func TestLint_SourceTreeWithoutVersion(t *testing.T) {
	code, _, stderr := runCmd(t, nil, "lint", exampleDir(t))
	if code != 0 || !strings.Contains(stderr, "lint: no --version: linting as v0.1.99 (the newest release series of metadata.yaml, 0.1)") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestLint_SourceTreeNextVersion: nextVersion wins when metadata.yaml has its
// series and none newer; a stale one gives way to the newest series.
func TestLint_SourceTreeNextVersion(t *testing.T) {
	for _, c := range []struct{ next, want string }{
		{"v1.2.5", "linting as v1.2.5 (nextVersion of infrastructure-test)"},
		{"v1.1.0", "linting as v1.2.99 (the newest release series of metadata.yaml, 1.2; nextVersion v1.1.0 of infrastructure-test is older)"},
	} {
		dir := testtree.Write(t, testtree.Minimal(map[string]string{
			"capirepo.yaml": "providers:\n- name: infrastructure-test\n  nextVersion: " + c.next + "\n",
			"metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- {major: 1, minor: 1, contract: v1beta2}\n- {major: 1, minor: 2, contract: v1beta2}\n",
		}))
		if code, _, stderr := runCmd(t, nil, "lint", dir); !strings.Contains(stderr, c.want) {
			t.Errorf("nextVersion %s: exit %d: %s", c.next, code, stderr)
		}
	}
}
