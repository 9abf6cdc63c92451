package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
)

func readClusterctlConfig(t *testing.T, file string) publish.ClusterctlConfig {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var c publish.ClusterctlConfig
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("%s: %v\n%s", file, err, data)
	}
	return c
}

// TestPublishLocal_ConfigOutWritesTheConfigAndSaysWhatNext: publish local
// prints the clusterctl config and the next: lines; with --config-out the
// config goes to the file instead of stdout, stderr says where, and the
// clusterctl init line reads it; clusterctl reads the repository through it.
func TestPublishLocal_ConfigOutWritesTheConfigAndSaysWhatNext(t *testing.T) {
	dist := buildExample(t)
	root := filepath.Join(t.TempDir(), "repo")
	code, stdout, stderr := runCmd(t, nil, "publish", "local", dist, "--out", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mustContain(t, "stdout", stdout, "providers:\n- name: example\n")
	mustContain(t, "stderr", stderr, "next:\n  save the clusterctl config printed for file://"+root+" as FILE (or pass --config-out FILE)\n",
		"  try it: clusterctl init --infrastructure example:v0.1.0 --config FILE\n")

	cfg := filepath.Join(t.TempDir(), "clusterctl.yaml")
	code, stdout, stderr = runCmd(t, nil, "publish", "local", dist, "--out", root, "--config-out", cfg)
	if code != 0 {
		t.Fatalf("--config-out: exit %d: %s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout holds what --config-out wrote:\n%s", stdout)
	}
	mustContain(t, "stderr", stderr, "next:\n  clusterctl config for file://"+root+" written to "+cfg+"\n",
		"  try it: clusterctl init --infrastructure example:v0.1.0 --config "+cfg+"\n")
	want := []publish.ProviderURL{{Name: "example", Type: "InfrastructureProvider",
		URL: "file://" + filepath.Join(root, "infrastructure-example", "v0.1.0", "infrastructure-components.yaml")}}
	c := readClusterctlConfig(t, cfg)
	if diff := cmp.Diff(want, c.Providers); diff != "" {
		t.Errorf("written providers (-want +got):\n%s", diff)
	}
	verifyConfig(t, c)

	// JSON stays one document on stdout and names the file.
	code, stdout, stderr = runCmd(t, nil, "publish", "local", dist, "--out", root, "--config-out", cfg, "-o", "json")
	var sum publish.Summary
	if code != 0 || json.Unmarshal([]byte(stdout), &sum) != nil || sum.ConfigFile != cfg || len(sum.Next) != 2 {
		t.Errorf("-o json: exit %d, %+v\n%s\n%s", code, sum, stdout, stderr)
	}
}

// verifyConfig has clusterctl's client read the version the config names.
func verifyConfig(t *testing.T, c publish.ClusterctlConfig) {
	t.Helper()
	dir := filepath.Dir(filepath.Dir(filepath.Dir(strings.TrimPrefix(c.Providers[0].URL, "file://"))))
	if code, _, stderr := runCmd(t, nil, "verify", "file://"+dir); code != 0 {
		t.Errorf("verify %s: exit %d: %s", dir, code, stderr)
	}
}

// TestConfigOut_MistakesAreUsageErrors: --config-out with --overrides (no
// providers: entry to write), naming a folder, or in a folder that does not
// exist is refused before anything is published.
func TestConfigOut_MistakesAreUsageErrors(t *testing.T) {
	dist := buildExample(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"publish", "local", dist, "--overrides", "--config-out", filepath.Join(dir, "c.yaml")}, "--overrides has none"},
		{[]string{"publish", "local", dist, "--out", filepath.Join(dir, "repo"), "--config-out", dir}, "is a folder: name the file to write"},
		{[]string{"publish", "local", dist, "--out", filepath.Join(dir, "repo"), "--config-out", filepath.Join(dir, "nope", "c.yaml")}, "no such folder"},
		{[]string{"publish", "github", dist, "--repo", "a/b", "--config-out", dir}, "is a folder"},
		{[]string{"release", exampleDir(t), "--version", "v0.1.0", "--dry-run", "--config-out", filepath.Join(dir, "nope", "c.yaml")}, "no such folder"},
		{[]string{"dev", exampleDir(t), "--out", filepath.Join(dir, "dev"), "--config-out", dir}, "is a folder"},
	} {
		code, _, stderr := runCmd(t, map[string]string{"GITHUB_TOKEN": "t"}, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "repo")); !os.IsNotExist(err) {
		t.Errorf("a refused publish wrote the repository: %v", err)
	}
}

// TestPublishGitHub_ConfigOutAndNextLines: publish github writes the
// release's clusterctl config with --config-out; to the fake, a GitHub
// Enterprise server as clusterctl sees it, the next lines say why
// clusterctl cannot install from it instead of an init line that fails.
func TestPublishGitHub_ConfigOutAndNextLines(t *testing.T) {
	const token = "ghp_config-out-token"
	srv := fakegh.New(t, fakegh.WithToken(token))
	srv.AddRepo("acme", "cluster-api-provider-example", false)
	dist := buildExample(t)
	cfg := filepath.Join(t.TempDir(), "clusterctl.yaml")
	env := map[string]string{"GITHUB_TOKEN": token, "GITHUB_API_URL": srv.APIURL()}
	code, stdout, stderr := runCmd(t, env, "publish", "github", "--repo", "acme/cluster-api-provider-example", dist, "--config-out", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout holds what --config-out wrote:\n%s", stdout)
	}
	mustContain(t, "stderr", stderr, " written to "+cfg+"\n", "  clusterctl cannot install from it: clusterctl reads GitHub releases only from github.com, not "+strings.TrimSuffix(srv.APIURL(), "/")+"\n")
	if strings.Contains(stderr, "clusterctl init") {
		t.Errorf("stderr gives a clusterctl init line for a server clusterctl does not read:\n%s", stderr)
	}
	c := readClusterctlConfig(t, cfg)
	if len(c.Providers) != 1 || !strings.HasSuffix(c.Providers[0].URL, "/acme/cluster-api-provider-example/releases/latest/infrastructure-components.yaml") {
		t.Errorf("written config %+v", c)
	}
}

// TestDev_ConfigOut: dev writes the clusterctl config to --config-out as
// well, says so, and its init line names that file.
func TestDev_ConfigOut(t *testing.T) {
	root := filepath.Join(t.TempDir(), "dev")
	cfg := filepath.Join(t.TempDir(), "clusterctl.yaml")
	code, stdout, stderr := runCmd(t, nil, "dev", exampleDir(t), "--out", root, "--config-out", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "clusterctl init --infrastructure example:v0.1.99 --config " + cfg + "\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	mustContain(t, "stderr", stderr, "clusterctl config for the dev repository written to "+cfg+"\n")
	if diff := cmp.Diff(readClusterctlConfig(t, filepath.Join(root, pipeline.DevConfigFile)), readClusterctlConfig(t, cfg)); diff != "" {
		t.Errorf("--config-out differs from the dev repository's config (-want +got):\n%s", diff)
	}
	code, _, stderr = runCmd(t, nil, "dev", exampleDir(t), "--out", root, "--config-out", cfg)
	if code != 0 || !strings.Contains(stderr, "clusterctl config "+cfg+" unchanged\n") {
		t.Errorf("re-run: exit %d: %s", code, stderr)
	}
}

// TestRelease_ConfigOutFollowsTheSameRule: release writes the first
// clusterctl target's config to --config-out and then prints no
// providers: entry for it; the next: lines name the file.
func TestRelease_ConfigOutFollowsTheSameRule(t *testing.T) {
	out, root := filepath.Join(t.TempDir(), "dist"), filepath.Join(t.TempDir(), "repo")
	cfg := filepath.Join(t.TempDir(), "clusterctl.yaml")
	code, stdout, stderr := runCmd(t, nil, "release", exampleDir(t), "--version", "v0.1.0", "--out", out, "--skip-image-check",
		"--publish", "file://"+root, "--config-out", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout holds what --config-out wrote:\n%s", stdout)
	}
	mustContain(t, "stderr", stderr, "next:\n  clusterctl config for file://"+root+" written to "+cfg+"\n",
		"  try it: clusterctl init --infrastructure example:v0.1.0 --config "+cfg+"\n")
	verifyConfig(t, readClusterctlConfig(t, cfg))
}
