package apiserver

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/rehearse"
	"github.com/capirepo/capirepo/release"
)

// scratchCluster starts a server with cert-manager's CRDs (as clusterctl
// init needs them) and Kubernetes' namespace controller: a kind cluster,
// as far as the rehearsal is concerned. It returns the config and a
// kubeconfig file for it.
func scratchCluster(t testing.TB) (*rest.Config, string) {
	t.Helper()
	cfg := startServer(t)
	startNamespaceController(t, cfg)
	installCRDs(t, cfg, certManager(t).Components().Data)
	return cfg, writeKubeconfig(t, cfg)
}

// example builds the bundled example provider at a version.
func example(t testing.TB, version string) *release.Release {
	t.Helper()
	return buildtest.Build(t, filepath.Join(root, "examples", "infrastructure-example"), version).Release
}

// coreRelease is cluster-api v1.14.2 (core, kubeadm bootstrap and control
// plane) built from the module proxy's tree.
func coreRelease(t testing.TB) *release.Release {
	t.Helper()
	return realRelease(t, testtree.ClusterAPIModule, "cluster-api.capirepo.yaml", "v1.14.2")
}

// rehearsalReport prints a rehearsal report for a failure message.
func rehearsalReport(rep *rehearse.Report) string {
	if rep == nil {
		return "(no report)"
	}
	var b strings.Builder
	_ = rep.WriteText(&b)
	return b.String()
}

// TestRehearse_ExampleCleanUpgrade rehearses the example's v0.1.0 -> v0.1.1
// with core Cluster API v1.14.2: clusterctl init, every object of v0.1.0's
// templates created, the plan offers v0.1.1, the upgrade applies, every
// object reads back with its uid and takes a no-op apply, the plan is up
// to date after; then everything is gone again and a second run on the
// same cluster passes too.
func TestRehearse_ExampleCleanUpgrade(t *testing.T) {
	cfg, kubeconfig := scratchCluster(t)
	before := crdNames(t, cfg)
	ctx := context.Background()
	o := rehearse.Options{Kubeconfig: kubeconfig, Old: example(t, "v0.1.0"), New: example(t, "v0.1.1"), Core: coreRelease(t)}
	for run := 1; run <= 2; run++ {
		var log bytes.Buffer
		o.Log = &log
		start := time.Now()
		rep, err := rehearse.Rehearse(ctx, o)
		if err != nil {
			t.Fatalf("run %d: %v\n%s\n%s", run, err, rehearsalReport(rep), log.String())
		}
		t.Logf("run %d in %v:\n%s\n%s", run, time.Since(start).Round(time.Millisecond), rehearsalReport(rep), log.String())
		if rep.CreatedObjects() == 0 || rep.Refusals() > 0 {
			t.Errorf("run %d: %d objects created, %d refused", run, rep.CreatedObjects(), rep.Refusals())
		}
		// The components' required variable and a template's: stand-ins, said.
		for _, name := range []string{"EXAMPLE_B64ENCODED_CREDENTIALS=", "EXAMPLE_MACHINE_FLAVOR="} {
			if !slices.ContainsFunc(rep.StandIns, func(s string) bool { return strings.HasPrefix(s, name) }) {
				t.Errorf("run %d: stand-ins %q lack %s", run, rep.StandIns, name)
			}
		}
		for _, ob := range rep.Objects {
			if !ob.Created || ob.ReadBack != "same uid" || ob.NoOp != "accepted" {
				t.Errorf("run %d: %+v", run, *ob)
			}
		}
		assertCRDsGone(t, cfg, before)
		assertNoWebhookConfigurations(t, cfg)
	}
}

// editDoc replaces old by new in the one document of a provider's
// components file that holds marker.
func editDoc(t testing.TB, rel *release.Release, label, marker, old, new string) {
	t.Helper()
	p, ok := rel.Provider(label)
	if !ok {
		t.Fatalf("no provider %s", label)
	}
	docs := strings.Split(string(p.Components().Data), "\n---\n")
	for i, d := range docs {
		if !strings.Contains(d, marker) {
			continue
		}
		if !strings.Contains(d, old) {
			t.Fatalf("the document of %s does not hold %q", marker, old)
		}
		docs[i] = strings.Replace(d, old, new, 1)
		if err := p.Add(p.ComponentsFile, []byte(strings.Join(docs, "\n---\n"))); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s's components hold no document with %q", label, marker)
}

// TestRehearse_StoredVersionDroppedCaughtBeforeApplying rehearses an
// upgrade whose ExampleCluster CRD no longer lists v1beta1, the version
// the objects of v0.1.0's templates are stored in: the server refuses
// the CRD (status.storedVersions), which the rehearsal finds with a dry
// run before clusterctl deletes anything, and says what clusterctl would
// have left (half-upgraded), without waiting out clusterctl's retries.
func TestRehearse_StoredVersionDroppedCaughtBeforeApplying(t *testing.T) {
	cfg, kubeconfig := scratchCluster(t)
	before := crdNames(t, cfg)
	next := example(t, "v0.1.1")
	editDoc(t, next, "infrastructure-example", "name: exampleclusters.infrastructure.cluster.x-k8s.io", "    name: v1beta1\n", "    name: v1beta2\n")
	var log bytes.Buffer
	start := time.Now()
	rep, err := rehearse.Rehearse(context.Background(), rehearse.Options{Kubeconfig: kubeconfig, Old: example(t, "v0.1.0"), New: next, Core: coreRelease(t), Log: &log})
	took := time.Since(start)
	t.Logf("in %v:\n%s\n%s", took.Round(time.Millisecond), rehearsalReport(rep), log.String())
	if err == nil || rep == nil || rep.Failure == nil {
		t.Fatalf("want the upgrade refused, got %v", err)
	}
	f := rep.Failure
	for _, want := range []string{"CustomResourceDefinition/exampleclusters.infrastructure.cluster.x-k8s.io", `status.storedVersions[0]: Invalid value: "v1beta1": missing from spec.versions`,
		"status.storedVersions holds v1beta1"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("the failure does not say %q: %s", want, f.Message)
		}
	}
	for _, want := range []string{"nothing applied: the cluster still runs v0.1.0", "half-upgraded", "v0.1.0's components deleted, v0.1.1's CRD refused"} {
		if !strings.Contains(f.State, want) {
			t.Errorf("the state does not say %q: %s", want, f.State)
		}
	}
	if f.Step != "check" || strings.Contains(log.String(), "Deleting") {
		t.Errorf("failed at %s; want the check before clusterctl deletes anything", f.Step)
	}
	if !strings.Contains(err.Error(), f.Message) {
		t.Errorf("the error does not carry the server's words: %v", err)
	}
	assertCRDsGone(t, cfg, before)
}

// TestRehearse_TransitionRuleRefusesExistingObjects rehearses an upgrade
// whose ExampleCluster CRD gains a CEL transition rule (oldSelf) that the
// objects created from v0.1.0's templates (region us-east-1) break: they
// are created and upgraded, read back with their uid, and refused on the
// no-op apply in the server's words; objects of other kinds are accepted.
func TestRehearse_TransitionRuleRefusesExistingObjects(t *testing.T) {
	cfg, kubeconfig := scratchCluster(t)
	before := crdNames(t, cfg)
	next := example(t, "v0.1.1")
	const rule = "            x-kubernetes-validations:\n" +
		"            - rule: self.region.startsWith('eu-') || oldSelf.region.startsWith('eu-')\n" +
		"              message: the us regions are retired; move the cluster to an eu- region\n"
	editDoc(t, next, "infrastructure-example", "name: exampleclusters.infrastructure.cluster.x-k8s.io",
		"            description: spec is the desired state of ExampleCluster.\n", "            description: spec is the desired state of ExampleCluster.\n"+rule)
	var log bytes.Buffer
	rep, err := rehearse.Rehearse(context.Background(), rehearse.Options{Kubeconfig: kubeconfig, Old: example(t, "v0.1.0"), New: next, Core: coreRelease(t), Log: &log})
	t.Logf("%s\n%s", rehearsalReport(rep), log.String())
	if err == nil || rep == nil || rep.Failure == nil || rep.Failure.Step != "read back" {
		t.Fatalf("want the objects refused after the upgrade, got %v", err)
	}
	refused := 0
	for _, o := range rep.Objects {
		switch {
		case !o.Created:
			t.Errorf("not created: %+v", *o)
		case strings.HasPrefix(o.Object, "ExampleCluster/"):
			refused++
			if !o.Refused || o.ReadBack != "same uid" || !strings.Contains(o.NoOp, "the us regions are retired") {
				t.Errorf("%s: want the no-op apply refused by the rule: %+v", o.Object, *o)
			}
		case o.Refused || o.NoOp != "accepted":
			t.Errorf("%s: want it accepted: %+v", o.Object, *o)
		}
	}
	if refused == 0 {
		t.Error("no ExampleCluster was created")
	}
	if !strings.Contains(rep.Failure.State, "upgraded to v0.1.1") {
		t.Errorf("state %q", rep.Failure.State)
	}
	assertCRDsGone(t, cfg, before)
}

// TestRehearse_ClusterAPIMinorUpgrade rehearses cluster-api's own v1.13.0
// -> v1.14.2 (core, kubeadm bootstrap and control plane, built from the
// module proxy's trees): no core release is needed, and clusterctl
// upgrades the three at once.
func TestRehearse_ClusterAPIMinorUpgrade(t *testing.T) {
	cfg, kubeconfig := scratchCluster(t)
	before := crdNames(t, cfg)
	// Built as the upgrade check's real pairs are (diff/realpairs_test.go):
	// v1.13's tree predates the layout docs/configs describes.
	old := buildtest.Build(t, testtree.ModuleDir(t, "sigs.k8s.io/cluster-api@v1.13.0"), "v1.13.0").Release
	next := buildtest.Build(t, testtree.ModuleDir(t, testtree.ClusterAPIModule), "v1.14.2").Release
	var log bytes.Buffer
	rep, err := rehearse.Rehearse(context.Background(), rehearse.Options{Kubeconfig: kubeconfig, Old: old, New: next, Log: &log})
	t.Logf("%s\n%s", rehearsalReport(rep), log.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Core) > 0 || len(rep.Providers) != 3 {
		t.Errorf("core %v, upgraded %v; want the three providers of the release upgraded", rep.Core, rep.Providers)
	}
	for _, label := range []string{"cluster-api", "bootstrap-kubeadm", "control-plane-kubeadm"} {
		if !strings.Contains(log.String(), "Installing provider="+label+" version=v1.14.2") {
			t.Errorf("clusterctl did not install %s v1.14.2", label)
		}
	}
	assertCRDsGone(t, cfg, before)
}

// TestRehearse_RefusesAClusterTheProviderIsIn refuses a cluster that holds
// CRDs of the release (one the provider is installed in): nothing is
// installed or removed, and the error names what is there. A cluster
// without cert-manager's CRDs is refused too, saying what to install,
// when nothing may be fetched.
func TestRehearse_RefusesAClusterTheProviderIsIn(t *testing.T) {
	cfg, kubeconfig := scratchCluster(t)
	old, next, core := example(t, "v0.1.0"), example(t, "v0.1.1"), coreRelease(t)
	installed := installCRDs(t, cfg, old.Providers[0].Components().Data)
	before := crdNames(t, cfg)
	rep, err := rehearse.Rehearse(context.Background(), rehearse.Options{Kubeconfig: kubeconfig, Old: old, New: next, Core: core})
	if err == nil || !strings.Contains(err.Error(), "already holds 6 objects the rehearsal would install (CustomResourceDefinition/") ||
		!strings.Contains(err.Error(), "runs only on a scratch cluster") {
		t.Fatalf("want the cluster refused, got %v", err)
	}
	if d := cmp.Diff(before, crdNames(t, cfg)); d != "" || len(rep.Removed) > 0 || len(rep.Created) > 0 {
		t.Errorf("the refused cluster changed (-before +after):\n%s\nremoved %v", d, rep.Removed)
	}
	for _, n := range installed {
		if !strings.Contains(err.Error(), n) && !strings.Contains(err.Error(), "more") {
			t.Errorf("the error does not name %s: %v", n, err)
		}
	}

	bare := writeKubeconfig(t, startServer(t))
	_, err = rehearse.Rehearse(context.Background(), rehearse.Options{Kubeconfig: bare, Old: old, New: next, Core: core})
	if err == nil || !strings.Contains(err.Error(), "has no cert-manager CRDs (certificates.cert-manager.io, issuers.cert-manager.io)") ||
		!strings.Contains(err.Error(), "kubectl apply -f cert-manager.crds.yaml") {
		t.Errorf("want the cluster without cert-manager refused with what to install, got %v", err)
	}
}

// TestRehearse_CertManagerFromTheRepository rehearses on a cluster without
// cert-manager's CRDs, with cert-manager allowed: clusterctl installs it
// from the rehearsal's repository (served like the providers), and it is
// removed with the rest.
func TestRehearse_CertManagerFromTheRepository(t *testing.T) {
	cfg := startServer(t)
	startNamespaceController(t, cfg)
	before := crdNames(t, cfg)
	calls := 0
	var log bytes.Buffer
	rep, err := rehearse.Rehearse(context.Background(), rehearse.Options{Kubeconfig: writeKubeconfig(t, cfg), Old: example(t, "v0.1.0"), New: example(t, "v0.1.1"),
		Core: coreRelease(t), CertManager: certManagerLoader(t, &calls), Log: &log})
	t.Logf("%s\n%s", rehearsalReport(rep), log.String())
	if err != nil {
		t.Fatal(err)
	}
	if rep.CreatedObjects() != len(rep.Objects) || rep.Refusals() > 0 {
		t.Errorf("%d of %d objects created, %d refused", rep.CreatedObjects(), len(rep.Objects), rep.Refusals())
	}
	if calls != 1 || rep.CertManager != certManager(t).Version || !strings.Contains(log.String(), "Installing cert-manager") {
		t.Errorf("cert-manager loaded %d times, report says %q; want clusterctl to install it", calls, rep.CertManager)
	}
	assertCRDsGone(t, cfg, before)
}

// TestRehearse_InterruptedRemovesWhatItInstalled cancels a rehearsal while
// clusterctl init installs the example: it returns with the context's
// error and removes what clusterctl installed.
func TestRehearse_InterruptedRemovesWhatItInstalled(t *testing.T) {
	cfg, kubeconfig := scratchCluster(t)
	before := crdNames(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelOn{marker: "Installing provider=infrastructure-example", cancel: cancel}
	start := time.Now()
	rep, err := rehearse.Rehearse(ctx, rehearse.Options{Kubeconfig: kubeconfig, Old: example(t, "v0.1.0"), New: example(t, "v0.1.1"), Core: coreRelease(t), Log: w})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want the context's error, got %v\n%s", err, rehearsalReport(rep))
	}
	t.Logf("returned %v after the start:\n%s", time.Since(start).Round(time.Millisecond), rehearsalReport(rep))
	if len(rep.Removed) == 0 || len(rep.Left) > 0 {
		t.Errorf("removed %v, left %v", rep.Removed, rep.Left)
	}
	assertCRDsGone(t, cfg, before)
}

// cancelOn cancels when what is written holds marker.
type cancelOn struct {
	marker string
	cancel func()
	b      strings.Builder
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.b.Write(p)
	if strings.Contains(c.b.String(), c.marker) {
		c.cancel()
	}
	return len(p), nil
}

// TestRehearse_RefusedDuringApplyStoppedAndHalfUpgraded rehearses an
// upgrade whose webhook Service the API server refuses (a port out of
// range): no CRD check sees it, clusterctl deletes v0.1.0's components and
// then retries creating the Service; the rehearsal stops it after a few
// tries with the server's words instead of waiting out its 2.5 minutes, and
// reports the provider half-upgraded.
func TestRehearse_RefusedDuringApplyStoppedAndHalfUpgraded(t *testing.T) {
	cfg, kubeconfig := scratchCluster(t)
	before := crdNames(t, cfg)
	next := example(t, "v0.1.1")
	editDoc(t, next, "infrastructure-example", "name: capi-example-webhook-service", "  - port: 443\n", "  - port: 99999\n")
	var log bytes.Buffer
	rep, err := rehearse.Rehearse(context.Background(), rehearse.Options{Kubeconfig: kubeconfig, Old: example(t, "v0.1.0"), New: next, Core: coreRelease(t), Log: &log})
	t.Logf("%s\n%s", rehearsalReport(rep), log.String())
	if err == nil || rep == nil || rep.Failure == nil || rep.Failure.Step != "apply" {
		t.Fatalf("want the upgrade refused during apply, got %v", err)
	}
	f := rep.Failure
	for _, want := range []string{`Service "capi-example-webhook-service" is invalid: spec.ports[0].port: Invalid value: 99999`, "stopped after 4 tries"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("the failure does not say %q: %s", want, f.Message)
		}
	}
	for _, want := range []string{"v0.1.0's components deleted and v0.1.1's partly installed", "infrastructure-example is half-upgraded", "the inventory says infrastructure-example@v0.1.0"} {
		if !strings.Contains(f.State, want) {
			t.Errorf("the state does not say %q: %s", want, f.State)
		}
	}
	for _, s := range rep.Steps {
		if s.Name == "apply" && s.Seconds > 60 {
			t.Errorf("apply took %.0fs: clusterctl's retries were waited out", s.Seconds)
		}
	}
	assertCRDsGone(t, cfg, before)
}

// TestRehearse_ReleaseSeriesMissingRefusedBeforeAnyChange runs capirepo
// verify NEW --upgrade-from OLD --core CORE (folders) on an upgrade whose
// metadata.yaml no longer lists the 0.1 series (diff's CAPI701): clusterctl
// upgrade plan, which reads the newest release's metadata, refuses in its
// own words, before anything changes; the JSON report carries it.
func TestRehearse_ReleaseSeriesMissingRefusedBeforeAnyChange(t *testing.T) {
	cfg, kubeconfig := scratchCluster(t)
	before := crdNames(t, cfg)
	next := example(t, "v0.1.1")
	edit(t, next, "infrastructure-example", "metadata.yaml", "  minor: 1\n", "  minor: 2\n")
	dirs := map[string]*release.Release{"old": example(t, "v0.1.0"), "new": next, "core": coreRelease(t)}
	sides := map[string]*pipeline.Side{}
	for name, rel := range dirs {
		dir := filepath.Join(t.TempDir(), name)
		if err := release.Write(dir, rel); err != nil {
			t.Fatal(err)
		}
		s, err := pipeline.ParseSide(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		sides[name] = &s
	}
	var log bytes.Buffer
	rep, err := pipeline.Verify(context.Background(), pipeline.VerifyOptions{Path: sides["new"].Arg, Log: &log,
		Rehearse: &pipeline.RehearseOptions{InstallCheckOptions: pipeline.InstallCheckOptions{Kubeconfig: kubeconfig, Log: &log, Core: sides["core"]},
			From: sides["old"]}})
	if rep == nil || rep.Rehearsal == nil {
		t.Fatalf("no rehearsal report: %v\n%s", err, log.String())
	}
	t.Logf("%s\n%s", rehearsalReport(rep.Rehearsal), log.String())
	f := rep.Rehearsal.Failure
	if err == nil || f == nil || f.Step != "plan" {
		t.Fatalf("want the upgrade refused by clusterctl upgrade plan, got %v", err)
	}
	const want = "invalid provider metadata: version v0.1.0 (the current version) for the provider capi-example-system/infrastructure-example does not match any release series"
	if !strings.Contains(f.Message, want) || !strings.Contains(err.Error(), want) {
		t.Errorf("the failure does not say %q: %s", want, f.Message)
	}
	if f.State != "nothing upgraded: the cluster runs v0.1.0" || strings.Contains(log.String(), "Deleting") {
		t.Errorf("state %q; want nothing changed", f.State)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"rehearsal": {`) || !strings.Contains(js.String(), `"step": "plan"`) {
		t.Errorf("JSON report (%v):\n%s", err, js.String())
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "### Upgrade rehearsal v0.1.0 → v0.1.1: failed at plan\n") ||
		!strings.Contains(md.String(), "**State:** nothing upgraded: the cluster runs v0.1.0") {
		t.Errorf("Markdown report (%v):\n%s", err, md.String())
	}
	assertCRDsGone(t, cfg, before)
}
