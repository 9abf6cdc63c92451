package release_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/release"
)

// TestScanTree_ExactlyTheVersionsClusterctlReads: every entry of a label
// folder whose name clusterctl takes as a version is found (a name without
// the v, with a leading space, a pre-release), those capirepo cannot read
// carry an error naming them, and nothing else is listed.
func TestScanTree_ExactlyTheVersionsClusterctlReads(t *testing.T) {
	root := t.TempDir()
	label := filepath.Join(root, "infrastructure-example")
	for _, d := range []string{"v1.10.0", "v1.9.0", "v2.0.0-rc.1", "9.9.9", " 1.2.3", "latest", "v1.2", ".v3.0.0.tmp-1", "notes"} {
		if err := os.MkdirAll(filepath.Join(label, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"v4.0.0", "README.md"} { // files: clusterctl finds no folder
		if err := os.WriteFile(filepath.Join(label, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(label, "v1.9.0"), filepath.Join(label, "v5.0.0")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"bin/v6.0.0", "cluster-api/v1.9.0"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := release.ScanTree(root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range tree {
		if v.ID.Label() == "cluster-api" {
			continue
		}
		got[v.Version] = ""
		if v.Err != nil {
			got[v.Version] = v.Err.Error()
		}
	}
	want := map[string]string{"v1.9.0": "", "v1.10.0": "", "v2.0.0-rc.1": "",
		"9.9.9":  filepath.Join(label, "9.9.9") + ": clusterctl reads this folder as version 9.9.9",
		" 1.2.3": filepath.Join(label, " 1.2.3") + ": clusterctl reads this folder as version  1.2.3",
		"v5.0.0": filepath.Join(label, "v5.0.0") + " is a symbolic link",
	}
	for v, w := range want {
		if g, ok := got[v]; !ok || !strings.HasPrefix(g, w) {
			t.Errorf("%q: got %q (found %v), want %q", v, g, ok, w)
		}
	}
	for v := range got {
		if _, ok := want[v]; !ok {
			t.Errorf("%q listed; clusterctl does not read it", v)
		}
	}
	if diff := cmp.Diff([]string{"v1.9.0", "v1.10.0", "v2.0.0-rc.1"}, release.Versions(release.Readable(tree))); diff != "" {
		t.Errorf("readable versions of both providers, oldest first, once each (-want +got):\n%s", diff)
	}
	if err := release.Unreadable(tree); err == nil || !strings.Contains(err.Error(), "rename it to v9.9.9") || !strings.Contains(err.Error(), "rename it to v1.2.3") {
		t.Errorf("Unreadable: %v", err)
	}
}
