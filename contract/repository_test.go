package contract_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/testtree"
)

// capi105 returns the message of the release's one CAPI105 finding.
func capi105(t *testing.T, r contract.Report) string {
	t.Helper()
	var got []string
	for _, f := range r.Findings {
		if f.Rule == contract.RuleVersionCovered {
			got = append(got, f.Message)
		}
	}
	if len(got) != 1 {
		t.Fatalf("want one CAPI105 finding, got %q\n%s", got, text(r))
	}
	return got[0]
}

// TestLint_CAPI105SuggestsTheTreesContract: the release series CAPI105 asks
// for names the contract the tree uses (issue 45.2): its newest series',
// else its CRDs' labels', not always v1beta2, which would move a v1beta1
// provider to another contract behind its maintainer's back.
func TestLint_CAPI105SuggestsTheTreesContract(t *testing.T) {
	v1beta1Series := "releaseSeries:\n- major: 0\n  minor: 1\n  contract: v1beta1\n- major: 0\n  minor: 0\n  contract: v1alpha4\n"
	cases := []struct {
		name string
		edit func(t *testing.T, fs files)
		want string
	}{
		{"a v1beta2 tree", func(t *testing.T, fs files) {}, "add {major: 0, minor: 2, contract: v1beta2}"},
		{"a v1beta1-only tree: every series and CRD label says v1beta1", func(t *testing.T, fs files) {
			fs.replace(t, meta, "releaseSeries:\n- major: 0\n  minor: 1\n  contract: v1beta2\n- major: 0\n  minor: 0\n  contract: v1alpha4\n", v1beta1Series)
			fs[comps] = strings.ReplaceAll(fs[comps], "cluster.x-k8s.io/v1beta2: v1beta1", "cluster.x-k8s.io/v1beta1: v1beta1")
		}, "add {major: 0, minor: 2, contract: v1beta1}"},
		{"the newest series decides, not the series listed first", func(t *testing.T, fs files) {
			fs[meta] = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 0\n  contract: v1beta2\n- major: 0\n  minor: 1\n  contract: v1beta1\n"
		}, "add {major: 0, minor: 2, contract: v1beta1}"},
		{"a newest series clusterctl no longer accepts: the CRDs' labels", func(t *testing.T, fs files) {
			fs[meta] = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 1\n  contract: v1alpha4\n"
			fs[comps] = strings.ReplaceAll(fs[comps], "cluster.x-k8s.io/v1beta2: v1beta1", "cluster.x-k8s.io/v1beta1: v1beta1")
		}, "add {major: 0, minor: 2, contract: v1beta1}"},
		{"neither: the newest contract clusterctl accepts", func(t *testing.T, fs files) {
			fs[meta] = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 1\n  contract: v1alpha4\n"
			fs[comps] = strings.ReplaceAll(fs[comps], "cluster.x-k8s.io/v1beta2: v1beta1", "cluster.x-k8s.io/v1alpha4: v1beta1")
		}, "add {major: 0, minor: 2, contract: v1beta2}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := readDir(t, "testdata/release")
			c.edit(t, fs)
			msg := capi105(t, contract.Lint(fs.release(t, label, "v0.2.0"), contract.Options{}))
			if !strings.Contains(msg, c.want) {
				t.Errorf("CAPI105 says %q; want it to say %q", msg, c.want)
			}
		})
	}
}

// TestLint_CAPI105_RealV1beta1Trees: CAPA v2.13.0 and CAPG v1.13.1 still
// name v1beta1 in every release series and label their CRDs
// cluster.x-k8s.io/v1beta1; built at the next minor, which no series
// covers, the fix CAPI105 suggests keeps them on v1beta1.
func TestLint_CAPI105_RealV1beta1Trees(t *testing.T) {
	if testing.Short() {
		t.Skip("renders two real provider trees")
	}
	for _, c := range []struct{ name, module, version, want string }{
		{"CAPA", testtree.CAPAModule, "v2.14.0", "add {major: 2, minor: 14, contract: v1beta1}"},
		{"CAPG", testtree.CAPGModule, "v1.14.0", "add {major: 1, minor: 14, contract: v1beta1}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := testtree.ModuleDir(t, c.module)
			res, err := builder.Build(context.Background(), builder.Options{Dir: dir, Version: c.version, Config: buildtest.Config(t, dir)})
			if err != nil {
				t.Fatal(err)
			}
			rep := contract.Lint(res.Release, contract.Options{Findings: res.Findings})
			if msg := capi105(t, rep); !strings.Contains(msg, c.want) {
				t.Errorf("CAPI105 says %q; want it to say %q", msg, c.want)
			}
			if i := slices.IndexFunc(rep.Findings, func(f contract.Finding) bool { return f.Rule == contract.RuleLabelMetadata }); i >= 0 {
				t.Errorf("CAPI314 on the tree's own labels: %v", rep.Findings[i])
			}
		})
	}
}
