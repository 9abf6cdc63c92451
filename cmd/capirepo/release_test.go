package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/pipeline"
)

const ghToken = "ghp_release_test_token_never_printed"

func newRegistryHost(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestBuild_ImagePushedAndComponentsNameItByDigest builds the example's
// manager for two platforms, pushes the image to an in-process registry and
// reads the index back.
func TestBuild_ImagePushedAndComponentsNameItByDigest(t *testing.T) {
	host := newRegistryHost(t)
	repo := host + "/example/capi-example-controller"
	out := filepath.Join(t.TempDir(), "dist")
	code, stdout, stderr := runCmd(t, map[string]string{"SOURCE_DATE_EPOCH": "1700000000"}, "build", "--dir", exampleDir(t), "--version", "v0.1.0", "--out", out,
		"--image", repo, "--image-push", "--image-ref", "digest", "--output", "json")
	if code != 0 {
		t.Fatalf("build exit %d: %s", code, stderr)
	}
	var sum buildSummary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("build --output json: %v\n%s", err, stdout)
	}
	if sum.Image == nil || !sum.Image.Pushed || len(sum.Binaries) != 2 {
		t.Fatalf("summary image %+v, %d binaries", sum.Image, len(sum.Binaries))
	}
	wantRef := repo + "@" + sum.Image.Digest
	if sum.Image.Components != wantRef {
		t.Errorf("components image %s, want %s", sum.Image.Components, wantRef)
	}

	tag, _ := name.NewTag(repo + ":v0.1.0")
	idx, err := remote.Index(tag)
	if err != nil {
		t.Fatalf("pull %s: %v", tag, err)
	}
	if d, _ := idx.Digest(); d.String() != sum.Image.Digest {
		t.Errorf("registry has %s, build reports %s", d, sum.Image.Digest)
	}
	im, _ := idx.IndexManifest()
	var platforms []string
	for i, d := range im.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, _ := img.ConfigFile()
		if cf.Architecture != d.Platform.Architecture || strings.Join(cf.Config.Entrypoint, " ") != "/manager" {
			t.Errorf("%s: config arch %s entrypoint %v", d.Platform, cf.Architecture, cf.Config.Entrypoint)
		}
		if cf.Config.Labels["org.opencontainers.image.version"] != "v0.1.0" {
			t.Errorf("%s: labels %v", d.Platform, cf.Config.Labels)
		}
		layers, _ := img.Layers()
		rc, _ := layers[len(layers)-1].Uncompressed()
		tr := tar.NewReader(rc)
		h, err := tr.Next()
		if err != nil || h.Name != "manager" {
			t.Fatalf("%s: first layer entry %v, %v", d.Platform, h, err)
		}
		inImage, _ := io.ReadAll(tr)
		_ = rc.Close()
		onDisk, err := os.ReadFile(sum.Binaries[i].Path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(inImage, onDisk) {
			t.Errorf("%s: /manager in the image differs from %s", d.Platform, sum.Binaries[i].Path)
		}
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, platforms); diff != "" {
		t.Errorf("index platforms (-want +got):\n%s", diff)
	}
	comps, err := os.ReadFile(filepath.Join(out, "infrastructure-example", "v0.1.0", "infrastructure-components.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(comps), "image: "+wantRef+"\n") {
		t.Errorf("components do not name %s", wantRef)
	}
}

func TestBuild_ImageLayoutByTag(t *testing.T) {
	out := filepath.Join(t.TempDir(), "dist")
	layoutDir := filepath.Join(t.TempDir(), "oci")
	code, _, stderr := runCmd(t, nil, "build", "--dir", exampleDir(t), "--version", "v0.1.0", "--out", out,
		"--image", "ghcr.io/example/capi-example-controller", "--image-layout", layoutDir, "--platforms", "linux/amd64")
	if code != 0 {
		t.Fatalf("build exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(layoutDir, "index.json")); err != nil {
		t.Errorf("no OCI layout: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "bin", "manager-linux-arm64")); err == nil {
		t.Error("--platforms linux/amd64 built arm64 too")
	}
	comps, _ := os.ReadFile(filepath.Join(out, "infrastructure-example", "v0.1.0", "infrastructure-components.yaml"))
	if !strings.Contains(string(comps), "image: ghcr.io/example/capi-example-controller:v0.1.0\n") {
		t.Error("components do not name the image by tag")
	}
}

func releaseJSON(t *testing.T, env map[string]string, args ...string) (int, pipeline.Summary, string) {
	t.Helper()
	code, stdout, stderr := runCmd(t, env, append([]string{"release", "--dir", exampleDir(t), "--version", "v0.1.0", "--output", "json"}, args...)...)
	var sum pipeline.Summary
	if code != exitUsage {
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
			t.Fatalf("release --output json (exit %d): %v\n%s\n%s", code, err, stdout, stderr)
		}
	}
	for _, s := range []string{stdout, stderr} {
		if strings.Contains(s, ghToken) {
			t.Error("the token was printed")
		}
	}
	return code, sum, stderr
}

func statuses(sum pipeline.Summary) string {
	var b strings.Builder
	for _, s := range sum.Steps {
		b.WriteString(s.Step + "=" + s.Status + "\n")
	}
	return b.String()
}

func TestRelease_DryRunRunsEveryStepButPublish(t *testing.T) {
	out := filepath.Join(t.TempDir(), "dist")
	code, sum, stderr := releaseJSON(t, nil, "--out", out, "--binaries", "--dry-run", "--publish", "github://example/provider")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "build=ok\nlint=ok\nwrite=ok\npublish github://example/provider=skipped\nverify github://example/provider=skipped\nverify dist=ok\n"
	if diff := cmp.Diff(want, statuses(sum)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	for _, f := range []string{"bin/manager-linux-amd64", "bin/manager-linux-arm64", "infrastructure-example/v0.1.0/metadata.yaml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("dry run did not build %s: %v", f, err)
		}
	}
	for _, line := range []string{"[1/6] build\n", "[6/6] verify dist: ok", "infrastructure-components.yaml"} {
		if !strings.Contains(stderr, line) {
			t.Errorf("progress lacks %q", line)
		}
	}
	if len(sum.Published) != 0 {
		t.Errorf("dry run published %+v", sum.Published)
	}
}

func TestRelease_FileTargetPublishesAndVerifies(t *testing.T) {
	root := filepath.Join(t.TempDir(), "repo")
	code, sum, stderr := releaseJSON(t, nil, "--out", filepath.Join(t.TempDir(), "dist"), "--publish", "file://"+root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "build=ok\nlint=ok\nwrite=ok\npublish file://" + root + "=ok\nverify file://" + root + "=ok\n"
	if diff := cmp.Diff(want, statuses(sum)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(root, "infrastructure-example", "v0.1.0", "infrastructure-components.yaml")); err != nil {
		t.Errorf("not published: %v", err)
	}
}

func TestRelease_GitHubFakeCompletesAndVerifiesDist(t *testing.T) {
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	srv.AddRepo("example", "provider", false)
	out := filepath.Join(t.TempDir(), "dist")
	code, sum, stderr := releaseJSON(t, map[string]string{"GITHUB_TOKEN": ghToken}, "--out", out,
		"--publish", "github://example/provider", "--github-api-url", srv.APIURL())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "build=ok\nlint=ok\nwrite=ok\npublish github://example/provider=ok\nverify github://example/provider=ok\n"
	if diff := cmp.Diff(want, statuses(sum)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if d := sum.Steps[4].Detail; !strings.Contains(d, "verified the built dist") {
		t.Errorf("verify detail %q does not say the dist was verified instead", d)
	}
	rels := srv.Releases("example", "provider")
	if len(rels) != 1 || rels[0].Draft || rels[0].Tag != "v0.1.0" || len(rels[0].Assets) != 8 {
		t.Fatalf("server holds %+v", rels)
	}
	if !strings.Contains(stderr, "uploaded metadata.yaml") {
		t.Errorf("progress does not list uploads:\n%s", stderr)
	}
}

// TestRelease_GitHubVerifiesThroughClusterctl publishes to the fake serving
// the public hosts, so clusterctl reads the release back by its github.com URL.
func TestRelease_GitHubVerifiesThroughClusterctl(t *testing.T) {
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	// clusterctl caches releases per repository for the process: a unique one.
	srv.AddRepo("example", "provider-through-clusterctl", false)
	orig := http.DefaultTransport
	http.DefaultTransport = srv.Transport(orig)
	t.Cleanup(func() { http.DefaultTransport = orig })
	t.Setenv("GOPROXY", "off")
	code, sum, stderr := releaseJSON(t, map[string]string{"GITHUB_TOKEN": ghToken}, "--out", filepath.Join(t.TempDir(), "dist"),
		"--publish", "github://example/provider-through-clusterctl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if d := sum.Steps[4].Detail; sum.Steps[4].Status != pipeline.StatusOK || !strings.Contains(d, "read back from https://github.com/example/provider-through-clusterctl") {
		t.Errorf("verify step %+v", sum.Steps[4])
	}
}

func TestRelease_StopsAtFirstFailureAndSaysWhatWasNotDone(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "ok")
	code, sum, stderr := releaseJSON(t, nil, "--out", filepath.Join(t.TempDir(), "dist"),
		"--publish", "file://"+blocker, "--publish", "file://"+root)
	if code != exitFailure {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	want := "build=ok\nlint=ok\nwrite=ok\npublish file://" + blocker + "=failed\nverify file://" + blocker + "=not run\npublish file://" + root + "=not run\nverify file://" + root + "=not run\n"
	if diff := cmp.Diff(want, statuses(sum)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if sum.Steps[3].Detail == "" {
		t.Error("the failed step has no detail")
	}
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the target after the failure was written: %v", err)
	}
}

func TestRelease_TextSummaryTable(t *testing.T) {
	code, _, stderr := runCmd(t, nil, "release", "--dir", exampleDir(t), "--version", "v0.1.0", "--out", filepath.Join(t.TempDir(), "dist"), "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, line := range []string{"STEP         STATUS  DETAIL", "lint         ok      0 errors"} {
		if !strings.Contains(stderr, line) {
			t.Errorf("summary lacks %q:\n%s", line, stderr)
		}
	}
}

func TestRelease_UsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no target", nil, nil, "at least one --publish"},
		{"unknown scheme", nil, []string{"--publish", "s3://bucket"}, `unknown scheme "s3"`},
		{"github without name", nil, []string{"--publish", "github://owner"}, "github://OWNER/NAME"},
		{"github without token", nil, []string{"--publish", "github://o/r"}, "set GITHUB_TOKEN"},
		{"gitlab without project", nil, []string{"--publish", "gitlab://gitlab.example.com"}, "gitlab://HOST"},
		{"push without image", nil, []string{"--dry-run", "--image-push"}, "need --image"},
		{"digest without a built image", nil, []string{"--dry-run", "--image", "r/x", "--image-ref", "digest"}, "--image-ref digest needs"},
		{"bad image ref", nil, []string{"--dry-run", "--image-ref", "sha"}, "tag or digest"},
		{"bad platform", nil, []string{"--dry-run", "--binaries", "--platforms", "linux"}, "--platforms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, tc.env, append([]string{"release", "--dir", exampleDir(t), "--version", "v0.1.0", "--out", t.TempDir()}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// TestRelease_GitLabFakeWithJobToken publishes inside a (simulated) GitLab CI
// job: the job token goes in the JOB-TOKEN header and is never printed.
func TestRelease_GitLabFakeWithJobToken(t *testing.T) {
	const jobToken = "glcbt-release-job-token"
	srv := fakegl.New(t)
	srv.AddProject(77, "infra/providers", false)
	srv.AddToken(jobToken, fakegl.JobToken)
	out := filepath.Join(t.TempDir(), "dist")
	code, sum, stderr := releaseJSON(t, map[string]string{"CI_JOB_TOKEN": jobToken}, "--out", out,
		"--publish", "gitlab://gitlab.example.com/infra/providers", "--gitlab-url", srv.URL, "--gitlab-token-type", "job")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, jobToken) {
		t.Fatal("the job token was printed")
	}
	want := "build=ok\nlint=ok\nwrite=ok\npublish gitlab://gitlab.example.com/infra/providers=ok\nverify gitlab://gitlab.example.com/infra/providers=ok\n"
	if diff := cmp.Diff(want, statuses(sum)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if n := len(srv.Files("77", "infrastructure-example", "v0.1.0")); n != 8 {
		t.Errorf("package holds %d files, want 8", n)
	}
	for _, r := range srv.Requests() {
		if r.Auth != fakegl.AuthJob {
			t.Errorf("request %s %s authenticated as %q, want the job token", r.Method, r.Path, r.Auth)
		}
	}
}
