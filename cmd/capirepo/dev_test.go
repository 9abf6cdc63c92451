package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
