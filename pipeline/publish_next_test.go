package pipeline_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/targets"
)

// TestPublish_NoClusterctlLineForATargetClusterctlCannotRead: a GitHub
// Enterprise server (any API URL but api.github.com's) is no repository
// clusterctl reads: publishing there says so and why, and gives no
// clusterctl init line that would fail ("Only GitHub and GitLab are
// supported"); a release's next steps are those of the first target
// clusterctl does read.
func TestPublish_NoClusterctlLineForATargetClusterctlCannotRead(t *testing.T) {
	dist := filepath.Join(t.TempDir(), "dist")
	if _, err := pipeline.BuildRelease(context.Background(), pipeline.BuildOptions{Dir: exampleDir(t), Version: "v0.1.0", Out: dist}, nil); err != nil {
		t.Fatal(err)
	}
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	srv.AddRepo("example", "ghe", false)
	srv.AddRepo("example", "ghe-release", false)
	to := targets.Options{GitHub: github.Options{Token: ghToken, APIURL: srv.APIURL()}}
	p, err := pipeline.Publish(context.Background(), pipeline.PublishOptions{Target: "github://example/ghe", TargetOptions: to, Dist: dist})
	if err != nil {
		t.Fatal(err)
	}
	next := strings.Join(p.Summary.Next, "\n")
	if strings.Contains(next, "clusterctl init") || !strings.Contains(next, "clusterctl reads GitHub releases only from github.com") {
		t.Errorf("publish github to %s: next:\n%s", srv.APIURL(), next)
	}

	var log bytes.Buffer
	o := exampleRun(t, &log)
	root := filepath.Join(t.TempDir(), "repo")
	o.Targets, o.TargetOptions = locations(t, "github://example/ghe-release", "file://"+root), to
	sum, err := pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	next = strings.Join(sum.Next, "\n")
	if !strings.Contains(next, " for file://"+root) || !strings.Contains(next, "try it: clusterctl init --infrastructure example:v0.1.0") {
		t.Errorf("release to GitHub Enterprise, then a folder: next:\n%s", next)
	}
}
