//go:build realpairs

package diff_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/diff"
)

// TestCompare_RealPairs builds pairs of real releases from the Go module
// proxy, as their trees build, and compares them. Consecutive minors of
// cluster-api (v1.10 to v1.11, where v1beta2 arrives), CAPA and CAPG upgrade
// without an error; the skips clusterctl refuses are errors naming what
// refuses them. Slow (eight real trees): go test -tags realpairs ./diff/
// (make bench runs it).
func TestCompare_RealPairs(t *testing.T) {
	type want struct{ rule, object, field string }
	cases := []struct {
		old, new string
		errors   []want // every error (object and field "" match any)
		warnings []string
	}{
		{old: "sigs.k8s.io/cluster-api@v1.10.10", new: "sigs.k8s.io/cluster-api@v1.11.0",
			// The contract moves from v1beta1 to v1beta2, once per provider.
			warnings: []string{"CAPI702", "CAPI702", "CAPI702"}},
		{old: ClusterAPIPrevious, new: "sigs.k8s.io/cluster-api@v1.14.2"},
		{old: "sigs.k8s.io/cluster-api-provider-aws/v2@v2.12.1", new: "sigs.k8s.io/cluster-api-provider-aws/v2@v2.13.0"},
		{old: "sigs.k8s.io/cluster-api-provider-gcp@v1.12.0", new: "sigs.k8s.io/cluster-api-provider-gcp@v1.13.1",
			// Key name patterns widened (no finding of their own: a pattern cannot be compared).
			warnings: []string{"CAPI708", "CAPI708", "CAPI708", "CAPI708", "CAPI708", "CAPI708", "CAPI708", "CAPI708", "CAPI708", "CAPI708", "CAPI708", "CAPI708"}},
		// Refused: v0.4 stores v1alpha4, which v1.13 no longer lists, and
		// v1.13's metadata.yaml has no 0.3 and 0.4 series.
		{old: "sigs.k8s.io/cluster-api@v0.4.8", new: "sigs.k8s.io/cluster-api@v1.13.0", warnings: []string{"CAPI702", "CAPI702", "CAPI702"}, errors: []want{
			{"CAPI701", "Metadata", "releaseSeries"},
			{"CAPI703", "CustomResourceDefinition/clusters.cluster.x-k8s.io", "spec.versions[v1alpha4]"},
			{"CAPI703", "CustomResourceDefinition/kubeadmcontrolplanes.controlplane.cluster.x-k8s.io", "spec.versions[v1alpha4]"},
			{"CAPI704", "CustomResourceDefinition/clusters.cluster.x-k8s.io", "spec.versions[v1alpha3]"},
		}},
		// Refused: core and kubeadm move more than three minors at once.
		{old: "sigs.k8s.io/cluster-api@v1.10.10", new: "sigs.k8s.io/cluster-api@v1.14.2", warnings: []string{"CAPI702", "CAPI702", "CAPI702"}, errors: []want{{"CAPI714", "", ""}}},
	}
	for _, c := range cases {
		t.Run(c.old+" to "+c.new, func(t *testing.T) {
			res := diff.Compare(build(t, c.old), build(t, c.new))
			var warnings []string
			for _, f := range res.Findings {
				switch f.Severity {
				case contract.Warning:
					warnings = append(warnings, f.Rule)
				case contract.Error:
					if !slices.ContainsFunc(c.errors, func(w want) bool { return w.rule == f.Rule }) {
						t.Errorf("unexpected error: %s", f)
					}
					if strings.HasPrefix(f.Object, "CustomResourceDefinition/") && !strings.Contains(f.Message, strings.TrimPrefix(f.Field, "spec.versions[")[:7]) {
						t.Errorf("the error does not name the version: %s", f)
					}
				}
			}
			for _, w := range c.errors {
				if !slices.ContainsFunc(res.Findings, func(f contract.Finding) bool {
					return f.Rule == w.rule && f.Severity == contract.Error && (w.object == "" || f.Object == w.object) && (w.field == "" || f.Field == w.field)
				}) {
					t.Errorf("no %s error on %s %s:\n%s", w.rule, w.object, w.field, messages(res))
				}
			}
			slices.Sort(warnings)
			if strings.Join(warnings, " ") != strings.Join(c.warnings, " ") {
				t.Errorf("warnings %v, want %v:\n%s", warnings, c.warnings, messages(res))
			}
		})
	}
}

// TestCompare_RealPairsLabelledNonContractKinds: consecutive releases of CAPA
// and CAPG whose config/crd commonLabels stamp cluster.x-k8s.io/v1beta1 (and
// CAPA's v1alpha3 and v1alpha4) on every CRD, identities, Fargate profiles and
// ROSA role and network kinds too, some of them new in the newer release.
// clusterctl upgrades them without trouble: no upgrade error, and no CAPI710
// at all.
//
// Their users' flavors (CAPI715 ... CAPI717) stay, but for the one flavor
// CAPA v2.12 dropped: eks-nodeadm-clusterclass, whose NodeadmConfigTemplate
// v2.12.1's eks-clusterclass uses (CAPI713 says that). The strict pairs
// above hold no such warning at all.
func TestCompare_RealPairsLabelledNonContractKinds(t *testing.T) {
	for _, c := range []struct {
		old, new string
		// templateUsers are the CAPI715 ... CAPI717 findings, as rule file.
		templateUsers []string
	}{
		// ROSANetwork and ROSARoleConfig arrive, labelled.
		{old: "sigs.k8s.io/cluster-api-provider-aws/v2@v2.9.0", new: "sigs.k8s.io/cluster-api-provider-aws/v2@v2.10.0"},
		// NodeadmConfig and its template arrive, labelled.
		{old: "sigs.k8s.io/cluster-api-provider-aws/v2@v2.10.0", new: "sigs.k8s.io/cluster-api-provider-aws/v2@v2.11.0"},
		// ROSAOCMRoleConfig arrives, labelled.
		{old: "sigs.k8s.io/cluster-api-provider-aws/v2@v2.11.0", new: "sigs.k8s.io/cluster-api-provider-aws/v2@v2.12.1",
			templateUsers: []string{"CAPI715 infrastructure-aws/v2.11.0/cluster-template-eks-nodeadm-clusterclass.yaml"}},
		// GKEConfig, GCPMachinePool and the GKE templates arrive, labelled.
		{old: "sigs.k8s.io/cluster-api-provider-gcp@v1.10.0", new: "sigs.k8s.io/cluster-api-provider-gcp@v1.12.0"},
	} {
		t.Run(c.old+" to "+c.new, func(t *testing.T) {
			res := diff.Compare(build(t, c.old), build(t, c.new))
			var templateUsers []string
			for _, f := range res.Findings {
				if f.Severity == contract.Error || f.Rule == contract.RuleUpgradeContractLabel {
					t.Errorf("%s", f)
				}
				if slices.Contains(templateUserRules, f.Rule) {
					templateUsers = append(templateUsers, f.Rule+" "+f.File)
				}
			}
			if !slices.Equal(templateUsers, c.templateUsers) {
				t.Errorf("flavor findings %q, want %q", templateUsers, c.templateUsers)
			}
			t.Logf("%d findings:\n%s", len(res.Findings), messages(res))
		})
	}
}
