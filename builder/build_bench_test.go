package builder

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// largeTree is the generated large provider (go run ./bench/gen, or
// bash bench/run.sh); benchmarks on it skip when it is missing.
var largeTree = func() string {
	if d := os.Getenv("CAPIREPO_BENCH_LARGE"); d != "" {
		return d
	}
	return "../bench/out/large"
}()

func benchTree(b *testing.B, dir string) {
	b.Helper()
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("%s: %v", dir, err)
	}
}

func benchBuild(b *testing.B, dir, version string) {
	benchTree(b, dir)
	warmUp()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(context.Background(), Options{Dir: dir, Config: loadConfig(b, dir), Version: version}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuild_Example(b *testing.B)    { benchBuild(b, exampleTree, "v0.1.0") }
func BenchmarkBuild_ClusterAPI(b *testing.B) { benchBuild(b, clusterAPIDir, "v1.14.2") }
func BenchmarkBuild_Large(b *testing.B)      { benchBuild(b, largeTree, "v0.1.0") }

// BenchmarkKustomize_Large is the krusty run alone, without transforms or
// encoding.
func BenchmarkKustomize_Large(b *testing.B) {
	benchTree(b, largeTree)
	warmUp()
	dir := filepath.Join(largeTree, "config", "default")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Kustomize(filesys.MakeFsOnDisk(), dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAsYaml_Large is kustomize's encoding of an already rendered
// ResMap (the JSON round trip), BenchmarkAsYAMLFast_Large the builder's.
func BenchmarkAsYaml_Large(b *testing.B) {
	benchEncode(b, func(rm resmap.ResMap) ([]byte, error) { return rm.AsYaml() })
}

func BenchmarkAsYAMLFast_Large(b *testing.B) { benchEncode(b, asYAML) }

// BenchmarkVariables_Large is the ${VAR} scan of the large components:
// clusterctl's GetVariableMap against the builder's variableMap.
func BenchmarkVariables_Large(b *testing.B) {
	benchTree(b, largeTree)
	rm, err := Kustomize(filesys.MakeFsOnDisk(), filepath.Join(largeTree, "config", "default"))
	if err != nil {
		b.Fatal(err)
	}
	data, err := asYAML(rm)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("clusterctl", func(b *testing.B) {
		for b.Loop() {
			if _, err := yamlprocessor.NewSimpleProcessor().GetVariableMap(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("variableMap", func(b *testing.B) {
		for b.Loop() {
			if _, err := variableMap(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchEncode(b *testing.B, encode func(resmap.ResMap) ([]byte, error)) {
	benchTree(b, largeTree)
	rm, err := Kustomize(filesys.MakeFsOnDisk(), filepath.Join(largeTree, "config", "default"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encode(rm); err != nil {
			b.Fatal(err)
		}
	}
}
