package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/targets"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

const ghToken = "ghp_pipeline_test_token_never_printed"

// exampleRun returns options that build the bundled example into a new
// dist folder, with the log captured.
func exampleRun(t *testing.T, log *bytes.Buffer) pipeline.ReleaseOptions {
	t.Helper()
	return pipeline.ReleaseOptions{
		Build: pipeline.BuildOptions{Dir: exampleDir(t), Version: "v0.1.0", Out: filepath.Join(t.TempDir(), "dist")},
		Log:   log,
		// The example's image is not in any registry; TestRun_ImagesStep*
		// checks images against an in-process one.
		SkipImageCheck: true,
	}
}

func locations(t *testing.T, raw ...string) []targets.Location {
	t.Helper()
	var ts []targets.Location
	for _, r := range raw {
		tg, err := targets.Parse(r)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tg)
	}
	return ts
}

// openLocal opens file:// targets with the factory's defaults.
func openLocal(ctx context.Context, loc targets.Location) (publish.Target, error) {
	return loc.Open(ctx, targets.Options{})
}

func statuses(sum *pipeline.ReleaseSummary) string {
	var b strings.Builder
	for _, s := range sum.Steps {
		b.WriteString(s.Step + "=" + s.Status + "\n")
	}
	return b.String()
}

// failingPublisher fails every Publish, and counts the calls.
type failingPublisher struct {
	publish.Target // nil: nothing else is called
	err            error
	calls          int
}

// Versions says nothing is published yet (the upgrade step asks).
func (p *failingPublisher) Versions(context.Context, provider.ID) ([]string, error) { return nil, nil }

func (p *failingPublisher) Publish(context.Context, *release.Release) (*publish.Summary, error) {
	p.calls++
	return nil, p.err
}

func TestRun_DryRunRunsEveryStepButPublish(t *testing.T) {
	var log bytes.Buffer
	o := exampleRun(t, &log)
	o.Build.Binaries = true
	o.DryRun = true
	o.Targets = locations(t, "github://example/provider")
	o.Open = func(_ context.Context, tg targets.Location) (publish.Target, error) {
		t.Errorf("a dry run made a publisher for %s", tg)
		return nil, errors.New("no publisher in a dry run")
	}
	// TestRun_UpgradeStepDryRunReadsTheTarget reads a target in a dry run;
	// here the publish step's question (would the target take the release)
	// goes to the fake, which holds no release.
	o.SkipUpgradeCheck = "not what this test checks"
	srv := fakegh.New(t)
	srv.AddRepo("example", "provider", false)
	o.TargetOptions = targets.Options{GitHub: github.Options{APIURL: srv.APIURL()}}
	sum, err := pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	want := "build=ok\nlint=ok\nupgrade=skipped\nimages=skipped\nwrite=ok\nverify dist=ok\npublish github://example/provider=skipped\nverify github://example/provider=skipped\n"
	if diff := cmp.Diff(want, statuses(sum)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if d := stepNamed(t, sum, "publish github://example/provider").Detail; d != "dry run: nothing published; the target takes the release" {
		t.Errorf("publish step detail %q", d)
	}
	for _, f := range []string{"bin/manager-linux-amd64", "bin/manager-linux-arm64", "infrastructure-example/v0.1.0/metadata.yaml"} {
		if _, err := os.Stat(filepath.Join(o.Build.Out, f)); err != nil {
			t.Errorf("dry run did not build %s: %v", f, err)
		}
	}
	for _, line := range []string{"[1/8] build\n", "[6/8] verify dist: ok", "infrastructure-components.yaml"} {
		if !strings.Contains(log.String(), line) {
			t.Errorf("progress lacks %q", line)
		}
	}
	if len(sum.Published) != 0 || sum.Version != "v0.1.0" || !sum.DryRun || len(sum.Artifacts.Binaries) != 2 {
		t.Errorf("summary %+v", sum)
	}
}

func TestRun_FileTargetPublishesAndVerifies(t *testing.T) {
	root := filepath.Join(t.TempDir(), "repo")
	o := exampleRun(t, &bytes.Buffer{})
	o.Targets, o.Open = locations(t, "file://"+root), openLocal
	sum, err := pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	want := "build=ok\nlint=ok\nupgrade=skipped\nimages=skipped\nwrite=ok\nverify dist=ok\npublish file://" + root + "=ok\nverify file://" + root + "=ok\n"
	if diff := cmp.Diff(want, statuses(sum)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(root, "infrastructure-example", "v0.1.0", "infrastructure-components.yaml")); err != nil {
		t.Errorf("not published: %v", err)
	}
	if len(sum.Published) != 1 || len(sum.Published[0].Uploaded) != 8 {
		t.Errorf("published %+v", sum.Published)
	}
}

// TestRun_StopsAtFirstFailureAndSaysWhatWasNotDone: whatever fails, the
// steps after it are "not run", their publishers are never called, and the
// error names the failed step.
func TestRun_StopsAtFirstFailureAndSaysWhatWasNotDone(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "a-file") // a file where a folder should be
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := "file://"+filepath.Join(dir, "a"), "file://"+filepath.Join(dir, "b")
	for _, tc := range []struct {
		name    string
		version string
		targets []string
		fail    string // the target whose publisher fails; others publish locally
		want    string // statuses
		wantErr string // prefix of the error
		written []string
	}{{
		name: "first of two targets fails", targets: []string{a, b}, fail: a,
		want:    "build=ok\nlint=ok\nupgrade=skipped\nimages=skipped\nwrite=ok\nverify dist=ok\ncheck targets=ok\npublish " + a + "=failed\nverify " + a + "=not run\npublish " + b + "=not run\nverify " + b + "=not run\n",
		wantErr: "publish " + a + ": upload refused",
	}, {
		name: "second target fails after the first is verified", targets: []string{a, b}, fail: b,
		want:    "build=ok\nlint=ok\nupgrade=skipped\nimages=skipped\nwrite=ok\nverify dist=ok\ncheck targets=ok\npublish " + a + "=ok\nverify " + a + "=ok\npublish " + b + "=failed\nverify " + b + "=not run\n",
		wantErr: "publish " + b + ": upload refused", written: []string{a},
	}, {
		// The upgrade step reads the target first and stops the run
		// before anything is written.
		name: "a real target with a file in the way", targets: []string{"file://" + blocker, b},
		want:    "build=ok\nlint=ok\nupgrade=failed\nimages=not run\nwrite=not run\nverify dist=not run\ncheck targets=not run\npublish file://" + blocker + "=not run\nverify file://" + blocker + "=not run\npublish " + b + "=not run\nverify " + b + "=not run\n",
		wantErr: "upgrade: file://" + blocker + ": ",
	}, {
		name: "build fails", version: "1.0", targets: []string{a},
		want:    "build=failed\nlint=not run\nupgrade=not run\nimages=not run\nwrite=not run\nverify dist=not run\npublish " + a + "=not run\nverify " + a + "=not run\n",
		wantErr: "build: ",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, tg := range []string{a, b} {
				_ = os.RemoveAll(strings.TrimPrefix(tg, "file://"))
			}
			o := exampleRun(t, &bytes.Buffer{})
			if tc.version != "" {
				o.Build.Version = tc.version
			}
			o.Targets = locations(t, tc.targets...)
			failing := &failingPublisher{err: errors.New("upload refused\nsecond line of the cause")}
			o.Open = func(ctx context.Context, tg targets.Location) (publish.Target, error) {
				if tg.URL == tc.fail {
					return failing, nil
				}
				return openLocal(ctx, tg)
			}
			sum, err := pipeline.Release(context.Background(), o)
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want it to start with %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, statuses(sum)); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			for _, s := range sum.Steps {
				if s.Status == pipeline.StatusFailed && (s.Detail == "" || strings.Contains(s.Detail, "\n")) {
					t.Errorf("failed step %s: detail %q, want the error's first line", s.Step, s.Detail)
				}
			}
			if tc.fail != "" && failing.calls != 1 {
				t.Errorf("failing publisher called %d times", failing.calls)
			}
			for _, tg := range []string{a, b} {
				_, err := os.Stat(strings.TrimPrefix(tg, "file://"))
				if written := !errors.Is(err, os.ErrNotExist); written != slices.Contains(tc.written, tg) {
					t.Errorf("%s written: %v, want %v", tg, written, !written)
				}
			}
		})
	}
}

// A publisher that cannot be made (a missing token) fails the run before
// anything is built or written.
func TestRun_PublisherErrorStopsBeforeBuild(t *testing.T) {
	var log bytes.Buffer
	o := exampleRun(t, &log)
	o.Targets = locations(t, "file://"+t.TempDir(), "github://o/r")
	wantErr := errors.New("--publish github://o/r: set GITHUB_TOKEN")
	o.Open = func(ctx context.Context, tg targets.Location) (publish.Target, error) {
		if tg.Scheme == "github" {
			return nil, wantErr
		}
		return openLocal(ctx, tg)
	}
	sum, err := pipeline.Release(context.Background(), o)
	if !errors.Is(err, wantErr) || sum != nil {
		t.Fatalf("Run = %+v, %v; want no summary and %v", sum, err, wantErr)
	}
	if _, err := os.Stat(o.Build.Out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dist written before the publishers were made: %v", err)
	}
	if log.Len() != 0 {
		t.Errorf("a step ran:\n%s", log.String())
	}
}

func TestRun_ManagerMismatchIsATypedError(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"capirepo.yaml": "providers:\n- name: infrastructure-test\n  build: {main: .}\n- name: infrastructure-other\n  build: {main: ./cmd/other}\n",
	}))
	o := pipeline.ReleaseOptions{Build: pipeline.BuildOptions{Dir: dir, Version: "v1.2.0", Out: t.TempDir(), Binaries: true}, DryRun: true, SkipImageCheck: true}
	_, err := pipeline.Release(context.Background(), o)
	var mm *provider.ManagerMismatchError
	if !errors.As(err, &mm) || mm.First != "infrastructure-test" || mm.Other != "infrastructure-other" {
		t.Fatalf("error %v, want a ManagerMismatchError naming both providers", err)
	}
	if !strings.HasPrefix(err.Error(), "build: --binaries builds one manager") {
		t.Errorf("error %q does not name the build step", err)
	}
}

// TestRun_GitHubVerifiesThroughClusterctl publishes to the fake serving
// the public hosts, so clusterctl reads the release back by its github.com
// URL, with the token it was given as a value.
func TestRun_GitHubVerifiesThroughClusterctl(t *testing.T) {
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	// clusterctl caches releases per repository for the process: a unique one.
	srv.AddRepo("example", "provider-pipeline-through-clusterctl", false)
	orig := http.DefaultTransport
	http.DefaultTransport = srv.Transport(orig)
	t.Cleanup(func() { http.DefaultTransport = orig })
	t.Setenv("GOPROXY", "off")

	var log bytes.Buffer
	o := exampleRun(t, &log)
	o.Targets = locations(t, "github://example/provider-pipeline-through-clusterctl")
	o.Variables = map[string]string{"github-token": ghToken}
	o.TargetOptions = targets.Options{GitHub: github.Options{Token: ghToken},
		HTTPClient: &http.Client{Transport: srv.Transport(orig)}, Progress: &log}
	sum, err := pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	if d := sum.Steps[7].Detail; sum.Steps[7].Status != pipeline.StatusOK || !strings.Contains(d, "read back from https://github.com/example/provider-pipeline-through-clusterctl") {
		t.Errorf("verify step %+v", sum.Steps[7])
	}
	if strings.Contains(log.String(), ghToken) {
		t.Error("the token was logged")
	}
	if !strings.Contains(log.String(), "uploaded metadata.yaml") {
		t.Errorf("log does not list uploads:\n%s", log.String())
	}
}

func TestLines_TerminalRewritesOneLine(t *testing.T) {
	for _, tc := range []struct {
		terminal bool
		want     string
	}{
		{false, "[1/2] lint\n[1/2] lint: failed (the error is printed last)\n"},
		{true, "\r\033[K[1/2] lint ...\r\033[K[1/2] lint: failed (the error is printed last)\n"},
	} {
		var b bytes.Buffer
		p := pipeline.Lines(&b, tc.terminal)
		p.Start(1, 2, "lint")
		p.Done(1, 2, pipeline.StepResult{Step: "lint", Status: pipeline.StatusFailed, Detail: "2 errors"})
		if diff := cmp.Diff(tc.want, b.String()); diff != "" {
			t.Errorf("terminal=%v (-want +got):\n%s", tc.terminal, diff)
		}
	}
}

// TestStatusLines_NoDetailTheTableSaysAgain: a release prints each step's
// detail in its summary table; its progress says the status alone.
func TestStatusLines_NoDetailTheTableSaysAgain(t *testing.T) {
	for _, tc := range []struct {
		p    func(io.Writer, bool) pipeline.Progress
		want string
	}{
		{pipeline.Lines, "[1/2] lint\n[1/2] lint: ok (0 errors, 3 warnings)\n"},
		{pipeline.StatusLines, "[1/2] lint\n[1/2] lint: ok\n"},
	} {
		var b bytes.Buffer
		p := tc.p(&b, false)
		p.Start(1, 2, "lint")
		p.Done(1, 2, pipeline.StepResult{Step: "lint", Status: pipeline.StatusOK, Detail: "0 errors, 3 warnings"})
		if diff := cmp.Diff(tc.want, b.String()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
}

// TestRun_ImagesStepStopsARunWhoseImageLacksAPlatform: the components name
// an image whose index lacks linux/arm64 (still being promoted): the run
// stops before anything is written, naming the object and container;
// once the index is complete the run goes through.
func TestRun_ImagesStepStopsARunWhoseImageLacksAPlatform(t *testing.T) {
	host := newRegistryHost(t)
	repo := host + "/example/capi-example-controller"
	pushIndex := func(platforms ...string) {
		t.Helper()
		idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
		for _, p := range platforms {
			img, err := random.Image(16, 1)
			if err != nil {
				t.Fatal(err)
			}
			pl, _ := v1.ParsePlatform(p)
			cf, _ := img.ConfigFile()
			cf = cf.DeepCopy()
			cf.OS, cf.Architecture = pl.OS, pl.Architecture
			img, _ = mutate.ConfigFile(img, cf)
			idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: pl}})
		}
		tag, _ := name.NewTag(repo + ":v0.1.0")
		if err := remote.WriteIndex(tag, idx); err != nil {
			t.Fatal(err)
		}
	}
	pushIndex("linux/amd64")
	var log bytes.Buffer
	o := exampleRun(t, &log)
	o.SkipImageCheck, o.DryRun, o.Build.Image = false, true, repo
	sum, err := pipeline.Release(context.Background(), o)
	if err == nil {
		t.Fatal("a run whose image lacks linux/arm64 went through")
	}
	for _, s := range []string{"images: ", "Deployment capi-example-system/capi-example-controller-manager container manager: image " + repo + ":v0.1.0: no image for linux/arm64"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
	if diff := cmp.Diff("build=ok\nlint=ok\nupgrade=skipped\nimages=failed\nwrite=not run\nverify dist=not run\n", statuses(sum)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(o.Build.Out); err == nil {
		t.Error("the dist folder was written")
	}
	pushIndex("linux/amd64", "linux/arm64")
	sum, err = pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if d := sum.Steps[3].Detail; d != "1 images in the registry for linux/amd64, linux/arm64" {
		t.Errorf("images detail %q", d)
	}
}

// TestRun_LintGateTakesTheWaiversOfDisable: release goes through the same
// gate as build and lint: an error is a lint failure (nothing written), and
// --disable waives it, except an error clusterctl refuses the release for:
// a metadata.yaml that covers no series of the version stays an error.
func TestRun_LintGateTakesTheWaiversOfDisable(t *testing.T) {
	root := filepath.Join(t.TempDir(), "repo")
	o := exampleRun(t, &bytes.Buffer{})
	files := testtree.Minimal(nil)
	files["config/manager/manager.yaml"] = strings.Replace(files["config/manager/manager.yaml"], "sidecar:1.0", "sidecar:latest", 1) // CAPI205
	o.Build.Dir, o.Build.Version = testtree.Write(t, files), "v1.2.0"
	o.Targets, o.Open = locations(t, "file://"+root), openLocal
	sum, err := pipeline.Release(context.Background(), o)
	if err == nil || !strings.Contains(statuses(sum), "lint=failed") {
		t.Fatalf("floating image: err %v, steps %s", err, statuses(sum))
	}
	if _, err := os.Stat(o.Build.Out); !os.IsNotExist(err) {
		t.Errorf("dist written despite the lint error")
	}
	log := &bytes.Buffer{}
	o.Log = log
	o.Build.Disabled = map[string]string{"CAPI205": "a test of the waiver"}
	sum, err = pipeline.Release(context.Background(), o)
	if st := statuses(sum); err != nil || !strings.Contains(st, "lint=ok\nupgrade=skipped\nimages=skipped\nwrite=ok\n") || !strings.Contains(log.String(), "(waived: a test of the waiver)") {
		t.Fatalf("waived: %v, steps %s\n%s", err, st, log)
	}

	// No release series for the version: clusterctl would refuse the
	// release, so the waiver does not clear the error.
	log.Reset()
	o.Build.Version, o.Build.Out = "v1.3.0", filepath.Join(t.TempDir(), "dist")
	o.Build.Disabled = map[string]string{"CAPI205": "a test of the waiver", "CAPI105": "next release"}
	sum, err = pipeline.Release(context.Background(), o)
	if st := statuses(sum); err == nil || !strings.Contains(st, "lint=failed") || !strings.Contains(log.String(), "waiver CAPI105 (next release) cannot waive CAPI105's errors") {
		t.Fatalf("refused: %v, steps %s\n%s", err, st, log)
	}
	if _, err := os.Stat(o.Build.Out); !os.IsNotExist(err) {
		t.Errorf("dist written despite the refused error")
	}
}

// TestRun_AFailedStepIsNamedOnce: a step whose error already names it
// (the install check's "install check: ...") is not named twice.
func TestRun_AFailedStepIsNamedOnce(t *testing.T) {
	var log bytes.Buffer
	o := exampleRun(t, &log)
	o.InstallCheck = &pipeline.InstallCheckOptions{} // no kubeconfig
	_, err := pipeline.Release(context.Background(), o)
	if err == nil || !strings.HasPrefix(err.Error(), "install check: ") || strings.Contains(err.Error(), "install check: install check:") {
		t.Fatalf("error %v, want the install check named once", err)
	}
}
