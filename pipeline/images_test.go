package pipeline_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/targets"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
)

// downRegistry returns a registry host nothing listens on (connection
// refused): a registry that cannot be reached.
func downRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestRun_AnUnreachableRegistryDoesNotFailADryRun: a dry run whose image
// registry cannot be reached says so and goes on; a real run stops, saying
// the images could not be checked, not that they are missing.
func TestRun_AnUnreachableRegistryDoesNotFailADryRun(t *testing.T) {
	repo := downRegistry(t) + "/example/capi-example-controller"
	var log bytes.Buffer
	o := exampleRun(t, &log)
	o.SkipImageCheck, o.DryRun, o.Build.Image = false, true, repo
	sum, err := pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, log.String())
	}
	if d := stepNamed(t, sum, "images").Detail; stepNamed(t, sum, "images").Status != pipeline.StatusOK || !strings.Contains(d, "1 not checked: the registry did not answer, which is not missing (a dry run does not fail for it)") {
		t.Errorf("images step %+v", stepNamed(t, sum, "images"))
	}
	if !strings.Contains(log.String(), "image "+repo+":v0.1.0: unreachable (could not reach the registry") {
		t.Errorf("log:\n%s", log.String())
	}

	o.DryRun, o.Build.Out = false, t.TempDir()+"/dist"
	o.Targets, o.Open = locations(t, "file://"+t.TempDir()+"/repo"), openLocal
	sum, err = pipeline.Release(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "1 of 1 images could not be checked, which is not the same as missing") || strings.Contains(err.Error(), "not ready") ||
		!strings.Contains(err.Error(), "--skip-image-check publishes without asking the registry, safe only when you know these images are pushed") {
		t.Fatalf("real run: %v", err)
	}
	if !strings.Contains(statuses(sum), "images=failed\nwrite=not run") {
		t.Errorf("steps %s", statuses(sum))
	}
}

// TestRun_ADraftReportsImagesStillToBePromoted: a run whose every target
// is a GitHub draft uploads the release while its image is not in the
// registry yet, and says that publish github checks it before publishing.
func TestRun_ADraftReportsImagesStillToBePromoted(t *testing.T) {
	repo := newRegistryHost(t) + "/example/capi-example-controller" // empty: nothing promoted yet
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	srv.AddRepo("example", "provider-draft-before-promotion", false)
	orig := http.DefaultTransport
	var log bytes.Buffer
	o := exampleRun(t, &log)
	o.SkipImageCheck, o.Build.Image = false, repo
	o.Targets = locations(t, "github://example/provider-draft-before-promotion")
	o.TargetOptions = targets.Options{GitHub: github.Options{Token: ghToken, Draft: true, APIURL: srv.APIURL()},
		HTTPClient: &http.Client{Transport: srv.Transport(orig)}, Progress: &log}
	sum, err := pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	if d := stepNamed(t, sum, "images").Detail; !strings.Contains(d, "1 not in the registry yet: the release stays a draft, and capirepo publish github checks them again before it publishes it") {
		t.Errorf("images step %+v", stepNamed(t, sum, "images"))
	}
	if !sum.Published[0].Draft {
		t.Error("the release was published")
	}
	// Not all targets drafts: the missing image stops the run.
	o.TargetOptions.GitHub.Draft = false
	if _, err := pipeline.Release(context.Background(), o); err == nil || !strings.Contains(err.Error(), "1 of 1 images are not ready") {
		t.Errorf("published run: %v", err)
	}
}

// stepNamed is the step of a run with that name.
func stepNamed(t *testing.T, sum *pipeline.ReleaseSummary, name string) pipeline.StepResult {
	t.Helper()
	for _, s := range sum.Steps {
		if s.Step == name {
			return s
		}
	}
	t.Fatalf("no step %s in %+v", name, sum.Steps)
	return pipeline.StepResult{}
}
