package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
)

// brokenFlavor is issue 44's broken flavor: "  bad: [unclosed" appended to
// a flavor below a line holding ${CLUSTER_NAME}. No value the variables
// could take makes it YAML, so it is a CAPI001 error (it was a warning,
// and dev --watch published it).
func brokenFlavor(t *testing.T, tree string) {
	t.Helper()
	f := filepath.Join(tree, "templates", "cluster-template-machinepool.yaml")
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "${CLUSTER_NAME}") {
		t.Fatal("the flavor holds no ${CLUSTER_NAME}")
	}
	if err := os.WriteFile(f, append(data, "  owner: ${CLUSTER_NAME}\n  bad: [unclosed\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCAPI001_BrokenFlavorStopsBuildLintDevAndRelease(t *testing.T) {
	tree := testtree.CopyTree(t, devExampleDir)
	brokenFlavor(t, tree)
	ctx := context.Background()
	// The error, or for build and release the log the findings go to,
	// names the rule and the flavor.
	wantCAPI001 := func(what string, err error, log string) {
		t.Helper()
		said := log
		if err != nil {
			said += err.Error()
		}
		if err == nil || !strings.Contains(said, "CAPI001") || !strings.Contains(said, "cluster-template-machinepool.yaml") {
			t.Errorf("%s: err = %v, want a CAPI001 error in cluster-template-machinepool.yaml\n%s", what, err, log)
		}
	}
	var log bytes.Buffer

	out := filepath.Join(t.TempDir(), "dist")
	_, err := BuildRelease(ctx, BuildOptions{Dir: tree, Version: "v0.1.0", Out: out}, &log)
	wantCAPI001("build", err, log.String())
	if _, err := os.Stat(filepath.Join(out, "infrastructure-example")); err == nil {
		t.Error("build wrote the release")
	}

	rep, err := LintPath(ctx, LintPathOptions{Path: tree, Version: "v0.1.0"})
	if err != nil {
		t.Fatalf("lint: %v", err)
	}
	found := false
	for _, f := range rep.Findings {
		found = found || f.Rule == contract.RuleYAML && f.Severity == contract.Error && strings.HasSuffix(f.File, "cluster-template-machinepool.yaml")
	}
	if !found {
		t.Errorf("lint: no CAPI001 error in %v", rep.Findings)
	}

	root := filepath.Join(t.TempDir(), "dev")
	_, err = Dev(ctx, DevOptions{Dir: tree, Root: root, BuildID: "test"})
	wantCAPI001("dev", err, "")
	if _, err := os.Stat(filepath.Join(root, "infrastructure-example")); err == nil {
		t.Error("dev wrote the provider")
	}

	log.Reset()
	_, err = Release(ctx, ReleaseOptions{Build: BuildOptions{Dir: tree, Version: "v0.1.0", Out: filepath.Join(t.TempDir(), "dist")},
		DryRun: true, SkipImageCheck: true, SkipUpgradeCheck: "no network in tests", Log: &log})
	wantCAPI001("release", err, log.String())
}

// dev --watch does not publish the broken flavor: the dev repository keeps
// the last good build.
func TestCAPI001_DevWatchDoesNotPublishTheBrokenFlavor(t *testing.T) {
	tree := testtree.CopyTree(t, devExampleDir)
	root := filepath.Join(t.TempDir(), "dev")
	runs, _, _, _ := startWatch(t, tree, root)
	first := nextRun(t, runs)
	if first.err != nil {
		t.Fatalf("first run: %v", first.err)
	}
	published := filepath.Join(root, "infrastructure-example", first.res.Providers[0].Version, "cluster-template-machinepool.yaml")
	brokenFlavor(t, tree)
	second := nextRun(t, runs)
	if second.err == nil || !strings.Contains(second.err.Error(), "CAPI001") {
		t.Fatalf("run after the broken save: %v, want CAPI001", second.err)
	}
	if data, err := os.ReadFile(published); err != nil || strings.Contains(string(data), "unclosed") {
		t.Errorf("the dev repository's flavor: %v\n%s", err, data)
	}
}

// A maintainer who waives the broken flavor's CAPI001 (clusterctl fails
// only that flavor) can release: both read-backs, of the dist and of the
// target, say the flavor clusterctl cannot read with the waiver, and fail
// on nothing else. Without the waiver's reach into the read-back the
// release stopped at verify dist, and the waiver was of no use.
func TestCAPI001_WaivedBrokenFlavorIsReleasedAndSaid(t *testing.T) {
	tree := testtree.CopyTree(t, devExampleDir)
	brokenFlavor(t, tree)
	loc, err := targets.Parse("file://" + filepath.Join(t.TempDir(), "repo"))
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	sum, err := Release(context.Background(), ReleaseOptions{
		Build:   BuildOptions{Dir: tree, Version: "v0.1.0", Out: filepath.Join(t.TempDir(), "dist"), Disabled: map[string]string{contract.RuleYAML: "fixed in v0.1.1"}},
		Targets: []targets.Location{loc},
		Open: func(ctx context.Context, l targets.Location) (publish.Target, error) {
			return l.Open(ctx, targets.Options{})
		},
		SkipImageCheck: true, SkipUpgradeCheck: "no network in tests", Log: &log})
	if err != nil {
		t.Fatalf("release: %v\n%s", err, log.String())
	}
	const said = "  not read: cluster-template-machinepool.yaml (CAPI001 waived: fixed in v0.1.1): "
	if n := strings.Count(log.String(), said); n != 2 {
		t.Errorf("the read-backs said the waived flavor %d times, want 2 (dist, target):\n%s", n, log.String())
	}
	for _, s := range sum.Steps {
		if s.Status != StatusOK && s.Status != StatusSkipped {
			t.Errorf("step %s: %s %s", s.Step, s.Status, s.Detail)
		}
	}
}
