package github_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capirepo/capirepo/builder/buildtest"

	"k8s.io/apimachinery/pkg/util/version"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
)

// TestPublishGitHub_ClusterctlReadsThePublishedRelease publishes the example
// provider through the public hosts (api.github.com, uploads.github.com),
// then reads it back with clusterctl's own GitHub repository code: versions,
// metadata, components, every flavor and every ClusterClass.
func TestPublishGitHub_ClusterctlReadsThePublishedRelease(t *testing.T) {
	ctx := context.Background()
	res := buildtest.Build(t, "../../examples/infrastructure-example", "v0.1.0")
	rel := res.Release

	srv := fakegh.New(t, fakegh.WithToken(testToken))
	// clusterctl caches releases per repository for the process: a unique one.
	owner, name := "capi-roundtrip", fmt.Sprintf("example-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), roundTrips.Add(1)) // clusterctl caches per repository
	srv.AddRepo(owner, name, false)

	// Every client in this process (go-github's, clusterctl's, oauth2's)
	// resolves http.DefaultTransport at request time.
	orig := http.DefaultTransport
	http.DefaultTransport = srv.Transport(orig)
	t.Cleanup(func() { http.DefaultTransport = orig })
	t.Setenv("GOPROXY", "off") // list versions through the API, not proxy.golang.org

	g, err := github.New(github.Options{Owner: owner, Repo: name, Token: testToken,
		Retry: &publish.Retry{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := g.Publish(ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Providers) != 1 {
		t.Fatalf("providers in summary = %+v", sum.Providers)
	}
	url := sum.Providers[0].URL
	if want := "https://github.com/" + owner + "/" + name + "/releases/latest/infrastructure-components.yaml"; url != want {
		t.Fatalf("provider URL = %s, want %s", url, want)
	}

	reader := config.NewMemoryReader()
	reader.Set("github-token", testToken)
	for _, v := range []string{"CLUSTER_NAME", "NAMESPACE", "KUBERNETES_VERSION", "CONTROL_PLANE_MACHINE_COUNT",
		"WORKER_MACHINE_COUNT", "EXAMPLE_MACHINE_FLAVOR", "EXAMPLE_REGION"} {
		reader.Set(v, "1")
	}
	if _, err := reader.AddProvider("example", clusterctlv1.InfrastructureProviderType, url); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.New(ctx, "", config.InjectReader(reader))
	if err != nil {
		t.Fatal(err)
	}
	p, err := cfg.Providers().Get("example", clusterctlv1.InfrastructureProviderType)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := repository.New(ctx, p, cfg)
	if err != nil {
		t.Fatalf("clusterctl repository: %v", err)
	}
	if got := repo.DefaultVersion(); got != "v0.1.0" {
		t.Errorf("clusterctl resolves latest to %q, want v0.1.0", got)
	}
	md, err := repo.Metadata("v0.1.0").Get(ctx)
	if err != nil {
		t.Fatalf("metadata: %v", err)
	}
	if md.GetReleaseSeriesForVersion(mustSemver(t, "0.1.0")) == nil {
		t.Errorf("metadata.yaml has no release series for v0.1.0: %+v", md.ReleaseSeries)
	}
	// List the variables first, as `clusterctl generate provider
	// --describe` does, and give each a value.
	raw, err := repo.Components().Get(ctx, repository.ComponentsOptions{Version: "v0.1.0", SkipTemplateProcess: true})
	if err != nil {
		t.Fatalf("components: %v", err)
	}
	for _, v := range raw.Variables() {
		reader.Set(v, "1")
	}
	comps, err := repo.Components().Get(ctx, repository.ComponentsOptions{Version: "v0.1.0", TargetNamespace: "example-system"})
	if err != nil {
		t.Fatalf("components: %v", err)
	}
	if len(comps.Objs()) == 0 {
		t.Error("components have no objects")
	}
	flavors, classes := 0, 0
	for _, f := range rel.Providers[0].Files {
		switch {
		case f.Name == "cluster-template.yaml":
			flavors++
			if _, err := repo.Templates("v0.1.0").Get(ctx, "", "default", false); err != nil {
				t.Errorf("%s: %v", f.Name, err)
			}
		case strings.HasPrefix(f.Name, "cluster-template-"):
			flavors++
			flavor := strings.TrimSuffix(strings.TrimPrefix(f.Name, "cluster-template-"), ".yaml")
			if _, err := repo.Templates("v0.1.0").Get(ctx, flavor, "default", false); err != nil {
				t.Errorf("%s: %v", f.Name, err)
			}
		case strings.HasPrefix(f.Name, "clusterclass-"):
			classes++
			class := strings.TrimSuffix(strings.TrimPrefix(f.Name, "clusterclass-"), ".yaml")
			if _, err := repo.ClusterClasses("v0.1.0").Get(ctx, class, "default", false); err != nil {
				t.Errorf("%s: %v", f.Name, err)
			}
		}
	}
	// clusterctl listed the releases and downloaded every file through the API.
	if srv.Calls(fakegh.RouteListReleases) == 0 || srv.Calls(fakegh.RouteGetAsset) < flavors+classes+2 {
		t.Errorf("clusterctl did not read through the fake: %v", srv.Log())
	}
	if flavors < 2 || classes < 1 {
		t.Errorf("example has %d flavors and %d classes, want at least 2 and 1", flavors, classes)
	}
}

func mustSemver(t *testing.T, v string) *version.Version {
	t.Helper()
	sv, err := version.ParseSemantic(v)
	if err != nil {
		t.Fatal(err)
	}
	return sv
}

// roundTrips numbers the repositories of this process: clusterctl caches
// releases per repository for the whole process.
var roundTrips atomic.Int64
