package local

import (
	"context"
	"sync"
	"testing"

	"github.com/capirepo/capirepo/builder/buildtest"

	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

const exampleDir = "../../examples/infrastructure-example"

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
	r := buildtest.Build(t, exampleDir, version).Release
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
