package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capirepo/capirepo/pipeline"
)

func TestDev_DefaultRootAndInitLine(t *testing.T) {
	xdg := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": xdg, "HOME": t.TempDir()}
	code, stdout, stderr := runCmd(t, env, "dev", exampleDir(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	cfg := filepath.Join(xdg, "cluster-api", "dev-repository", "config.yaml")
	if want := "clusterctl init --infrastructure example:v0.1.99 --config " + cfg + "\n"; stdout != want {
		t.Errorf("stdout\n got %q\nwant %q", stdout, want)
	}
	if _, err := os.Stat(filepath.Join(xdg, "cluster-api", "dev-repository", "infrastructure-example", "v0.1.99", "infrastructure-components.yaml")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(stderr, "infrastructure-example v0.1.99") || !strings.Contains(stderr, "rendered") {
		t.Errorf("progress: %s", stderr)
	}

	code, stdout, stderr = runCmd(t, env, "dev", exampleDir(t), "--output", "json")
	if code != 0 {
		t.Fatalf("re-run exit %d: %s", code, stderr)
	}
	var res pipeline.DevResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("--output json: %v\n%s", err, stdout)
	}
	if len(res.Providers) != 1 || !res.Providers[0].Cached || res.ConfigFile != cfg {
		t.Errorf("re-run result %+v", res)
	}
}

func TestDev_VersionAndRootFlags(t *testing.T) {
	root := filepath.Join(t.TempDir(), "dev")
	code, stdout, stderr := runCmd(t, nil, "dev", exampleDir(t), "--out", root, "--version", "v0.1.7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "clusterctl init --infrastructure example:v0.1.7 --config " + filepath.Join(root, "config.yaml") + "\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	code, _, stderr = runCmd(t, nil, "dev", exampleDir(t), "--out", root, "--version", "v0.9.0")
	if code != 1 || !strings.Contains(stderr, "minor: 9") {
		t.Errorf("uncovered version: exit %d: %s", code, stderr)
	}
	if code, _, _ := runCmd(t, nil, "dev", exampleDir(t)); code != 2 {
		t.Errorf("no HOME or XDG_CONFIG_HOME and no --out: exit %d, want 2", code)
	}
}

// TestDev_WatchRebuildsOnSaveAndStopsOnSignal runs capirepo dev --watch as
// a process: an edit of the tree shows in the dev repository with a second
// summary, and SIGINT or SIGTERM ends it within seconds with no temporary
// file left in the dev repository.
func TestDev_WatchRebuildsOnSaveAndStopsOnSignal(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			tree := copyTree(t, exampleDir(t))
			root := filepath.Join(t.TempDir(), "dev")
			cmd, out := capirepo(t, nil, "dev", tree, "--out", root, "--watch")
			summaries := func() int { return strings.Count(out.String(), "clusterctl init --infrastructure example:v0.1.99") }
			waitFor(t, "printed the first summary", out, func() bool { return summaries() == 1 })

			src := filepath.Join(tree, "templates", "cluster-template.yaml")
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(src, []byte(strings.Replace(string(data), "192.168.0.0/16", "10.244.0.0/16", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "printed a second summary", out, func() bool { return summaries() == 2 })
			got, err := os.ReadFile(filepath.Join(root, "infrastructure-example", "v0.1.99", "cluster-template.yaml"))
			if err != nil || !strings.Contains(string(got), "10.244.0.0/16") {
				t.Errorf("the dev repository does not have the edit (%v); output:\n%s", err, out.String())
			}
			if n := strings.Count(out.String(), "infrastructure-example v0.1.99 ("); n != 2 {
				t.Errorf("%d progress lines, want one per run; output:\n%s", n, out.String())
			}

			if code := exitsWithin(t, cmd, sig, 5*time.Second, out); code != 0 {
				t.Errorf("exit %d after %v, want 0; output:\n%s", code, sig, out.String())
			}
			_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.Contains(d.Name(), ".tmp") {
					t.Errorf("left behind: %s", p)
				}
				return nil
			})
		})
	}
}
