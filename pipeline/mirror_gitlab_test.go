package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/publish/targets"
)

const (
	mirrorGLHost  = "gitlab.example.com"
	mirrorGLToken = "glpat-mirror-test-token"
)

// TestMirror_IntoGitLabThenClusterctlReadsIt mirrors both providers into
// the fake GitLab served as https://gitlab.example.com, with an upload that
// fails mid-mirror; a re-run finishes the job, and clusterctl's own GitLab
// repository reads every mirrored version back.
func TestMirror_IntoGitLabThenClusterctlReadsIt(t *testing.T) {
	ctx := context.Background()
	u := newUpstream(t, nil)
	gl := fakegl.New(t)
	project := fmt.Sprintf("capi/mirror-%d", mirrorRuns.Add(1)) // clusterctl caches by URL for the process
	gl.AddProject(7000+mirrorRuns.Load(), project, false)
	gl.AddToken(mirrorGLToken, fakegl.AccessToken)

	// clusterctl reads GitLab through the default transport; the upstream
	// reads go to the fake GitHub on their own transport.
	orig := http.DefaultTransport
	http.DefaultTransport = gl.Transport(mirrorGLHost)
	t.Cleanup(func() { http.DefaultTransport = orig })

	mk := func() pipeline.MirrorOptions {
		var log bytes.Buffer
		o := u.options(t, "file:///unused", &log, "infrastructure-example:latest-1", "infrastructure-sample:v1.1.1")
		o.To = mustParse(t, "gitlab://"+mirrorGLHost+"/"+project)
		o.Sources.HTTPClient = &http.Client{Transport: &http.Transport{}}
		o.TargetOptions = targets.Options{GitLab: gitlab.Options{Token: mirrorGLToken},
			HTTPClient: &http.Client{Transport: gl.Transport(mirrorGLHost)}, Retry: &publish.Retry{Attempts: 1}}
		o.Variables = map[string]string{"gitlab-access-token": mirrorGLToken}
		o.Concurrency = 1
		return o
	}

	gl.Fail(fakegl.Fault{Route: fakegl.RouteUpload, Nth: 10, Status: http.StatusServiceUnavailable})
	if _, err := pipeline.Mirror(ctx, mk()); err == nil {
		t.Fatal("the mirror did not fail on the injected upload fault")
	}
	sum, err := pipeline.Mirror(ctx, mk())
	if err != nil {
		t.Fatalf("re-run: %v", err)
	}
	if sum.Verified != 3 {
		t.Errorf("clusterctl read %d provider versions back, want 3", sum.Verified)
	}
	for label, versions := range map[string][]string{"infrastructure-example": {"v0.2.0", "v0.2.1"}, "infrastructure-sample": {"v1.1.1"}} {
		for _, v := range versions {
			c := gl.Contents(project, label, v)
			// Only what the release holds: no checksums.txt of capirepo's own.
			if _, ok := c["checksums.txt"]; ok || len(c) != 7 {
				t.Errorf("package %s %s holds %d files, want the release's 7: %v", label, v, len(c), keys(c))
			}
			for name, copies := range c {
				if len(copies) != 1 {
					t.Errorf("package %s %s: %d copies of %s after the re-run, want 1", label, v, len(copies), name)
				}
			}
		}
	}
	if c := gl.Contents(project, "cert-manager", "v1.16.0"); len(c["cert-manager.yaml"]) != 1 {
		t.Errorf("cert-manager package: %v", keys(c))
	}
	// GitLab has no version list: the site's config names the version.
	want := "url: https://" + mirrorGLHost + "/api/v4/projects/" + strings.ReplaceAll(project, "/", "%2F") + "/packages/generic/infrastructure-example/v0.2.1/infrastructure-components.yaml"
	if !strings.Contains(sum.Config, want) {
		t.Errorf("site config lacks %q:\n%s", want, sum.Config)
	}

	// Once more: nothing is uploaded.
	before := gl.Writes()
	if _, err := pipeline.Mirror(ctx, mk()); err != nil {
		t.Fatal(err)
	}
	if n := gl.Writes() - before; n != 0 {
		t.Errorf("a third run wrote %d times, want 0", n)
	}

	// And out again: the site's GitLab is the source (its URL as the
	// generated config has it), a folder the target.
	cfg := filepath.Join(t.TempDir(), "clusterctl.yaml")
	body := "providers:\n- name: example\n  type: InfrastructureProvider\n  url: " +
		strings.TrimPrefix(want, "url: ") + "\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var log bytes.Buffer
	o := u.options(t, "file://"+dir, &log, "infrastructure-example:latest-1")
	o.Clusterctl, o.CertManager = clusterctlConfig(t, cfg), false
	o.Sources.GitLab.Token = mirrorGLToken
	o.Sources.HTTPClient = &http.Client{Transport: gl.Transport(mirrorGLHost)}
	out, err := pipeline.Mirror(ctx, o)
	if err != nil {
		t.Fatalf("mirror out of GitLab: %v\n%s", err, log.String())
	}
	if diff := cmp.Diff(map[string][]string{"infrastructure-example": {"v0.2.0", "v0.2.1"}}, versionsOf(out)); diff != "" {
		t.Errorf("versions read from GitLab (-want +got):\n%s", diff)
	}
	for _, v := range []string{"v0.2.0", "v0.2.1"} {
		for name, copies := range gl.Contents(project, "infrastructure-example", v) {
			if name == "checksums.txt" {
				continue
			}
			got, err := os.ReadFile(filepath.Join(dir, "infrastructure-example", v, name))
			if err != nil || string(got) != copies[0] {
				t.Errorf("%s %s: the folder does not hold GitLab's bytes (%v)", v, name, err)
			}
		}
	}
}

func keys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
