package apiserver

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/release"
)

// TestVerifyInstall_EveryReleaseOfAFolderOnItsOwn: verify --install on a
// folder holding cluster-api v1.14.2 and two versions of a provider checks
// all three releases, each on its own (its CRDs removed before the next),
// the provider's against cluster-api's CRDs (created first: the cluster
// has none), so no template object is left unchecked for want of them; and
// the cluster is as it was after.
func TestVerifyInstall_EveryReleaseOfAFolderOnItsOwn(t *testing.T) {
	cfg := startServer(t)
	installCRDs(t, cfg, certManager(t).Components().Data) // cert-manager's, as a kind cluster with it has them
	before := crdNames(t, cfg)

	dir := t.TempDir()
	example := filepath.Join(root, "examples", "infrastructure-example")
	capi := realRelease(t, testtree.ClusterAPIModule, "cluster-api.capirepo.yaml", "v1.14.2")
	for _, rel := range []*release.Release{capi, buildtest.Build(t, example, "v0.1.0").Release, buildtest.Build(t, example, "v0.1.1").Release} {
		if err := release.Write(dir, rel); err != nil {
			t.Fatal(err)
		}
	}
	var log strings.Builder
	rep, err := pipeline.Verify(context.Background(), pipeline.VerifyOptions{Path: dir, Log: &log,
		Install: &pipeline.InstallCheckOptions{Kubeconfig: writeKubeconfig(t, cfg), Log: &log}})
	if rep == nil || rep.Install == nil {
		t.Fatalf("no install report: %v\n%s", err, log.String())
	}
	ins := rep.Install
	if err != nil {
		t.Fatalf("verify --install: %v\n%s", err, report(ins))
	}
	want := []string{"infrastructure-example v0.1.0", "infrastructure-example v0.1.1", "cluster-api v1.14.2, bootstrap-kubeadm v1.14.2, control-plane-kubeadm v1.14.2"}
	if !slices.Equal(ins.Checks, want) {
		t.Errorf("checks %q, want %q", ins.Checks, want)
	}
	for _, b := range []string{"cluster-api v1.14.2", "bootstrap-kubeadm v1.14.2", "control-plane-kubeadm v1.14.2"} {
		if !slices.Contains(ins.Base, b) {
			t.Errorf("base %q lacks %s", ins.Base, b)
		}
	}
	for _, v := range []string{"v0.1.0", "v0.1.1"} {
		file(t, ins, "infrastructure-example/"+v+"/cluster-template.yaml")
	}
	file(t, ins, "cluster-api/v1.14.2/core-components.yaml")
	if m := ins.Missing(); len(m) > 0 || ins.Refusals() > 0 {
		t.Errorf("missing %+v, %d refused\n%s", m, ins.Refusals(), report(ins))
	}
	for _, w := range []string{"install check 1 of 3: infrastructure-example v0.1.0", "install check 3 of 3: cluster-api v1.14.2"} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("the log lacks %q:\n%s", w, log.String())
		}
	}
	if !strings.Contains(report(ins), "3 releases, each checked on its own") {
		t.Errorf("the report does not say the releases were checked on their own:\n%s", report(ins))
	}
	after := crdNames(t, cfg)
	for n := range after {
		if !before[n] {
			t.Errorf("CRD %s left behind", n)
		}
	}

	// The provider's release alone, Cluster API's CRDs from --core (a
	// folder holding its release): one check, nothing missing.
	alone, coreDir := t.TempDir(), t.TempDir()
	if err := release.Write(alone, buildtest.Build(t, example, "v0.1.0").Release); err != nil {
		t.Fatal(err)
	}
	if err := release.Write(coreDir, capi); err != nil {
		t.Fatal(err)
	}
	core, err := pipeline.ParseSides("--core", []string{coreDir})
	if err != nil {
		t.Fatal(err)
	}
	log.Reset()
	rep, err = pipeline.Verify(context.Background(), pipeline.VerifyOptions{Path: alone, Log: &log,
		Install: &pipeline.InstallCheckOptions{Kubeconfig: writeKubeconfig(t, cfg), Core: &core[0], Log: &log}})
	if err != nil || rep.Install == nil || len(rep.Install.Missing()) > 0 || len(rep.Install.Base) != 3 {
		t.Errorf("--core folder: %v\n%s", err, report(rep.Install))
	}
}
