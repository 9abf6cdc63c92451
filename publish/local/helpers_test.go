package local

import (
	"context"
	"fmt"
	"maps"
	"os"
	"sync"
	"testing"

	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

const exampleDir = "../../examples/infrastructure-example"

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

var (
	exampleMu    sync.Mutex
	exampleBuilt = map[string]*release.Release{}
)

// exampleRelease builds the bundled example once per version.
func exampleRelease(t testing.TB, version string) *release.Release {
	t.Helper()
	exampleMu.Lock()
	defer exampleMu.Unlock()
	if r, ok := exampleBuilt[version]; ok {
		return r
	}
	r := build(t, exampleDir, version)
	exampleBuilt[version] = r
	return r
}

// clusterctlRepo opens a provider URL with clusterctl's repository client,
// configured in memory with the given overrides folder and variables.
func clusterctlRepo(t testing.TB, label, url, overrides string, vars map[string]string) repository.Client {
	t.Helper()
	ctx := context.Background()
	id, err := provider.ParseLabel(label)
	if err != nil {
		t.Fatal(err)
	}
	r := config.NewMemoryReader()
	if _, err := r.AddProvider(id.Name, id.Type, url); err != nil {
		t.Fatal(err)
	}
	if err := r.Init(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if overrides == "" {
		overrides = t.TempDir()
	}
	r.Set("overridesFolder", overrides)
	for k, v := range vars {
		r.Set(k, v)
	}
	cfg, err := config.New(ctx, "", config.InjectReader(r))
	if err != nil {
		t.Fatal(err)
	}
	p, err := cfg.Providers().Get(id.Name, id.Type)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := repository.New(ctx, p, cfg)
	if err != nil {
		t.Fatalf("clusterctl repository %s: %v", url, err)
	}
	return repo
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
