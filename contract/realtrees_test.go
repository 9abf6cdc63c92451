package contract_test

import (
	"context"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/builder/buildtest"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
)

// TestLint_RealReleasesOnlyTrueFindings builds real provider trees as they
// are (no waivers) and lints them through the one gate: the only errors are
// the true findings docs/providers.md lists ("Lint findings on real
// releases"), each with the reason.
func TestLint_RealReleasesOnlyTrueFindings(t *testing.T) {
	type errKey struct{ Rule, File, Object string }
	cases := []struct {
		name, module, sub, version string
		cfg                        *provider.Config
		waivers                    []contract.Waiver
		want                       []errKey
	}{
		{name: "CAPG", module: testtree.CAPGModule, version: "v1.13.1"},
		{name: "CAPA", module: testtree.CAPAModule, version: "v2.13.0", want: []errKey{
			// Both flavors ship their ClusterClass inline, but clusterctl
			// generate cluster fetches clusterclass-<class>.yaml first
			// (addClusterClassIfMissing) and fails without it.
			{"CAPI504", "infrastructure-aws/v2.13.0/cluster-template-multitenancy-clusterclass.yaml", "Cluster/${CLUSTER_NAME}"},
			{"CAPI504", "infrastructure-aws/v2.13.0/cluster-template-simple-clusterclass.yaml", "Cluster/${CLUSTER_NAME}"},
		}},
		{name: "CAPD", module: testtree.CAPDModule, sub: "infrastructure/docker", version: "v1.14.2",
			cfg: &provider.Config{Providers: []provider.Spec{{Name: "infrastructure-docker", Kustomize: "config/default", ComponentsFile: "infrastructure-components.yaml", Metadata: "metadata.yaml", Templates: &provider.Templates{Dir: "templates"}}}},
			// CAPD's tree has no metadata.yaml of its own: cluster-api's e2e
			// framework writes one (issue 19 layouts). clusterctl refuses the
			// release without it, so no waiver clears the error
			// (docs/configs/capd.capirepo.yaml names the e2e copy instead).
			want: []errKey{{"CAPI101", "infrastructure-docker/v1.14.2/metadata.yaml", ""}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(testtree.ModuleDir(t, c.module), filepath.FromSlash(c.sub))
			if c.cfg == nil { // the tree's own (conventions)
				c.cfg = buildtest.Config(t, dir)
			}
			res, err := builder.Build(context.Background(), builder.Options{Dir: dir, Version: c.version, Config: c.cfg})
			if err != nil {
				t.Fatal(err)
			}
			rep := contract.Lint(res.Release, contract.Options{Waivers: c.waivers, Findings: res.Findings})
			got := []errKey{}
			for _, f := range rep.Findings {
				if f.Severity == contract.Error {
					got = append(got, errKey{f.Rule, f.File, f.Object})
				}
			}
			want := slices.Clip(c.want)
			if want == nil {
				want = []errKey{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nreport:\n%s", diff, text(rep))
			}
			if len(rep.Unmatched) > 0 {
				t.Errorf("waivers matched nothing: %v", rep.Unmatched)
			}
		})
	}
}

// TestLint_CAPI316_RealCAPA: CAPA's AWSCluster and AWSManagedControlPlane
// name three cluster-scoped identities in spec.identityRef, and CAPA's
// config/crd labels their CRDs move-hierarchy: no finding. Without the label
// (the release as it would be without CAPA's label_in_*identities.yaml
// patches) each identity is a warning; the cluster-scoped ROSAOCMRoleConfig,
// which no InfraCluster references, is not.
func TestLint_CAPI316_RealCAPA(t *testing.T) {
	dir := testtree.ModuleDir(t, testtree.CAPAModule)
	res, err := builder.Build(context.Background(), builder.Options{Dir: dir, Version: "v2.13.0", Config: buildtest.Config(t, dir)})
	if err != nil {
		t.Fatal(err)
	}
	capi316 := func() []string {
		var out []string
		for _, f := range contract.Lint(res.Release, contract.Options{Findings: res.Findings}).Findings {
			if f.Rule == contract.RuleMoveLabel {
				out = append(out, string(f.Severity)+" "+f.Object)
			}
		}
		return out
	}
	if got := capi316(); len(got) > 0 {
		t.Errorf("CAPI316 on CAPA as released: %v", got)
	}
	p := res.Release.Providers[0]
	comps := p.Components()
	stripped := strings.ReplaceAll(string(comps.Data), "    clusterctl.cluster.x-k8s.io/move-hierarchy: \"\"\n", "")
	if stripped == string(comps.Data) {
		t.Fatal("no move-hierarchy label in CAPA's components")
	}
	if err := p.Add(p.ComponentsFile, []byte(stripped)); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"warning CustomResourceDefinition/awsclustercontrolleridentities.infrastructure.cluster.x-k8s.io",
		"warning CustomResourceDefinition/awsclusterroleidentities.infrastructure.cluster.x-k8s.io",
		"warning CustomResourceDefinition/awsclusterstaticidentities.infrastructure.cluster.x-k8s.io",
	}
	if diff := cmp.Diff(want, capi316()); diff != "" {
		t.Errorf("CAPI316 without the labels (-want +got):\n%s", diff)
	}
}

// TestLint_CAPG_TopologyFlavorsNeedTheirClassFlavors: CAPG v1.13.1 ships
// each ClusterClass as a flavor of its own (clusterclass, gke-clusterclass,
// gke-autopilot-clusterclass, each naming it ${CLUSTER_CLASS_NAME}) and
// documents applying it before generating the matching topology flavor
// (docs/book/src/topics/clusterclass). Each topology flavor is a warning
// naming the class flavor its name pairs it with, not an error.
func TestLint_CAPG_TopologyFlavorsNeedTheirClassFlavors(t *testing.T) {
	dir := testtree.ModuleDir(t, testtree.CAPGModule)
	res, err := builder.Build(context.Background(), builder.Options{Dir: dir, Version: "v1.13.1", Config: buildtest.Config(t, dir)})
	if err != nil {
		t.Fatal(err)
	}
	rep := contract.Lint(res.Release, contract.Options{Findings: res.Findings})
	got := map[string]string{}
	for _, f := range rep.Findings {
		if f.Rule == contract.RuleClassVariable || f.Rule == contract.RuleTemplateClass {
			got[path.Base(f.File)] = string(f.Severity) + " " + f.Message
		}
	}
	want := map[string]string{
		"cluster-template-topology.yaml":               "cluster-template-clusterclass.yaml",
		"cluster-template-gke-topology.yaml":           "cluster-template-gke-clusterclass.yaml",
		"cluster-template-gke-autopilot-topology.yaml": "cluster-template-gke-autopilot-clusterclass.yaml",
	}
	if len(got) != len(want) {
		t.Errorf("class findings on %d files, want %d: %v", len(got), len(want), got)
	}
	for file, classFlavor := range want {
		msg := got[file]
		if !strings.HasPrefix(msg, "warning ") || !strings.Contains(msg, "applied first") || !strings.Contains(msg, "("+classFlavor+")") {
			t.Errorf("%s: %q; want a warning that it needs %s applied first", file, msg, classFlavor)
		}
	}
}
