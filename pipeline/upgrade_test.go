package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/contract"
	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
)

// onlySeries is a metadata.yaml of the minimal provider that lists the
// release series 0.2 alone: a release that forgot 0.1 (CAPI701).
const onlySeries = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 2\n  contract: v1beta2\n"

// publishTo publishes a release to a target URL, as an earlier release run
// did.
func publishTo(t *testing.T, url string, to targets.Options, rel *release.Release) {
	t.Helper()
	to.Publish = true
	tg, err := targets.Open(context.Background(), url, to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tg.Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
}

// minimalRun releases the minimal provider at v0.2.0 from tree to the file://
// targets, without the image check.
func minimalRun(t *testing.T, tree string, logs *bytes.Buffer, urls ...string) pipeline.ReleaseOptions {
	t.Helper()
	return pipeline.ReleaseOptions{
		Build:          pipeline.BuildOptions{Dir: tree, Version: "v0.2.0", Out: filepath.Join(t.TempDir(), "dist")},
		Targets:        locations(t, urls...),
		Open:           openLocal,
		SkipImageCheck: true,
		Log:            logs,
	}
}

func stepDetail(sum *pipeline.ReleaseSummary, name string) string {
	for _, s := range sum.Steps {
		if s.Step == name {
			return s.Status + ": " + s.Detail
		}
	}
	return ""
}

// TestRun_UpgradeStep: release compares the build with the release published
// before it, at the first target that has one, and stops on errors before
// anything is written; a waiver or --skip-upgrade-check (with its reason)
// lets it through.
func TestRun_UpgradeStep(t *testing.T) {
	empty, root := "file://"+filepath.Join(t.TempDir(), "empty"), "file://"+filepath.Join(t.TempDir(), "repo")
	publishTo(t, root, targets.Options{}, buildtest.MinimalRelease(t, "v0.1.0"))
	// A version folder clusterctl cannot read (no metadata.yaml, no
	// components): not a release anybody runs, so not the one compared.
	testtree.WriteInto(t, filepath.Join(strings.TrimPrefix(root, "file://"), "infrastructure-test", "v0.1.9"), map[string]string{"README.md": "half written\n"})
	published := func() bool {
		_, err := os.Stat(filepath.Join(strings.TrimPrefix(root, "file://"), "infrastructure-test", "v0.2.0"))
		return err == nil
	}

	t.Run("clean upgrade, from the first target that has a release", func(t *testing.T) {
		var logs bytes.Buffer
		o := minimalRun(t, buildtest.MinimalTree(t, 2), &logs, empty, root)
		o.DryRun = true // the targets are read all the same
		sum, err := pipeline.Release(context.Background(), o)
		if err != nil {
			t.Fatalf("run: %v\n%s", err, logs.String())
		}
		want := "ok: against v0.1.0 at " + root + ": 0 errors, 0 warnings"
		if d := stepDetail(sum, "upgrade"); d != want || !strings.Contains(logs.String(), "skipping v0.1.9: no metadata.yaml") {
			t.Errorf("upgrade step %q, want %q\n%s", d, want, logs.String())
		}
	})

	broken := testtree.Write(t, buildtest.MinimalFiles(2, map[string]string{"metadata.yaml": onlySeries}))
	t.Run("an upgrade that breaks stops the release", func(t *testing.T) {
		var logs bytes.Buffer
		sum, err := pipeline.Release(context.Background(), minimalRun(t, broken, &logs, root))
		var ue *pipeline.UpgradeError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "upgrade: 1 error, 0 warnings against v0.1.0 at "+root) {
			t.Fatalf("error %v, want an UpgradeError\n%s", err, logs.String())
		}
		if st := statuses(sum); !strings.Contains(st, "upgrade=failed\nimages=not run\nwrite=not run\nverify dist=not run\npublish "+root+"=not run\n") {
			t.Errorf("steps:\n%s", st)
		}
		if len(sum.Findings) != 1 || sum.Findings[0].Rule != contract.RuleUpgradeSeries || sum.Findings[0].File != "infrastructure-test/v0.2.0/metadata.yaml" {
			t.Errorf("findings %+v", sum.Findings)
		}
		if !strings.Contains(logs.String(), "CAPI701") || published() {
			t.Errorf("finding not printed, or v0.2.0 published:\n%s", logs.String())
		}
	})

	t.Run("waived with a reason", func(t *testing.T) {
		var logs bytes.Buffer
		o := minimalRun(t, broken, &logs, root)
		o.DryRun = true
		o.Build.Disabled = map[string]string{contract.RuleUpgradeSeries: "0.1 was never released"}
		sum, err := pipeline.Release(context.Background(), o)
		if err != nil {
			t.Fatalf("run: %v\n%s", err, logs.String())
		}
		if len(sum.Waived) != 1 || !strings.Contains(logs.String(), "(waived: 0.1 was never released)") {
			t.Errorf("waived %+v\n%s", sum.Waived, logs.String())
		}
	})

	t.Run("--skip-upgrade-check prints its reason", func(t *testing.T) {
		var logs bytes.Buffer
		o := minimalRun(t, broken, &logs, root)
		o.SkipUpgradeCheck = "0.1 users were told to reinstall"
		sum, err := pipeline.Release(context.Background(), o)
		if err != nil {
			t.Fatalf("run: %v\n%s", err, logs.String())
		}
		if d := stepDetail(sum, "upgrade"); d != "skipped: --skip-upgrade-check: not checked (0.1 users were told to reinstall)" || !published() {
			t.Errorf("upgrade step %q, published %v", d, published())
		}
	})

	t.Run("no release below: skipped with a line", func(t *testing.T) {
		var logs bytes.Buffer
		o := minimalRun(t, buildtest.MinimalTree(t, 2), &logs, empty)
		o.DryRun = true
		sum, err := pipeline.Release(context.Background(), o)
		if err != nil {
			t.Fatalf("run: %v\n%s", err, logs.String())
		}
		if d := stepDetail(sum, "upgrade"); d != "skipped: no release below v0.2.0 at "+empty+": nothing to compare" {
			t.Errorf("upgrade step %q", d)
		}
	})
}

// TestRun_UpgradeStepDryRunReadsGitHub: a dry run reads the previous release
// from GitHub without a token and without making a publisher.
func TestRun_UpgradeStepDryRunReadsGitHub(t *testing.T) {
	srv := fakegh.New(t)
	srv.AddRepo("acme", "provider", false)
	gh := targets.Options{GitHub: github.Options{APIURL: srv.APIURL(), Token: "ghp_only_for_the_first_release"}, HTTPClient: &http.Client{}}
	publishTo(t, "github://acme/provider", gh, buildtest.MinimalRelease(t, "v0.1.0"))

	var logs bytes.Buffer
	o := minimalRun(t, testtree.Write(t, buildtest.MinimalFiles(2, map[string]string{"metadata.yaml": onlySeries})), &logs, "github://acme/provider")
	o.DryRun = true
	o.TargetOptions = targets.Options{GitHub: github.Options{APIURL: srv.APIURL()}, HTTPClient: &http.Client{}}
	o.Open = func(_ context.Context, loc targets.Location) (publish.Target, error) {
		t.Errorf("a dry run made a publisher for %s", loc)
		return nil, errors.New("no publisher in a dry run")
	}
	sum, err := pipeline.Release(context.Background(), o)
	var ue *pipeline.UpgradeError
	if !errors.As(err, &ue) || ue.Against != "v0.1.0 at github://acme/provider" {
		t.Fatalf("error %v, want an UpgradeError against v0.1.0\n%s", err, logs.String())
	}
	if len(sum.Findings) != 1 || sum.Findings[0].Rule != contract.RuleUpgradeSeries {
		t.Errorf("findings %+v", sum.Findings)
	}
}

// crdVersion is one version of the Foo CRD the history tests give the
// minimal provider.
type crdVersion struct {
	name            string
	served, storage bool
}

// withFoo returns the minimal provider at version with a Foo CRD of the
// given versions in its components.
func withFoo(t *testing.T, version string, versions ...crdVersion) *release.Release {
	t.Helper()
	rel := buildtest.Clone(buildtest.MinimalRelease(t, "v0."+strings.Split(version, ".")[1]+".0"))
	rel.Version = version
	p := rel.Providers[0]
	p.Version = version
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: foos.infrastructure.cluster.x-k8s.io\nspec:\n  group: infrastructure.cluster.x-k8s.io\n  names: {kind: Foo, listKind: FooList, plural: foos, singular: foo}\n  scope: Namespaced\n  conversion: {strategy: Webhook, webhook: {conversionReviewVersions: [v1], clientConfig: {service: {name: w, namespace: test-system}}}}\n  versions:\n"
	for _, v := range versions {
		crd += fmt.Sprintf("  - name: %s\n    served: %v\n    storage: %v\n    schema: {openAPIV3Schema: {type: object}}\n", v.name, v.served, v.storage)
	}
	if err := p.Add(p.ComponentsFile, append(p.Components().Data, []byte("---\n"+crd)...)); err != nil {
		t.Fatal(err)
	}
	return rel
}

func side(t *testing.T, arg string) pipeline.Side {
	t.Helper()
	s, err := pipeline.ParseSide(arg, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func summaryKeys(sum *pipeline.DiffSummary) []string {
	out := []string{}
	for _, f := range sum.Report.Findings {
		out = append(out, fmt.Sprintf("%s %s %s %s", f.Rule, f.Severity, f.Object, f.Field))
	}
	return out
}

// TestDiff_HistoryNamesTheOldestReleaseThatUpgradesStraight: the new release
// drops v1alpha1, which releases up to v0.1.1 store; reading the previous
// release from a target finds them (a binary search over the components of
// the older releases) and names v0.2.0 as the oldest that upgrades straight.
func TestDiff_HistoryNamesTheOldestReleaseThatUpgradesStraight(t *testing.T) {
	root := "file://" + filepath.Join(t.TempDir(), "repo")
	alpha := crdVersion{"v1alpha1", true, true}
	for _, r := range []*release.Release{
		withFoo(t, "v0.1.0", alpha),
		withFoo(t, "v0.1.1", alpha),
		withFoo(t, "v0.2.0", crdVersion{"v1alpha1", true, false}, crdVersion{"v1beta1", true, true}),
		withFoo(t, "v0.2.1", crdVersion{"v1alpha1", false, false}, crdVersion{"v1beta1", true, true}),
	} {
		publishTo(t, root, targets.Options{}, r)
	}
	newRel := withFoo(t, "v0.3.0", crdVersion{"v1beta1", true, true})
	var logs bytes.Buffer
	sum, err := pipeline.Diff(context.Background(), pipeline.DiffOptions{Old: []pipeline.Side{side(t, root)}, New: side(t, buildtest.Dist(t, newRel)), Log: &logs})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CAPI703 info CustomResourceDefinition/foos.infrastructure.cluster.x-k8s.io spec.versions[v1alpha1]"}
	if d := cmp.Diff(want, summaryKeys(sum)); d != "" {
		t.Fatalf("findings (-want +got):\n%s\n%s", d, logs.String())
	}
	msg := sum.Report.Findings[0].Message
	for _, w := range []string{"releases up to v0.1.1 store", "the oldest release that can is v0.2.0"} {
		if !strings.Contains(msg, w) {
			t.Errorf("message lacks %q: %s", w, msg)
		}
	}
	if sum.Old[0].Version != "v0.2.1" || !strings.Contains(logs.String(), "the release before v0.3.0 is v0.2.1") {
		t.Errorf("compared with %+v\n%s", sum.Old, logs.String())
	}

	// The same history given as several old releases: v0.1.1 is refused
	// (CAPI703) and serves what the new one drops (CAPI704), and the oldest
	// of them that upgrades straight is named.
	sum, err = pipeline.Diff(context.Background(), pipeline.DiffOptions{
		Old: []pipeline.Side{side(t, root+"@v0.2.0"), side(t, root+"@v0.1.1")}, New: side(t, buildtest.Dist(t, newRel))})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"CAPI703 info CustomResourceDefinition/foos.infrastructure.cluster.x-k8s.io spec.versions[v1alpha1]",
		"CAPI703 error CustomResourceDefinition/foos.infrastructure.cluster.x-k8s.io spec.versions[v1alpha1]",
		"CAPI704 error CustomResourceDefinition/foos.infrastructure.cluster.x-k8s.io spec.versions[v1alpha1]",
	}
	if d := cmp.Diff(want, summaryKeys(sum)); d != "" {
		t.Errorf("findings (-want +got):\n%s", d)
	}
}

// TestDiff_ReadsOldFromGitHubAndOCI: the older release is read through the
// targets as clusterctl and the operator read them: GitHub (the fake) and an
// OCI registry (in process).
func TestDiff_ReadsOldFromGitHubAndOCI(t *testing.T) {
	srv := fakegh.New(t)
	srv.AddRepo("acme", "provider", false)
	gh := targets.Options{GitHub: github.Options{APIURL: srv.APIURL(), Token: "ghp_only_to_publish"}, HTTPClient: &http.Client{}}
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	ociURL := "oci://" + strings.TrimPrefix(reg.URL, "http://") + "/capi"
	ociOpts := targets.Options{OCI: oci.Options{PlainHTTP: true}}
	for _, v := range []string{"v0.1.0", "v0.1.1"} {
		publishTo(t, "github://acme/provider", gh, buildtest.MinimalRelease(t, v))
		publishTo(t, ociURL, ociOpts, buildtest.MinimalRelease(t, v))
	}
	newDist := buildtest.Dist(t, buildtest.Clone(buildtest.Build(t, testtree.Write(t, buildtest.MinimalFiles(2, map[string]string{"metadata.yaml": onlySeries})), "v0.2.0").Release))
	for _, tc := range []struct {
		url  string
		opts targets.Options
	}{
		{"github://acme/provider", targets.Options{GitHub: github.Options{APIURL: srv.APIURL()}, HTTPClient: &http.Client{}}},
		{ociURL, ociOpts},
	} {
		t.Run(strings.Split(tc.url, ":")[0], func(t *testing.T) {
			sum, err := pipeline.Diff(context.Background(), pipeline.DiffOptions{Old: []pipeline.Side{side(t, tc.url)}, New: side(t, newDist), Targets: tc.opts})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]string{"CAPI701 error Metadata releaseSeries"}, summaryKeys(sum)); d != "" {
				t.Errorf("findings (-want +got):\n%s", d)
			}
			if len(sum.Old) != 1 || sum.Old[0].Version != "v0.1.1" || sum.Old[0].From != tc.url {
				t.Errorf("old %+v", sum.Old)
			}
		})
	}
}

// TestRun_DryRunGoesOnWhenGitHubCannotBeReached: a dry run aimed at a
// GitHub that refuses connections reports the upgrade check as not done
// and goes on, as the image check does; a real run stops, with the hint to
// publish without the check, which a dry run does not give.
func TestRun_DryRunGoesOnWhenGitHubCannotBeReached(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // 127.0.0.1, refusing connections
	fast := &publish.Retry{Attempts: 1}
	to := targets.Options{GitHub: github.Options{APIURL: down.URL + "/", Token: "ghp_x"}, HTTPClient: &http.Client{}, Retry: fast}

	var logs bytes.Buffer
	o := minimalRun(t, buildtest.MinimalTree(t, 2), &logs, "github://acme/provider")
	o.DryRun, o.TargetOptions, o.Open = true, to, nil
	sum, err := pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, logs.String())
	}
	want := "skipped: not checked: github://acme/provider could not be reached (a dry run does not fail for it; a real run stops)"
	if d := stepDetail(sum, "upgrade"); d != want {
		t.Errorf("upgrade step %q, want %q\n%s", d, want, logs.String())
	}
	if !strings.Contains(logs.String(), "connection refused") || strings.Contains(logs.String(), "to publish without the check") {
		t.Errorf("log:\n%s", logs.String())
	}
	if st := statuses(sum); !strings.Contains(st, "write=ok") || !strings.Contains(st, "verify dist=ok") {
		t.Errorf("steps after the upgrade step did not run:\n%s", st)
	}

	logs.Reset()
	o.DryRun = false
	o.Build.Out = filepath.Join(t.TempDir(), "dist")
	sum, err = pipeline.Release(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "(to publish without the check: --skip-upgrade-check REASON)") {
		t.Fatalf("real run: %v\n%s", err, logs.String())
	}
	if st := statuses(sum); !strings.Contains(st, "upgrade=failed\nimages=not run\nwrite=not run") {
		t.Errorf("steps:\n%s", st)
	}
}

// TestRun_AgainstComparesWithTheNamedRelease: release --against OLD (a
// folder, or a target URL with @VERSION) compares with that release instead
// of the one before at the targets.
func TestRun_AgainstComparesWithTheNamedRelease(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	publishTo(t, "file://"+repo, targets.Options{}, buildtest.MinimalRelease(t, "v0.1.0"))
	broken := testtree.Write(t, buildtest.MinimalFiles(2, map[string]string{"metadata.yaml": onlySeries}))
	for _, arg := range []string{"file://" + repo + "@v0.1.0", filepath.Join(repo, "infrastructure-test", "v0.1.0")} {
		t.Run(arg, func(t *testing.T) {
			var logs bytes.Buffer
			o := minimalRun(t, broken, &logs) // no target: only --against says what to compare with
			o.DryRun = true
			sides, err := pipeline.ParseSides("--against", []string{arg})
			if err != nil {
				t.Fatal(err)
			}
			o.Against = sides
			sum, err := pipeline.Release(context.Background(), o)
			var ue *pipeline.UpgradeError
			if !errors.As(err, &ue) || !strings.HasPrefix(ue.Against, "v0.1.0 at ") {
				t.Fatalf("error %v, want an UpgradeError against v0.1.0\n%s", err, logs.String())
			}
			if len(sum.Findings) != 1 || sum.Findings[0].Rule != contract.RuleUpgradeSeries {
				t.Errorf("findings %+v", sum.Findings)
			}
		})
	}
	if _, err := pipeline.ParseSides("--against", []string{filepath.Join(repo, "nothing-here")}); err == nil || !strings.HasPrefix(err.Error(), "--against ") {
		t.Errorf("a missing folder: %v", err)
	}
}

// TestRun_RehearsalStepUpgradesFromTheReleaseTheUpgradeStepRead: release
// --rehearse upgrades from the release the upgrade step compared with
// (here v0.1.0 of a provider without core Cluster API, so the rehearsal
// asks for --core before it reaches any cluster), after the dist is
// written; with no release below it is skipped with a line.
func TestRun_RehearsalStepUpgradesFromTheReleaseTheUpgradeStepRead(t *testing.T) {
	empty, root := "file://"+filepath.Join(t.TempDir(), "empty"), "file://"+filepath.Join(t.TempDir(), "repo")
	publishTo(t, root, targets.Options{}, buildtest.MinimalRelease(t, "v0.1.0"))
	rehearse := &pipeline.RehearseOptions{InstallCheckOptions: pipeline.InstallCheckOptions{Kubeconfig: filepath.Join(t.TempDir(), "kubeconfig")}}

	var logs bytes.Buffer
	o := minimalRun(t, buildtest.MinimalTree(t, 2), &logs, root)
	o.DryRun, o.Rehearse = true, rehearse
	sum, err := pipeline.Release(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "upgrade rehearsal: v0.1.0 holds no core Cluster API") {
		t.Fatalf("want the rehearsal from v0.1.0 to ask for core, got %v\n%s", err, logs.String())
	}
	if st := statuses(sum); !strings.Contains(st, "upgrade=ok\nimages=skipped\nwrite=ok\nverify dist=ok\nupgrade rehearsal=failed\n") {
		t.Errorf("steps:\n%s", st)
	}

	logs.Reset()
	o = minimalRun(t, buildtest.MinimalTree(t, 2), &logs, empty)
	o.DryRun, o.Rehearse = true, rehearse
	sum, err = pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, logs.String())
	}
	if d := stepDetail(sum, "upgrade rehearsal"); d != "skipped: no release before v0.2.0 was compared with: nothing to rehearse" {
		t.Errorf("rehearsal step %q", d)
	}
}
