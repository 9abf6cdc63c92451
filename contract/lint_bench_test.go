package contract_test

import (
	"os"
	"testing"

	"github.com/capirepo/capirepo/builder/buildtest"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/release"
)

// benchRelease builds a release once per benchmark, outside the timer.
func benchRelease(b *testing.B, dir, version string) *release.Release {
	b.Helper()
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("%s is not there (%v)", dir, err)
	}
	res := buildtest.Build(b, dir, version)
	return res.Release
}

func benchLint(b *testing.B, rel *release.Release) {
	var bytes int64
	for _, p := range rel.Providers {
		for _, f := range p.Files {
			bytes += int64(len(f.Data))
		}
	}
	b.SetBytes(bytes)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		contract.Lint(rel, contract.Options{})
	}
}

// BenchmarkLint_ClusterAPI lints cluster-api v1.14.2's three providers, as
// capirepo build does after rendering them.
func BenchmarkLint_ClusterAPI(b *testing.B) {
	benchLint(b, benchRelease(b, clusterAPIDir, "v1.14.2"))
}

// BenchmarkLint_Example lints the example infrastructure provider.
func BenchmarkLint_Example(b *testing.B) {
	benchLint(b, benchRelease(b, exampleDir, exampleVersion))
}
