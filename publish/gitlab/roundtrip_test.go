package gitlab_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capirepo/capirepo/builder/buildtest"

	"github.com/google/go-cmp/cmp"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"

	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/verify"
)

// TestPublishGitLab_ClusterctlReadsThePublishedPackage builds the example
// provider, publishes it to the fake GitLab as https://gitlab.example.com,
// and reads it back with clusterctl's own GitLab repository code (through
// verify): metadata, components, every flavor and every ClusterClass.
func TestPublishGitLab_ClusterctlReadsThePublishedPackage(t *testing.T) {
	ctx := context.Background()
	res := buildtest.Build(t, "../../examples/infrastructure-example", "v0.1.0")
	rel := res.Release
	p := rel.Providers[0]

	f := newGLFixture(t)
	project := uniqueProject(t, f)

	// clusterctl's GitLab reader uses http.DefaultClient (or oauth2's client
	// on the default transport) against https://<host>/api/v4/...
	orig := http.DefaultTransport
	http.DefaultTransport = f.srv.Transport(glHost)
	t.Cleanup(func() { http.DefaultTransport = orig })

	sum, err := f.publish(t, rel, func(o *gitlab.Options) { o.Project = project })
	if err != nil {
		t.Fatal(err)
	}
	wantURL := "https://gitlab.example.com/api/v4/projects/capi%2F" + strings.TrimPrefix(project, "capi/") +
		"/packages/generic/infrastructure-example/v0.1.0/infrastructure-components.yaml"
	if diff := cmp.Diff([]publish.ProviderURL{{Name: "example", Type: "InfrastructureProvider", URL: wantURL}}, sum.Providers); diff != "" {
		t.Fatalf("provider URLs (-want +got):\n%s", diff)
	}

	var names []string
	flavors, classes := 0, 0
	for _, a := range p.Assets() {
		names = append(names, a.Name)
		switch {
		case strings.HasPrefix(a.Name, "cluster-template"):
			flavors++
		case strings.HasPrefix(a.Name, "clusterclass-"):
			classes++
		}
	}
	if flavors < 4 || classes < 1 {
		t.Fatalf("the example has %d flavors and %d ClusterClasses, want at least 4 and 1: %v", flavors, classes, names)
	}
	before := f.srv.Count(fakegl.RouteDownload)
	rep, err := verify.Repository(ctx, []verify.Repo{{ID: p.ID, URL: wantURL, Version: "v0.1.0", Files: names}},
		verify.Options{Variables: map[string]string{"gitlab-access-token": glToken}})
	if err != nil {
		t.Fatalf("clusterctl cannot read the package back: %v", err)
	}
	pr := rep.Providers[0]
	if pr.Version != "v0.1.0" || pr.Objects == 0 || len(pr.Flavors) != flavors || len(pr.ClusterClasses) != classes {
		t.Errorf("clusterctl read version %q, %d objects, %d flavors, %d classes; want v0.1.0, >0, %d, %d",
			pr.Version, pr.Objects, len(pr.Flavors), len(pr.ClusterClasses), flavors, classes)
	}
	downloads := 0
	for _, r := range f.srv.Requests() {
		if r.Route != fakegl.RouteDownload {
			continue
		}
		downloads++
		if r.Auth != fakegl.AuthBearer {
			t.Errorf("clusterctl sent %s with auth %q, want the Bearer token it takes from gitlab-access-token", r.Path, r.Auth)
		}
	}
	if downloads-before < flavors+classes+2 {
		t.Errorf("clusterctl downloaded %d files through the fake, want at least %d", downloads-before, flavors+classes+2)
	}

	// And directly through clusterctl's repository package: the components
	// clusterctl would install are the bytes that were built.
	reader := config.NewMemoryReader()
	reader.Set("gitlab-access-token", glToken)
	if _, err := reader.AddProvider("example", clusterctlv1.InfrastructureProviderType, wantURL); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.New(ctx, "", config.InjectReader(reader))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := cfg.Providers().Get("example", clusterctlv1.InfrastructureProviderType)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := repository.New(ctx, cp, cfg)
	if err != nil {
		t.Fatalf("clusterctl repository: %v", err)
	}
	if got := repo.DefaultVersion(); got != "v0.1.0" {
		t.Errorf("clusterctl default version = %q, want v0.1.0", got)
	}
	gitlabRepo, err := repository.NewGitLabRepository(ctx, cp, cfg.Variables())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := gitlabRepo.GetFile(ctx, "v0.1.0", p.ComponentsFile)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := p.File(p.ComponentsFile); string(raw) != string(want.Data) {
		t.Errorf("clusterctl read other components bytes than were built")
	}
}

// TestPublishGitLab_ClusterctlReadsTheReplacedBytes replaces a published
// flavor and checks that clusterctl gets the new bytes (GitLab serves the
// newest copy; capirepo leaves only that one).
func TestPublishGitLab_ClusterctlReadsTheReplacedBytes(t *testing.T) {
	ctx := context.Background()
	f := newGLFixture(t)
	orig := http.DefaultTransport
	http.DefaultTransport = f.srv.Transport(glHost)
	t.Cleanup(func() { http.DefaultTransport = orig })

	project := uniqueProject(t, f)
	files := exampleFiles("1")
	if _, err := f.publish(t, glRelease(t, "v2.0.0", files), func(o *gitlab.Options) { o.Project = project }); err != nil {
		t.Fatal(err)
	}
	files["cluster-template-ha.yaml"] = "ha 2"
	sum, err := f.publish(t, glRelease(t, "v2.0.0", files), func(o *gitlab.Options) { o.Project, o.Replace = project, true })
	if err != nil {
		t.Fatal(err)
	}

	reader := config.NewMemoryReader()
	reader.Set("gitlab-access-token", glToken)
	if _, err := reader.AddProvider("example", clusterctlv1.InfrastructureProviderType, sum.Providers[0].URL); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.New(ctx, "", config.InjectReader(reader))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := cfg.Providers().Get("example", clusterctlv1.InfrastructureProviderType)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := repository.NewGitLabRepository(ctx, cp, cfg.Variables())
	if err != nil {
		t.Fatal(err)
	}
	got, err := repo.GetFile(ctx, "v2.0.0", "cluster-template-ha.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "ha 2" {
		t.Errorf("clusterctl reads %q, want the replaced bytes %q", got, "ha 2")
	}
	if n := len(f.srv.Contents(project, "infrastructure-example", "v2.0.0")["cluster-template-ha.yaml"]); n != 1 {
		t.Errorf("%d copies of the replaced file, want 1", n)
	}
}

var roundTrips atomic.Int64

// uniqueProject adds a project whose path no other test run uses:
// clusterctl caches downloaded files by URL for the whole process.
func uniqueProject(t *testing.T, f *glFixture) string {
	n := roundTrips.Add(1)
	project := fmt.Sprintf("capi/roundtrip-%d-%s", n, strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")))
	f.srv.AddProject(4000+n, project, false)
	return project
}
