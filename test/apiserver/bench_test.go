package apiserver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/rehearse"
	"github.com/capirepo/capirepo/release"
)

// BenchmarkInstallCheck times the install check against a warm server
// (one run first, untimed) on the example, cluster-api's trio (core,
// kubeadm bootstrap and control plane) and CAPA, with stand-ins: seconds
// per run, per provider and per template file (flavors and ClusterClasses).
// Not a timed test: bench/run.sh runs it (SKIP_INSTALL=1 leaves it out) and
// bench/RESULTS.md records it. The goal is under 30 s per provider on 2
// cores.
//
//	cd test/apiserver && go test -run XXX -bench InstallCheck -benchtime 3x .
func BenchmarkInstallCheck(b *testing.B) {
	mgmt := managementCluster(b, true) // cluster-api's and cert-manager's CRDs
	bare := startServer(b)             // cert-manager's CRDs only: for cluster-api itself
	installCRDs(b, bare, certManager(b).Components().Data)
	for _, c := range []struct {
		name string
		cfg  *rest.Config
		rel  func() *release.Release
	}{
		{"example", mgmt, func() *release.Release {
			return buildtest.Build(b, filepath.Join(root, "examples", "infrastructure-example"), "v0.1.0").Release
		}},
		{"cluster-api", bare, func() *release.Release {
			return realRelease(b, testtree.ClusterAPIModule, "cluster-api.capirepo.yaml", "v1.14.2")
		}},
		{"capa", mgmt, func() *release.Release { return realRelease(b, testtree.CAPAModule, "capa.capirepo.yaml", "v2.13.0") }},
	} {
		b.Run(c.name, func(b *testing.B) {
			rel := c.rel()
			templates := 0
			for _, p := range rel.Providers {
				for _, f := range p.Files {
					_, flavor := release.FlavorOf(f.Name)
					_, class := release.ClassOf(f.Name)
					if flavor || class {
						templates++
					}
				}
			}
			ctx := context.Background()
			run := func() *install.Report {
				rep, err := install.Check(ctx, rel, install.Options{Config: c.cfg})
				if rep == nil {
					b.Fatal(err)
				}
				return rep
			}
			rep := run() // warm: discovery, OpenAPI, the CRDs' first creation
			start, n := time.Now(), 0
			for b.Loop() {
				rep = run()
				n++
			}
			secs := time.Since(start).Seconds() / float64(n)
			b.ReportMetric(secs/float64(len(rel.Providers)), "s/provider")
			if templates > 0 {
				b.ReportMetric(secs/float64(templates), "s/template")
			}
			b.ReportMetric(float64(rep.Accepted()), "accepted")
			b.ReportMetric(float64(rep.Refusals()), "refused")
			b.ReportMetric(float64(rep.RefusedWithStandInsCount()), "refused-with-stand-ins")
			b.ReportMetric(float64(rep.NotCheckedCount()), "not-checked")
		})
	}
}

// BenchmarkRehearsal times the upgrade rehearsal against a warm server
// (one run of each first, untimed) with core Cluster API v1.14.2: the
// example's v0.1.0 -> v0.1.1 (clean) and a pair whose ExampleCluster CRD
// drops the version v0.1.0 stores in (failing, caught before applying):
// seconds per run, seconds to the verdict (cleaning up left out), and the
// steps that take most. Not a timed test: bench/run.sh runs it
// (SKIP_INSTALL=1 leaves it out) and bench/RESULTS.md records it. The
// goals, warm on 2 cores: a clean pair under 20 s, a failing pair reported
// in under 30 s.
//
//	cd test/apiserver && go test -run XXX -bench Rehearsal -benchtime 1x .
func BenchmarkRehearsal(b *testing.B) {
	_, kubeconfig := scratchCluster(b)
	core := coreRelease(b)
	old, clean := example(b, "v0.1.0"), example(b, "v0.1.1")
	failing := example(b, "v0.1.1")
	editDoc(b, failing, "infrastructure-example", "name: exampleclusters.infrastructure.cluster.x-k8s.io", "    name: v1beta1\n", "    name: v1beta2\n")
	for _, c := range []struct {
		name  string
		next  *release.Release
		fails bool
	}{{"clean", clean, false}, {"failing", failing, true}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			run := func() *rehearse.Report {
				rep, err := rehearse.Rehearse(ctx, rehearse.Options{Kubeconfig: kubeconfig, Old: old, New: c.next, Core: core})
				if rep == nil || (err != nil) != c.fails {
					b.Fatalf("%v\n%s", err, rehearsalReport(rep))
				}
				return rep
			}
			rep := run() // warm: discovery, OpenAPI, the CRDs' first creation
			start, n := time.Now(), 0
			steps := map[string]float64{}
			verdict := 0.0
			for b.Loop() {
				rep = run()
				n++
				for _, s := range rep.Steps {
					steps[s.Name] += s.Seconds
					if s.Name != "cleanup" {
						verdict += s.Seconds
					}
				}
			}
			b.ReportMetric(time.Since(start).Seconds()/float64(n), "s/run")
			b.ReportMetric(verdict/float64(n), "s-to-verdict")
			for _, s := range []string{"prepare", "init", "objects", "check", "apply", "cleanup"} {
				b.ReportMetric(steps[s]/float64(n), "s-"+s)
			}
			b.ReportMetric(float64(rep.CreatedObjects()), "objects")
		})
	}
}
