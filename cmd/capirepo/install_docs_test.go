package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/targets"
)

// offlineCommands are the capirepo command lines of docs/install-check.md's
// section for a scratch cluster without internet, in order.
func offlineCommands(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "install-check.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## A scratch cluster without internet\n")
	if !ok {
		t.Fatal("docs/install-check.md has no section for a scratch cluster without internet")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var out []string
	in := false
	for _, line := range strings.Split(section, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "```"):
			in = !in
		case in && strings.HasPrefix(line, "capirepo "):
			out = append(out, line)
		}
	}
	return out
}

// closedURL is an http:// URL on 127.0.0.1 where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr + "/"
}

// TestInstallCheckDocs_OfflineCommandsRun runs the documented commands:
// mirror (against a fake GitHub: the upstream config it is given is the one
// addition) writes a folder and a clusterctl config from which the install
// check reads cert-manager with GitHub unreachable; without it, the fetch
// fails with what it was fetching and the three ways on; both verify
// --install lines parse and go on to the cluster (here, none).
func TestInstallCheckDocs_OfflineCommandsRun(t *testing.T) {
	cmds := offlineCommands(t)
	if len(cmds) != 3 || !strings.HasPrefix(cmds[0], "capirepo mirror ") {
		t.Fatalf("the section's commands changed: %q", cmds)
	}
	srv := fakegh.New(t)
	srv.AddRepo("kubernetes-sigs", "cluster-api", false)
	var assets []fakegh.Asset
	dir := filepath.Join(repoRoot, "builder", "testdata", "golden", "infrastructure-example")
	for _, name := range []string{"metadata.yaml", "infrastructure-components.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		assets = append(assets, fakegh.Asset{Name: strings.Replace(name, "infrastructure-", "core-", 1), Data: data})
	}
	srv.AddRelease("kubernetes-sigs", "cluster-api", fakegh.Release{Tag: "v0.1.0", Assets: assets})
	certManager := []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: issuers.cert-manager.io\n")
	srv.AddRepo("cert-manager", "cert-manager", false)
	srv.AddRelease("cert-manager", "cert-manager", fakegh.Release{Tag: "v1.16.0", Assets: []fakegh.Asset{{Name: "cert-manager.yaml", Data: certManager}}})
	upstream := filepath.Join(t.TempDir(), "clusterctl.yaml")
	if err := os.WriteFile(upstream, []byte("cert-manager:\n  version: v1.16.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	example := exampleDir(t)
	work := t.TempDir()
	t.Chdir(work)
	mirror := filepath.Join(work, "srv-capi")
	if code, _, stderr := runCmd(t, nil, "build", example, "--version", "v0.1.0", "--out", "dist"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	kc, err := os.ReadFile(closedKubeconfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("kind.kubeconfig", kc, 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(line string) []string {
		return strings.Fields(strings.ReplaceAll(strings.TrimPrefix(line, "capirepo "), "/srv/capi", mirror))
	}

	env := map[string]string{"GITHUB_API_URL": srv.APIURL()}
	if code, _, stderr := runCmd(t, env, append(args(cmds[0]), "--clusterctl-config", upstream)...); code != 0 {
		t.Fatalf("%s: exit %d: %s", cmds[0], code, stderr)
	}
	cfg, err := os.ReadFile("clusterctl-offline.yaml")
	if want := "file://" + mirror + "/cert-manager/v1.16.0/cert-manager.yaml"; err != nil || !strings.Contains(string(cfg), want) {
		t.Fatalf("clusterctl-offline.yaml lacks %s: %v\n%s", want, err, cfg)
	}

	// GitHub unreachable: the mirror's config serves, the default does not.
	offline := targets.Options{GitHub: github.Options{APIURL: closedURL(t)}, HTTPClient: &http.Client{}, Retry: &publish.Retry{Attempts: 1}}
	cm, err := pipeline.CertManager(t.Context(), mustClusterctl(t, "clusterctl-offline.yaml"), offline)
	if err != nil || cm.Version != "v1.16.0" || !bytes.Equal(cm.Components().Data, certManager) {
		t.Fatalf("cert-manager from the mirror, offline: %v, %+v", err, cm)
	}
	_, err = pipeline.CertManager(t.Context(), mustClusterctl(t, upstream), offline)
	for _, want := range []string{
		fmt.Sprintf("fetching cert-manager's CRDs (cert-manager.yaml of cert-manager v1.16.0 from https://github.com/cert-manager/cert-manager, as %s says clusterctl installs it)", upstream),
		"127.0.0.1",
		"install cert-manager's CRDs in the cluster first",
		"--clusterctl-config FILE whose cert-manager: url: names a copy",
		"--dry-run-only",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("offline without a copy: %v\nwant %q", err, want)
		}
	}

	for _, line := range cmds[1:] {
		code, _, stderr := runCmd(t, nil, args(line)...)
		if code != 1 || !strings.Contains(stderr, "cannot reach the API server at https://127.0.0.1:1") {
			t.Errorf("%s: exit %d, want the flags taken and the (absent) cluster asked:\n%s", line, code, stderr)
		}
	}
}

// mustClusterctl opens a clusterctl config file as the commands open one.
func mustClusterctl(t *testing.T, file string) pipeline.Clusterctl {
	t.Helper()
	cc, err := clusterctlConfig(t.Context(), file)
	if err != nil {
		t.Fatal(err)
	}
	return cc
}
