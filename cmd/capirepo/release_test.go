package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/image/imagetest"
	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/pipeline"
)

const ghToken = "ghp_release_test_token_never_printed"

// TestBuild_ImageLayoutByTag: the image flags reach the build, and the
// image and binaries are in build's JSON summary.
func TestBuild_ImageLayoutByTag(t *testing.T) {
	out := filepath.Join(t.TempDir(), "dist")
	layoutDir := filepath.Join(t.TempDir(), "oci")
	base, baseDigest := imagetest.PushBase(t, imagetest.NewRegistry(t))
	code, stdout, stderr := runCmd(t, nil, "build", exampleDir(t), "--version", "v0.1.0", "--out", out, "--base-image", base,
		"--image", "ghcr.io/example/capi-example-controller", "--image-layout", layoutDir, "--platforms", "linux/amd64", "--output", "json")
	if code != 0 {
		t.Fatalf("build exit %d: %s", code, stderr)
	}
	var sum pipeline.BuildReport
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("build --output json: %v\n%s", err, stdout)
	}
	if sum.Image == nil || sum.Image.Layout != layoutDir || sum.Image.Components != "ghcr.io/example/capi-example-controller:v0.1.0" || len(sum.Binaries) != 1 {
		t.Errorf("summary image %+v, %d binaries", sum.Image, len(sum.Binaries))
	}
	if _, err := os.Stat(filepath.Join(layoutDir, "index.json")); err != nil {
		t.Errorf("no OCI layout: %v", err)
	}
	if want := base + "@" + baseDigest.String(); sum.Image.Base != want || !strings.Contains(stderr, "base "+want) {
		t.Errorf("base recorded as %q, want %s in the summary and the output:\n%s", sum.Image.Base, want, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "bin", "manager-linux-arm64")); err == nil {
		t.Error("--platforms linux/amd64 built arm64 too")
	}
	comps, _ := os.ReadFile(filepath.Join(out, "infrastructure-example", "v0.1.0", "infrastructure-components.yaml"))
	if !strings.Contains(string(comps), "image: ghcr.io/example/capi-example-controller:v0.1.0\n") {
		t.Error("components do not name the image by tag")
	}
}

func releaseJSON(t *testing.T, env map[string]string, args ...string) (int, pipeline.ReleaseSummary, string) {
	t.Helper()
	// The example's image is in no registry; TestRelease_ImageCheck* checks one.
	code, stdout, stderr := runCmd(t, env, append([]string{"release", exampleDir(t), "--version", "v0.1.0", "--output", "json", "--skip-image-check"}, args...)...)
	var sum pipeline.ReleaseSummary
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

func statuses(sum pipeline.ReleaseSummary) string {
	var b strings.Builder
	for _, s := range sum.Steps {
		b.WriteString(s.Step + "=" + s.Status + "\n")
	}
	return b.String()
}

// TestRelease_GitHubFakeCompletesAndReadsTheReleaseBack: clusterctl reads
// no GitHub Enterprise server (the fake's API URL), so the release is read
// back through the target, then through clusterctl from memory; the dist was
// read back before anything was published.
func TestRelease_GitHubFakeCompletesAndReadsTheReleaseBack(t *testing.T) {
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	srv.AddRepo("example", "provider", false)
	out := filepath.Join(t.TempDir(), "dist")
	code, sum, stderr := releaseJSON(t, map[string]string{"GITHUB_TOKEN": ghToken}, "--out", out,
		"--publish", "github://example/provider", "--github-api-url", srv.APIURL())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "build=ok\nlint=ok\nupgrade=skipped\nimages=skipped\nwrite=ok\nverify dist=ok\npublish github://example/provider=ok\nverify github://example/provider=ok\n"
	if diff := cmp.Diff(want, statuses(sum)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if d := sum.Steps[len(sum.Steps)-1].Detail; !strings.Contains(d, "read back from github://example/provider through the target (clusterctl reads GitHub releases only from github.com") {
		t.Errorf("verify detail %q does not say the release was read back through the target", d)
	}
	rels := srv.Releases("example", "provider")
	if len(rels) != 1 || rels[0].Draft || rels[0].Tag != "v0.1.0" || len(rels[0].Assets) != 9 { // with provenance.intoto.json
		t.Fatalf("server holds %d releases, %d assets", len(rels), len(rels[0].Assets))
	}
	if n := strings.Count(stderr, "uploaded metadata.yaml"); n != 1 {
		t.Errorf("progress lists the upload of metadata.yaml %d times, want once:\n%s", n, stderr)
	}
}

// TestRelease_FailedStepExitsOneAndStillPrintsTheSummary: the summary is
// printed whatever happened, and the error names the failed step.
func TestRelease_FailedStepExitsOneAndStillPrintsTheSummary(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, sum, stderr := releaseJSON(t, nil, "--out", filepath.Join(t.TempDir(), "dist"), "--publish", "file://"+blocker)
	if code != exitFailure {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	// The upgrade step reads the target first, and fails on the file.
	want := "build=ok\nlint=ok\nupgrade=failed\nimages=not run\nwrite=not run\nverify dist=not run\npublish file://" + blocker + "=not run\nverify file://" + blocker + "=not run\n"
	if diff := cmp.Diff(want, statuses(sum)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if !strings.Contains(stderr, "Error: upgrade: file://"+blocker+": ") {
		t.Errorf("the error does not name the failed step:\n%s", stderr)
	}
}

func TestRelease_TextSummaryTable(t *testing.T) {
	code, _, stderr := runCmd(t, nil, "release", exampleDir(t), "--version", "v0.1.0", "--out", filepath.Join(t.TempDir(), "dist"), "--dry-run", "--skip-image-check")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, line := range []string{"STEP         STATUS   DETAIL", "lint         ok       0 errors"} {
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
			code, _, stderr := runCmd(t, tc.env, append([]string{"release", exampleDir(t), "--version", "v0.1.0", "--out", t.TempDir()}, tc.args...)...)
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
	want := "build=ok\nlint=ok\nupgrade=skipped\nimages=skipped\nwrite=ok\nverify dist=ok\npublish gitlab://gitlab.example.com/infra/providers=ok\nverify gitlab://gitlab.example.com/infra/providers=ok\n"
	if diff := cmp.Diff(want, statuses(sum)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if n := len(srv.Files("77", "infrastructure-example", "v0.1.0")); n != 9 { // with provenance.intoto.json
		t.Errorf("package holds %d files, want 9", n)
	}
	for _, r := range srv.Requests() {
		if r.Auth != fakegl.AuthJob {
			t.Errorf("request %s %s authenticated as %q, want the job token", r.Method, r.Path, r.Auth)
		}
	}
}

// TestRelease_NotesUpgradeNamesReleasesGitLabFlag: a GitLab target without
// a Release has no notes for --notes-upgrade's section, and release says
// which of its flags makes one (--gitlab-release, publish gitlab's
// --release).
func TestRelease_NotesUpgradeNamesReleasesGitLabFlag(t *testing.T) {
	const token = "glpat-notes-upgrade"
	srv := fakegl.New(t)
	srv.AddProject(77, "infra/providers", false)
	srv.AddToken(token, fakegl.AccessToken)
	env := map[string]string{"GITLAB_ACCESS_TOKEN": token}
	publish := []string{"--publish", "gitlab://gitlab.example.com/infra/providers", "--gitlab-url", srv.URL}
	if code, _, stderr := releaseJSON(t, env, append([]string{"--out", t.TempDir()}, publish...)...); code != 0 {
		t.Fatalf("v0.1.0: exit %d: %s", code, stderr)
	}
	code, _, stderr := releaseJSON(t, env, append([]string{"--version", "v0.1.1", "--out", t.TempDir(), "--notes-upgrade"}, publish...)...)
	if code != 0 {
		t.Fatalf("v0.1.1: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "--notes-upgrade: this target has no release notes (a GitLab target needs --gitlab-release)") {
		t.Errorf("stderr does not name --gitlab-release:\n%s", stderr)
	}
}

// TestRelease_DifferentManagersIsAUsageError: --binaries on a tree whose
// providers build different managers is the caller's mistake: exit 2, in
// build and in release.
func TestRelease_DifferentManagersIsAUsageError(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"capirepo.yaml": "providers:\n- name: infrastructure-test\n  build: {main: .}\n- name: infrastructure-other\n  build: {main: ./cmd/other}\n",
	}))
	for _, args := range [][]string{{"build"}, {"release", "--dry-run"}} {
		code, _, stderr := runCmd(t, nil, append(args, dir, "--version", "v1.2.0", "--out", t.TempDir(), "--binaries")...)
		if code != exitUsage || !strings.Contains(stderr, "providers infrastructure-test and infrastructure-other have different build sections") {
			t.Errorf("%s: exit %d, stderr %q; want 2 and the two providers named", args[0], code, stderr)
		}
	}
}

func TestRelease_GitHubDraftWithNotesAndTarget(t *testing.T) {
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	srv.AddRepo("example", "provider", false)
	srv.AddRelease("example", "provider", fakegh.Release{Tag: "v0.0.9", TargetCommitish: "old"})
	notes := filepath.Join(t.TempDir(), "notes.md")
	if err := os.WriteFile(notes, []byte("First release.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "dist")
	code, sum, stderr := releaseJSON(t, map[string]string{"GITHUB_TOKEN": ghToken}, "--out", out,
		"--publish", "github://example/provider", "--github-api-url", srv.APIURL(),
		"--notes-file", notes, "--title", "Example v0.1.0", "--github-generate-notes", "--github-draft", "--github-target", "abc123")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if d := sum.Steps[len(sum.Steps)-1].Detail; !strings.Contains(d, "draft") {
		t.Errorf("verify detail %q does not say the draft was not read back", d)
	}
	rels := srv.Releases("example", "provider")
	r := rels[len(rels)-1]
	if !r.Draft || r.Name != "Example v0.1.0" || r.TargetCommitish != "abc123" ||
		!strings.HasPrefix(r.Body, "First release.\n\n## What's Changed\n* Changes from v0.0.9 to v0.1.0 (abc123)") {
		t.Errorf("release = %+v", r)
	}
	if _, ok := srv.Tags("example", "provider")["v0.1.0"]; ok {
		t.Error("a draft created the tag")
	}
}

func TestRelease_GitLabReleaseLinksThePackages(t *testing.T) {
	const jobToken = "glcbt-release-job-token"
	srv := fakegl.New(t)
	srv.AddProject(77, "infra/providers", false)
	srv.AddToken(jobToken, fakegl.JobToken)
	notes := filepath.Join(t.TempDir(), "notes.md")
	if err := os.WriteFile(notes, []byte("Notes.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := releaseJSON(t, map[string]string{"CI_JOB_TOKEN": jobToken}, "--out", filepath.Join(t.TempDir(), "dist"),
		"--publish", "gitlab://gitlab.example.com/infra/providers", "--gitlab-url", srv.URL, "--gitlab-token-type", "job",
		"--gitlab-release", "--gitlab-ref", "main", "--notes-file", notes, "--title", "Providers v0.1.0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rels := srv.Releases("77")
	if len(rels) != 1 || rels[0].TagName != "v0.1.0" || rels[0].Description != "Notes.\n" || rels[0].Name != "Providers v0.1.0" || len(rels[0].Links) != 9 {
		t.Fatalf("releases = %+v", rels)
	}
	if srv.Tags("77")["v0.1.0"] != "main" {
		t.Errorf("tags = %v", srv.Tags("77"))
	}
}

// TestVerify_ImagesNamesTheMissingPlatform: verify --images on a dist whose
// components name an image the in-process registry holds for amd64 only.
func TestVerify_ImagesNamesTheMissingPlatform(t *testing.T) {
	repo := imagetest.NewRegistry(t) + "/example/capi-example-controller"
	out := filepath.Join(t.TempDir(), "dist")
	if code, _, stderr := runCmd(t, nil, "build", exampleDir(t), "--version", "v0.1.0", "--out", out, "--image", repo); code != 0 {
		t.Fatalf("build exit %d: %s", code, stderr)
	}
	imagetest.PushIndex(t, repo+":v0.1.0", "linux/amd64")
	code, _, stderr := runCmd(t, nil, "verify", out, "--images")
	if code != exitFailure {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	want := "Deployment capi-example-system/capi-example-controller-manager container manager: image " + repo + ":v0.1.0: no image for linux/arm64"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if code, _, stderr := runCmd(t, nil, "verify", out, "--images", "--platforms", "linux/amd64"); code != 0 {
		t.Errorf("amd64 only: exit %d: %s", code, stderr)
	}
}
