package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/publish/github"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/release"
)

// mirrorUpstream is a fake GitHub holding the example provider at v0.1.0
// (the golden release files) and cert-manager, and a clusterctl config
// pointing at it.
func mirrorUpstream(t *testing.T) (*fakegh.Server, string) {
	t.Helper()
	srv := fakegh.New(t)
	repo := "cli-mirror-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	srv.AddRepo("acme", repo, false)
	dir := "../../builder/testdata/golden/infrastructure-example"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var assets []fakegh.Asset
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		assets = append(assets, fakegh.Asset{Name: e.Name(), Data: data})
	}
	srv.AddRelease("acme", repo, fakegh.Release{Tag: "v0.1.0", Assets: assets})
	srv.AddRepo("cert-manager", "cert-manager", false)
	srv.AddRelease("cert-manager", "cert-manager", fakegh.Release{Tag: "v1.16.0", Assets: []fakegh.Asset{{Name: "cert-manager.yaml", Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cert-manager\n")}}})
	cfg := filepath.Join(t.TempDir(), "clusterctl.yaml")
	body := fmt.Sprintf("providers:\n- name: example\n  type: InfrastructureProvider\n  url: https://github.com/acme/%s/releases/latest/infrastructure-components.yaml\ncert-manager:\n  version: v1.16.0\n", repo)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv, cfg
}

func TestMirror_CLIMirrorsThenCopiesNothingThenRefusesAChangedAsset(t *testing.T) {
	srv, cfg := mirrorUpstream(t)
	out := t.TempDir()
	env := map[string]string{"GITHUB_API_URL": srv.APIURL()}
	args := []string{"mirror", "infrastructure-example", "--to", "file://" + out, "--clusterctl-config", cfg, "-o", "json"}
	for run, wantCopied := range []int{7, 0} {
		code, stdout, stderr := runCmd(t, env, args...)
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", run, code, stderr)
		}
		var sum pipeline.MirrorSummary
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		if len(sum.Providers) != 1 || len(sum.Providers[0].Versions) != 1 {
			t.Fatalf("run %d: summary %+v", run, sum)
		}
		v := sum.Providers[0].Versions[0]
		// Only what the release holds (no checksums.txt of capirepo's own).
		if got := len(v.Uploaded); got != wantCopied || slices.Contains(v.Uploaded, "checksums.txt") {
			t.Errorf("run %d: copied %v, want %d files", run, v.Uploaded, wantCopied)
		}
		if sum.Verified != 1 || !strings.Contains(sum.Config, "file://"+out+"/infrastructure-example/v0.1.0/infrastructure-components.yaml") {
			t.Errorf("run %d: verified %d, config:\n%s", run, sum.Verified, sum.Config)
		}
	}

	// The maintainer changes an asset under the published version.
	g, err := github.New(github.Options{Owner: "acme", Repo: "cli-mirror-" + strings.ToLower(t.Name()), APIURL: srv.APIURL(),
		Replace: true, HTTPClient: &http.Client{}, Retry: &publish.Retry{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(filepath.Join(out, "infrastructure-example/v0.1.0/cluster-template.yaml"))
	if _, err := g.Publish(t.Context(), &release.Release{Version: "v0.1.0", Providers: []*release.Provider{{Version: "v0.1.0",
		Files: []release.File{{Name: "cluster-template.yaml", Data: append(old, "# changed\n"...)}}}}}); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, env, args[:len(args)-2]...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 for a changed upstream asset: %s", code, stderr)
	}
	for _, s := range []string{"infrastructure-example", "v0.1.0", "cluster-template.yaml"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("the error does not name %s: %s", s, stderr)
		}
	}
}

func TestMirror_CLIRefusesAGitLabHostClusterctlWouldNotRead(t *testing.T) {
	code, _, stderr := runCmd(t, map[string]string{"GITLAB_ACCESS_TOKEN": "x"}, "mirror", "infrastructure-aws", "--to", "gitlab://code.example.com/capi/mirror")
	if code != 2 || !strings.Contains(stderr, `"gitlab."`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestMirror_CLIIntoAnOCIRegistryThenCopiesNothing: an oci:// target gets
// the artifacts cluster-api-operator reads, credentials from OCI_USERNAME and
// OCI_PASSWORD (never printed); the artifact reads back by the operator's
// rules with the upstream bytes, and a re-run pushes nothing.
func TestMirror_CLIIntoAnOCIRegistryThenCopiesNothing(t *testing.T) {
	srv, cfg := mirrorUpstream(t)
	host := authRegistry(t, "mirror", "s3cret-mirror-pw")
	env := map[string]string{"GITHUB_API_URL": srv.APIURL(), "OCI_USERNAME": "mirror", "OCI_PASSWORD": "s3cret-mirror-pw"}
	args := []string{"mirror", "infrastructure-example:v0.1.0", "--to", "oci://" + host + "/capi", "--plain-http", "--clusterctl-config", cfg, "--cert-manager=false", "-o", "json"}
	for run, wantUploaded := range []bool{true, false} {
		code, stdout, stderr := runCmd(t, env, args...)
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", run, code, stderr)
		}
		if strings.Contains(stdout+stderr, "s3cret-mirror-pw") {
			t.Fatal("the registry password was printed")
		}
		var sum pipeline.MirrorSummary
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		if len(sum.Providers) != 1 || len(sum.Providers[0].Versions) != 1 {
			t.Fatalf("run %d: summary %+v", run, sum)
		}
		if got := len(sum.Providers[0].Versions[0].Uploaded) > 0; got != wantUploaded {
			t.Errorf("run %d: uploaded %v", run, sum.Providers[0].Versions[0].Uploaded)
		}
	}
	creds := map[string]string{"OCI_USERNAME": "mirror", "OCI_PASSWORD": "s3cret-mirror-pw"}
	kc, _ := oci.KeychainFromEnv(func(k string) string { return creds[k] })
	r, err := oci.New(oci.Options{Repository: host + "/capi", PlainHTTP: true, Keychain: kc})
	if err != nil {
		t.Fatal(err)
	}
	p, err := publish.Read(t.Context(), r, publish.Ref{ID: provider.ID{Name: "example", Type: "InfrastructureProvider"}, Version: "v0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../builder/testdata/golden/infrastructure-example/infrastructure-components.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Components(); string(got.Data) != string(want) {
		t.Errorf("components read back from the registry differ from upstream's (%d vs %d bytes)", len(got.Data), len(want))
	}
}

// TestMirror_CLIIntoAnOCIRegistryWritesTheOperatorsResources: what a mirror
// into a registry writes for the site is what the operator reads (the
// Provider resources, as publish oci prints them), said to be unusable by
// clusterctl; no clusterctl config pointing at the registry.
func TestMirror_CLIIntoAnOCIRegistryWritesTheOperatorsResources(t *testing.T) {
	srv, cfg := mirrorUpstream(t)
	host := authRegistry(t, "mirror", "s3cret-mirror-pw")
	env := map[string]string{"GITHUB_API_URL": srv.APIURL(), "OCI_USERNAME": "mirror", "OCI_PASSWORD": "s3cret-mirror-pw"}
	out := filepath.Join(t.TempDir(), "site.yaml")
	code, _, stderr := runCmd(t, env, "mirror", "infrastructure-example:v0.1.0", "--to", "oci://"+host+"/capi", "--plain-http",
		"--clusterctl-config", cfg, "--cert-manager=false", "--config-out", out)
	if code != 0 || !strings.Contains(stderr, "Provider resources of the operator for the site (clusterctl cannot install from this mirror) written to "+out) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	site := string(data)
	for _, want := range []string{"# clusterctl cannot read an OCI registry, so it cannot install from this mirror",
		"kind: InfrastructureProvider", "name: example", "namespace: capi-example-system", "version: v0.1.0",
		"oci: http://" + host + "/capi/infrastructure-example:v0.1.0"} {
		if !strings.Contains(site, want) {
			t.Errorf("site file lacks %q:\n%s", want, site)
		}
	}
	if strings.Contains(site, "providers:") || strings.Contains(site, "url:") {
		t.Errorf("site file holds a clusterctl config:\n%s", site)
	}
}

// TestMirror_CLITextSaysEachVersionOnce: a version's counts are said as it
// is copied, not again in a summary at the end (issue 38.4).
func TestMirror_CLITextSaysEachVersionOnce(t *testing.T) {
	srv, cfg := mirrorUpstream(t)
	env := map[string]string{"GITHUB_API_URL": srv.APIURL()}
	args := []string{"mirror", "infrastructure-example", "--to", "file://" + t.TempDir(), "--clusterctl-config", cfg}
	for run, want := range []string{"7 written, 0 already there", "all 7 files already there"} {
		code, _, stderr := runCmd(t, env, args...)
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", run, code, stderr)
		}
		mustContain(t, "stderr", stderr, want)
		if n := strings.Count(stderr, "infrastructure-example v0.1.0: "); n != 1 {
			t.Errorf("run %d: the version's counts said %d times, want once:\n%s", run, n, stderr)
		}
	}
}
