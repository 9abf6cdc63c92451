package diff_test

import (
	"testing"

	"github.com/capirepo/capirepo/diff"
)

// BenchmarkCompare_ClusterAPI diffs two cluster-api core releases (v1.13.0
// and v1.14.2: core, kubeadm bootstrap and kubeadm control plane, 17 CRDs,
// 2.5 MB of components each), as the release's upgrade step does.
func BenchmarkCompare_ClusterAPI(b *testing.B) {
	old, new := realPair(b)
	b.ReportAllocs()
	for b.Loop() {
		diff.Compare(old, new)
	}
}
