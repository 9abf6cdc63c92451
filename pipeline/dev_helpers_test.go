package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"sync"
	"testing"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

const devExampleDir = "../examples/infrastructure-example"

var testVars = map[string]string{"TEST_TOKEN": "t"}

// minimalFiles is a small provider (infrastructure-test) whose metadata
// lists the release series 0.1 up to 0.maxMinor, as a release of that
// series would: a v0.1.x release knows nothing of 0.2.
func minimalFiles(maxMinor int, extra map[string]string) map[string]string {
	md := "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n"
	for m := 1; m <= maxMinor; m++ {
		md += fmt.Sprintf("- major: 0\n  minor: %d\n  contract: v1beta2\n", m)
	}
	files := testtree.Minimal(map[string]string{"metadata.yaml": md})
	maps.Copy(files, extra)
	return files
}

var (
	minimalMu    sync.Mutex
	minimalTrees = map[uint64]string{}
)

// minimalRelease builds the minimal provider at version, from a tree whose
// metadata ends at the version's series.
func minimalRelease(t testing.TB, version string) *release.Release {
	t.Helper()
	sv, err := provider.ParseVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	minimalMu.Lock()
	dir, ok := minimalTrees[sv.Minor()]
	if !ok {
		if dir, err = os.MkdirTemp("", "localrepo-minimal-"); err != nil {
			t.Fatal(err)
		}
		testtree.WriteInto(t, dir, minimalFiles(int(sv.Minor()), nil))
		minimalTrees[sv.Minor()] = dir
	}
	minimalMu.Unlock()
	return build(t, dir, version)
}

func build(t testing.TB, dir, version string) *release.Release {
	t.Helper()
	res, err := builder.Build(context.Background(), builder.Options{Dir: dir, Config: loadConfig(t, dir), Version: version})
	if err != nil {
		t.Fatalf("build %s %s: %v", dir, version, err)
	}
	return res.Release
}

func clone(r *release.Release) *release.Release {
	out := &release.Release{Version: r.Version}
	for _, p := range r.Providers {
		c := *p
		c.Files = nil
		for _, f := range p.Files {
			c.Files = append(c.Files, release.File{Name: f.Name, Data: bytes.Clone(f.Data)})
		}
		out.Providers = append(out.Providers, &c)
	}
	return out
}

// loadConfig loads the configuration of the tree in dir.
func loadConfig(tb testing.TB, dir string) *provider.Config {
	tb.Helper()
	cfg, err := provider.LoadConfig(dir, "")
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}
