package diff_test

import (
	"strings"
	"testing"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/diff"
	"github.com/capirepo/capirepo/internal/testtree"
)

// TestCompare_CAPI701SuggestsTheTreesContract: the release series CAPI701
// asks a release to add for its own version names the contract the tree
// uses (provider.SuggestContract, the lint's CAPI105 answer): v1beta1 for
// CAPA v2.13.0, whose every series and CRD label says v1beta1, v1beta2 for
// cluster-api v1.14.2.
func TestCompare_CAPI701SuggestsTheTreesContract(t *testing.T) {
	for _, c := range []struct{ name, module, label, series, want string }{
		{"CAPA", testtree.CAPAModule, "infrastructure-aws", "  - major: 2\n    minor: 13\n    contract: v1beta1\n", "add {major: 2, minor: 13, contract: v1beta1}"},
		{"cluster-api", testtree.ClusterAPIModule, core, "  - major: 1\n    minor: 14\n    contract: v1beta2\n", "add {major: 1, minor: 14, contract: v1beta2}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			old, new := build(t, c.module), build(t, c.module)
			editFile(t, new, c.label, "metadata.yaml", func(s string) string { return replace(t, s, c.series, "") })
			var got []string
			for _, f := range diff.Compare(old, new).Findings {
				if f.Rule == contract.RuleUpgradeSeries && strings.Contains(f.Message, "itself") {
					got = append(got, f.Message)
				}
			}
			if len(got) != 1 || !strings.Contains(got[0], c.want) {
				t.Errorf("CAPI701 on the new version's own series: %q; want one saying %q", got, c.want)
			}
		})
	}
}
