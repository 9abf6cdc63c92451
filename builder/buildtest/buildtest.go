// Package buildtest builds provider trees for the tests of the packages
// above the builder (publish, pipeline, contract, verify): the tree's
// config loaded and rendered as a release, a minimal provider at any
// version, a deep copy of a release to change. It is for tests only; the
// builder's own tests cannot use it (it imports the builder).
package buildtest

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// Config loads the configuration of the tree in dir (capirepo.yaml,
// clusterctl-settings.json or the conventions).
func Config(tb testing.TB, dir string) *provider.Config {
	tb.Helper()
	cfg, err := provider.LoadConfig(dir, "")
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// Build renders the tree in dir at version with its own config.
func Build(tb testing.TB, dir, version string) *builder.Result {
	tb.Helper()
	res, err := builder.Build(context.Background(), builder.Options{Dir: dir, Config: Config(tb, dir), Version: version})
	if err != nil {
		tb.Fatalf("build %s %s: %v", dir, version, err)
	}
	return res
}

// MinimalFiles is a small provider (infrastructure-test, testtree.Minimal)
// whose metadata lists the release series 0.1 up to 0.maxMinor, as a
// release of that series would: a v0.1.x release knows nothing of 0.2.
func MinimalFiles(maxMinor int, extra map[string]string) map[string]string {
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

// MinimalRelease builds the minimal provider at version (v0.MINOR.PATCH),
// from the tree of MinimalTree whose metadata ends at the version's series.
func MinimalRelease(tb testing.TB, version string) *release.Release {
	tb.Helper()
	sv, err := provider.ParseVersion(version)
	if err != nil {
		tb.Fatal(err)
	}
	return Build(tb, MinimalTree(tb, sv.Minor()), version).Release
}

// MinimalTree is the minimal provider's tree whose metadata lists the
// series 0.1 up to 0.maxMinor. Each is written once per process, never
// changed, and removed by RemoveTrees.
func MinimalTree(tb testing.TB, maxMinor uint64) string {
	tb.Helper()
	minimalMu.Lock()
	defer minimalMu.Unlock()
	dir, ok := minimalTrees[maxMinor]
	if !ok {
		var err error
		if dir, err = os.MkdirTemp("", "capirepo-minimal-"); err != nil {
			tb.Fatal(err)
		}
		testtree.WriteInto(tb, dir, MinimalFiles(int(maxMinor), nil))
		minimalTrees[maxMinor] = dir
	}
	return dir
}

// RemoveTrees removes the trees MinimalTree wrote (from a TestMain).
func RemoveTrees() {
	minimalMu.Lock()
	defer minimalMu.Unlock()
	for k, dir := range minimalTrees {
		_ = os.RemoveAll(dir)
		delete(minimalTrees, k)
	}
}

// Dist writes a release as capirepo build does, into a new temporary
// folder, and returns the folder.
func Dist(tb testing.TB, r *release.Release) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "dist")
	if err := release.Write(dir, r); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// Clone copies a release deeply, so a test can change the copy.
func Clone(r *release.Release) *release.Release {
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
