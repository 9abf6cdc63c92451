package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/internal/dirlock"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/publish"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func buildExampleDist(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "dist")
	if code, _, stderr := runCmd(t, nil, "build", exampleDir(t), "--version", "v0.1.0", "--out", out); code != 0 {
		t.Fatalf("build exit %d: %s", code, stderr)
	}
	return out
}

func TestPublishLocal_PrintsConfigEntryAndIsIdempotent(t *testing.T) {
	dist := buildExampleDist(t)
	root := filepath.Join(t.TempDir(), "repo")
	code, stdout, stderr := runCmd(t, nil, "publish", "local", dist, "--out", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var cfg publish.ClusterctlConfig
	if err := yaml.Unmarshal([]byte(stdout), &cfg); err != nil {
		t.Fatalf("stdout is not a clusterctl config: %v\n%s", err, stdout)
	}
	want := []publish.ProviderURL{{Name: "example", Type: "InfrastructureProvider",
		URL: "file://" + filepath.Join(root, "infrastructure-example", "v0.1.0", "infrastructure-components.yaml")}}
	if diff := cmp.Diff(want, cfg.Providers); diff != "" {
		t.Errorf("printed providers (-want +got):\n%s", diff)
	}
	if code, _, stderr := runCmd(t, nil, "verify", root); code != 0 {
		t.Fatalf("verify the published tree: exit %d: %s", code, stderr)
	}

	code, _, stderr = runCmd(t, nil, "publish", "local", dist, "--out", root)
	if code != 0 || !strings.Contains(stderr, "nothing to do") {
		t.Errorf("identical re-publish: exit %d, stderr %s", code, stderr)
	}

	// A different build of the same version is refused, then replaced.
	other := filepath.Join(t.TempDir(), "dist")
	if code, _, stderr := runCmd(t, nil, "build", exampleDir(t), "--version", "v0.1.0", "--out", other, "--image", "registry.test/other"); code != 0 {
		t.Fatalf("build exit %d: %s", code, stderr)
	}
	code, _, stderr = runCmd(t, nil, "publish", "local", other, "--out", root)
	if code != 1 || !strings.Contains(stderr, "changed: checksums.txt, infrastructure-components.yaml") || !strings.Contains(stderr, "--replace") {
		t.Errorf("different content without --replace: exit %d, stderr %s", code, stderr)
	}
	code, _, stderr = runCmd(t, nil, "publish", "local", other, "--out", root, "--replace", "--output", "json")
	if code != 0 {
		t.Fatalf("--replace: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(root, "infrastructure-example", "v0.1.0", "infrastructure-components.yaml"))
	if err != nil || !strings.Contains(string(data), "registry.test/other:v0.1.0") {
		t.Errorf("--replace did not write the new components: %v", err)
	}
}

func TestPublishLocal_OverridesFolderFromEnvironment(t *testing.T) {
	dist := buildExampleDist(t)
	for _, tc := range []struct {
		name   string
		env    func(home string) map[string]string
		config string // clusterctl config body written to home/clusterctl.yaml and passed with --clusterctl-config
		want   func(home string) string
	}{
		{"XDG_CONFIG_HOME", func(h string) map[string]string { return map[string]string{"XDG_CONFIG_HOME": h + "/xdg", "HOME": h} },
			"", func(h string) string { return h + "/xdg/cluster-api/overrides" }},
		{"HOME only", func(h string) map[string]string { return map[string]string{"HOME": h} },
			"", func(h string) string { return h + "/.config/cluster-api/overrides" }},
		{"clusterctl config", func(h string) map[string]string { return map[string]string{"HOME": h} },
			"overridesFolder: ${HOME}/custom\n", func(h string) string { return h + "/custom" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			args := []string{"publish", "local", dist, "--overrides"}
			if tc.config != "" {
				f := filepath.Join(home, "clusterctl.yaml")
				if err := os.WriteFile(f, []byte(strings.ReplaceAll(tc.config, `\n`, "\n")), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--clusterctl-config", f)
			}
			code, _, stderr := runCmd(t, tc.env(home), args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			dir := filepath.Join(tc.want(home), "infrastructure-example", "v0.1.0")
			if _, err := os.Stat(filepath.Join(dir, "infrastructure-components.yaml")); err != nil {
				t.Errorf("override not written to %s: %v\n%s", dir, err, stderr)
			}
		})
	}
}

func TestPublishLocal_UsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"publish", "local"},
		{"publish", "local", "--out", "x", "--overrides"},
		{"publish", "local", "--out", "x", "--clusterctl-config", "c.yaml"},
	} {
		if code, _, stderr := runCmd(t, nil, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
}

// TestLockFile_NothingLeftInTheUsersFolders: the lock every writer takes
// leaves no file behind, in a dist folder, in a repository tree a re-run
// wrote nothing into, or in the provider tree when it is --out.
func TestLockFile_NothingLeftInTheUsersFolders(t *testing.T) {
	tree := testtree.Write(t, testtree.Minimal(nil))
	dist := filepath.Join(t.TempDir(), "dist")
	repo := filepath.Join(t.TempDir(), "repo")
	for _, args := range [][]string{
		{"build", tree, "--version", "v1.2.0", "--out", dist},
		{"build", tree, "--version", "v1.2.0", "--out", tree},
		{"publish", "local", dist, "--out", repo},
		{"publish", "local", dist, "--out", repo}, // unchanged: writes nothing
	} {
		if code, _, stderr := runCmd(t, nil, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	for _, root := range []string{tree, dist, repo} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Name() == dirlock.FileName {
				t.Errorf("%s was left behind", p)
			}
			return nil
		})
	}
}

// TestPublishLocal_AnInterruptSaysWhatWasDone: a signal that comes while
// publish local still has folders to write stops it before anything moves
// into place (exit 1, the root as it was, no staging left); one that comes
// when nothing was left to do lets it finish, and says so (exit 0).
func TestPublishLocal_AnInterruptSaysWhatWasDone(t *testing.T) {
	dist := buildExample(t)
	root := filepath.Join(t.TempDir(), "repo")
	interrupted, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("stopped by interrupt"))
	runInterrupted := func() (int, string) {
		var out, errOut bytes.Buffer
		code := run(interrupted, []string{"publish", "local", dist, "--out", root}, &out, &errOut, func(string) string { return "" })
		return code, errOut.String()
	}
	code, stderr := runInterrupted()
	if code != exitFailure || !strings.Contains(stderr, "stopped by interrupt: stopped before anything was moved into "+root+", which is as it was (nothing published)") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("the root holds %v after a stopped publish", entries)
	}
	if code, _, stderr := runCmd(t, nil, "publish", "local", dist, "--out", root); code != 0 {
		t.Fatalf("publish: exit %d: %s", code, stderr)
	}
	code, stderr = runInterrupted()
	if code != exitOK || !strings.Contains(stderr, "capirepo: stopped by interrupt after the run had done its work: it finished, nothing was cut short") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
