package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/capirepo/capirepo/image/imagetest"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/publish"
)

// buildExample builds the bundled example into a new dist folder.
func buildExample(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "dist")
	if code, _, stderr := runCmd(t, nil, "build", exampleDir(t), "--version", "v0.1.0", "--out", out); code != 0 {
		t.Fatalf("build exit %d: %s", code, stderr)
	}
	return out
}

func TestPublishGitHub_CLIPublishesThenSkipsOnRerun(t *testing.T) {
	const token = "ghp_cli-test-token"
	srv := fakegh.New(t, fakegh.WithToken(token))
	srv.AddRepo("acme", "cluster-api-provider-example", false)
	dist := buildExample(t)
	env := map[string]string{"GITHUB_TOKEN": token, "GITHUB_API_URL": srv.APIURL()}
	args := []string{"publish", "github", "--repo", "acme/cluster-api-provider-example", dist, "-o", "json"}
	// 8 release files and provenance.intoto.json.
	for run, wantUploaded := range []int{9, 0} {
		code, stdout, stderr := runCmd(t, env, args...)
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", run, code, stderr)
		}
		if strings.Contains(stdout+stderr, token) {
			t.Fatal("the token was printed")
		}
		var sum publish.Summary
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
			t.Fatal(err)
		}
		if len(sum.Uploaded) != wantUploaded {
			t.Errorf("run %d: uploaded %v, want %d assets", run, sum.Uploaded, wantUploaded)
		}
		// With a GitHub Enterprise API URL the provider URL is on that server's web host.
		if len(sum.Providers) != 1 || !strings.HasSuffix(sum.Providers[0].URL, "/acme/cluster-api-provider-example/releases/latest/infrastructure-components.yaml") {
			t.Errorf("providers = %+v", sum.Providers)
		}
	}
	rels := srv.Releases("acme", "cluster-api-provider-example")
	if len(rels) != 1 || rels[0].Draft || rels[0].Tag != "v0.1.0" || len(rels[0].Assets) != 9 {
		t.Errorf("server holds %d releases, %d assets", len(rels), len(rels[0].Assets))
	}
}

func TestPublishGitLab_CLIUploadsAndPrintsProvidersEntry(t *testing.T) {
	const token = "glpat-cli-test-token"
	srv := fakegl.New(t)
	srv.AddProject(42, "infra/capi-mirror", false)
	srv.AddToken(token, fakegl.AccessToken)
	dist := buildExample(t)
	code, stdout, stderr := runCmd(t, map[string]string{"GITLAB_ACCESS_TOKEN": token},
		"publish", "gitlab", "--gitlab-url", srv.URL, "--project", "infra/capi-mirror", dist)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout+stderr, token) {
		t.Fatal("the token was printed")
	}
	// The providers: entry is the result, on stdout; progress and warnings on stderr.
	if !strings.HasPrefix(stdout, "providers:\n- name: example\n  type: InfrastructureProvider\n") ||
		!strings.Contains(stdout, "/api/v4/projects/infra%2Fcapi-mirror/packages/generic/infrastructure-example/v0.1.0/infrastructure-components.yaml") {
		t.Errorf("stdout is not the providers: entry:\n%s", stdout)
	}
	// The fake's host is not gitlab.*: the next lines say clusterctl refuses
	// its URLs instead of giving an init line that fails.
	mustContain(t, "stderr", stderr, "next:\n  save the clusterctl config printed for ", "\n  clusterctl cannot install from it: clusterctl reads GitLab packages only from hosts whose name starts with \"gitlab.\"")
	if !strings.Contains(stderr, "does not start with") { // the fake's host is not gitlab.*: clusterctl would not treat it as GitLab
		t.Errorf("stderr lacks the gitlab.* warning:\n%s", stderr)
	}
	if n := len(srv.Files("42", "infrastructure-example", "v0.1.0")); n != 9 { // with provenance.intoto.json
		t.Errorf("package holds %d files, want 9", n)
	}
	// A job token needs CI_JOB_TOKEN; the old flag names still work, with a notice.
	code, _, stderr = runCmd(t, nil, "publish", "gitlab", "--url", srv.URL, "--project", "1", "--token-type", "job", dist)
	if code != 2 || !strings.Contains(stderr, "CI_JOB_TOKEN") {
		t.Errorf("job token without CI_JOB_TOKEN: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"--url has been deprecated, use --gitlab-url", "--token-type has been deprecated, use --gitlab-token-type"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, stderr)
		}
	}
}

// TestPublish_StalledServerGivesUpAfterTwiceTheTimeout: publish github to a
// server that never answers gives up after twice --timeout, retries
// included, and says so.
func TestPublish_StalledServerGivesUpAfterTwiceTheTimeout(t *testing.T) {
	stop := make(chan struct{})
	var mu sync.Mutex
	requests := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests[r.Method+" "+r.URL.String()]++
		mu.Unlock()
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	dist := buildExample(t)
	code, _, stderr := runCmd(t, map[string]string{"GITHUB_TOKEN": "ghp_stall"}, "publish", "github", dist, "--repo", "acme/provider",
		"--github-api-url", srv.URL+"/", "--timeout", "300ms")
	if code != 1 || !strings.Contains(stderr, "sent nothing for 300ms") || !strings.Contains(stderr, "one request waits at most 600ms in all, 2 times --timeout") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	// The first attempt waits 300ms; a second would get what the 1s pause
	// leaves of 600ms, nothing: each request is sent once, not six times.
	mu.Lock()
	defer mu.Unlock()
	for r, n := range requests {
		if n != 1 {
			t.Errorf("%s sent %d times, want once", r, n)
		}
	}
}

// TestPublishGitHub_ImagesChecksBeforePublishingADraft: the two-step flow
// of a provider whose draft is made before its images are promoted:
// release --github-draft uploads the draft, publish github --images
// refuses to publish it while the image is missing (nothing uploaded or
// published), and publishes it once the image is there.
func TestPublishGitHub_ImagesChecksBeforePublishingADraft(t *testing.T) {
	const token = "ghp_cli-images-token"
	srv := fakegh.New(t, fakegh.WithToken(token))
	srv.AddRepo("acme", "provider-images", false)
	host := imagetest.NewRegistry(t)
	image := host + "/acme/controller"
	env := map[string]string{"GITHUB_TOKEN": token, "GITHUB_API_URL": srv.APIURL()}
	dist := filepath.Join(t.TempDir(), "dist")
	code, _, stderr := runCmd(t, env, "release", exampleDir(t), "--version", "v0.1.0", "--out", dist, "--image", image,
		"--publish", "github://acme/provider-images", "--github-draft")
	if code != 0 || !strings.Contains(stderr, "1 not in the registry yet: the release stays a draft") {
		t.Fatalf("release --github-draft: exit %d: %s", code, stderr)
	}
	before := srv.Releases("acme", "provider-images")
	if len(before) != 1 || !before[0].Draft {
		t.Fatalf("releases %+v, want one draft", before)
	}
	args := []string{"publish", "github", dist, "--repo", "acme/provider-images", "--images"}
	code, _, stderr = runCmd(t, env, args...)
	if code != 1 || !strings.Contains(stderr, "image "+image+":v0.1.0: not found in the registry") || !strings.Contains(stderr, "nothing was uploaded or published (a draft stays a draft)") {
		t.Fatalf("publish --images before promotion: exit %d: %s", code, stderr)
	}
	if rels := srv.Releases("acme", "provider-images"); !rels[0].Draft {
		t.Fatal("the draft was published with its image missing")
	}
	imagetest.PushIndex(t, image+":v0.1.0", "linux/amd64", "linux/arm64")
	if code, _, stderr = runCmd(t, env, args...); code != 0 {
		t.Fatalf("publish --images after promotion: exit %d: %s", code, stderr)
	}
	if rels := srv.Releases("acme", "provider-images"); len(rels) != 1 || rels[0].Draft {
		t.Errorf("releases %+v, want the draft published", rels)
	}
}

// TestPublish_CLITextSaysCountsAndURLOnce: the publisher's progress lines
// and the summary said the counts and the release URL twice (three times
// on a GitLab re-run); the summary says them, once (issue 38.4).
func TestPublish_CLITextSaysCountsAndURLOnce(t *testing.T) {
	const token = "ghp_cli-test-token"
	srv := fakegh.New(t, fakegh.WithToken(token))
	srv.AddRepo("acme", "cluster-api-provider-example", false)
	gl := fakegl.New(t)
	gl.AddProject(42, "infra/capi-mirror", false)
	gl.AddToken("glpat-cli-test-token", fakegl.AccessToken)
	dist := buildExample(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		url  string
	}{
		{"github", map[string]string{"GITHUB_TOKEN": token, "GITHUB_API_URL": srv.APIURL()},
			[]string{"publish", "github", "--repo", "acme/cluster-api-provider-example", dist}, "/acme/cluster-api-provider-example/releases/tag/v0.1.0"},
		{"gitlab", map[string]string{"GITLAB_ACCESS_TOKEN": "glpat-cli-test-token"},
			[]string{"publish", "gitlab", "--gitlab-url", gl.URL, "--project", "infra/capi-mirror", dist}, "/infra/capi-mirror/-/packages"},
	} {
		for run, counts := range []string{"9 uploaded", "nothing to do: all 9 already there"} {
			code, _, stderr := runCmd(t, tc.env, tc.args...)
			if code != 0 {
				t.Fatalf("%s run %d: exit %d: %s", tc.name, run, code, stderr)
			}
			// The next: lines name the target they speak of; the report
			// above them says each thing once.
			report, _, _ := strings.Cut(stderr, "next:\n")
			for _, once := range []string{counts, tc.url} {
				if n := strings.Count(report, once); n != 1 {
					t.Errorf("%s run %d: the report says %q %d times, want once:\n%s", tc.name, run, once, n, stderr)
				}
			}
		}
	}
}
