package github_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/publish/publishtest"

	"github.com/google/go-cmp/cmp"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
)

const readerMetadata = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 1\n  minor: 0\n  contract: v1beta2\n"

// upstreamAssets is what a provider's GitHub release carries: the files
// clusterctl reads and some it must not get (checksums, another components
// variant is kept out by the explicit components file, binaries).
func upstreamAssets(version string) []fakegh.Asset {
	return []fakegh.Asset{
		{Name: "metadata.yaml", Data: []byte(readerMetadata)},
		{Name: "infrastructure-components.yaml", Data: []byte("kind: Namespace # " + version)},
		{Name: "infrastructure-components-supervisor.yaml", Data: []byte("other variant")},
		{Name: "cluster-template.yaml", Data: []byte("default flavor " + version)},
		{Name: "cluster-template-ha.yaml", Data: []byte("ha flavor")},
		{Name: "clusterclass-quick.yaml", Data: []byte("class")},
		{Name: "checksums.txt", Data: []byte("sums")},
		{Name: "manager-linux-amd64", Data: []byte("\x7fELF")},
	}
}

func newUpstream(t *testing.T, opts ...fakegh.Option) (*fakegh.Server, *github.Target) {
	t.Helper()
	srv := fakegh.New(t, opts...)
	srv.AddRepo("acme", "cluster-api-provider-example", false)
	srv.AddRelease("acme", "cluster-api-provider-example", fakegh.Release{Tag: "v1.0.0", Assets: upstreamAssets("v1.0.0")})
	srv.AddRelease("acme", "cluster-api-provider-example", fakegh.Release{Tag: "v1.0.1", Assets: upstreamAssets("v1.0.1")})
	srv.AddRelease("acme", "cluster-api-provider-example", fakegh.Release{Tag: "v1.0.2", Draft: true, Assets: upstreamAssets("v1.0.2")})
	srv.AddTag("acme", "cluster-api-provider-example", "v1.0.3", "main")
	r, err := github.New(github.Options{Owner: "acme", Repo: "cluster-api-provider-example",
		APIURL: srv.APIURL(), HTTPClient: &http.Client{}, Retry: &publish.Retry{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return srv, r
}

func TestGitHubSource_VersionsArePublishedReleasesOnly(t *testing.T) {
	_, r := newUpstream(t)
	got, err := r.Versions(context.Background(), publishtest.ID(t, "infrastructure-example"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"v1.0.0", "v1.0.1"}, got); diff != "" {
		t.Errorf("versions (-want +got), the draft v1.0.2 and the bare tag v1.0.3 left out:\n%s", diff)
	}
}

func TestGitHubSource_ReadReturnsOnlyWhatClusterctlReads(t *testing.T) {
	srv, r := newUpstream(t)
	p, err := publishtest.ReadBack(context.Background(), r, "infrastructure-example", "v1.0.1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range p.Files {
		names = append(names, f.Name)
	}
	want := []string{"cluster-template-ha.yaml", "cluster-template.yaml", "clusterclass-quick.yaml", "infrastructure-components.yaml", "metadata.yaml"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if p.ComponentsFile != "infrastructure-components.yaml" || string(p.Components().Data) != "kind: Namespace # v1.0.1" {
		t.Errorf("components %s = %q", p.ComponentsFile, p.Components().Data)
	}
	if p.ID.Name != "example" || p.Version != "v1.0.1" {
		t.Errorf("provider %+v %s", p.ID, p.Version)
	}
	// Every byte came through the API's asset endpoint, none from github.com.
	if n := srv.Calls(fakegh.RouteDownload); n != 0 {
		t.Errorf("%d downloads from github.com, want all through the API", n)
	}
	if n := srv.Calls(fakegh.RouteGetAsset); n != len(want) {
		t.Errorf("%d asset downloads through the API, want %d", n, len(want))
	}

	// The components file the provider URL names.
	p, err = publishtest.ReadBack(context.Background(), r, "infrastructure-example", "v1.0.1", "infrastructure-components-supervisor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.File("infrastructure-components.yaml"); ok || string(p.Components().Data) != "other variant" {
		t.Errorf("with the supervisor components named by the URL, got files %v", p.Files)
	}
}

func TestGitHubSource_DraftsAndBareTagsAreNotFound(t *testing.T) {
	_, r := newUpstream(t)
	for _, v := range []string{"v1.0.2", "v1.0.3", "v9.9.9"} {
		if _, err := publishtest.ReadBack(context.Background(), r, "infrastructure-example", v); !errors.Is(err, publish.ErrNotFound) {
			t.Errorf("Read %s: err = %v, want ErrNotFound", v, err)
		}
	}
}

func TestGitHubSource_BytesThatDoNotMatchTheDigestAreRefused(t *testing.T) {
	srv, r := newUpstream(t)
	srv.Inject(fakegh.RouteGetAsset, 1, fakegh.Fault{Status: http.StatusOK, Body: "not the asset"})
	if _, err := publishtest.ReadBack(context.Background(), r, "infrastructure-example", "v1.0.0"); err == nil {
		t.Fatal("a download whose bytes differ from the digest was accepted")
	}
}

func TestGitHubSource_WithoutDigestsTheBytesAreTaken(t *testing.T) {
	_, r := newUpstream(t, fakegh.WithoutDigest())
	p, err := publishtest.ReadBack(context.Background(), r, "infrastructure-example", "v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := p.File("metadata.yaml"); string(f.Data) != readerMetadata {
		t.Errorf("metadata = %q", f.Data)
	}
}

func TestGitHubSource_ARefusedTokenSaysWhatToDoAndIsNeverPrinted(t *testing.T) {
	srv := fakegh.New(t, fakegh.WithToken("ghp_the_right_one"))
	srv.AddRepo("acme", "cluster-api-provider-example", false)
	r, err := github.New(github.Options{Owner: "acme", Repo: "cluster-api-provider-example", Token: "ghp_wrong_token_value",
		APIURL: srv.APIURL(), HTTPClient: &http.Client{}, Retry: &publish.Retry{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Versions(context.Background(), publishtest.ID(t, "infrastructure-example"))
	if err == nil || !strings.Contains(err.Error(), "GITHUB_TOKEN") {
		t.Fatalf("err = %v, want the hint to set GITHUB_TOKEN", err)
	}
	if strings.Contains(err.Error(), "ghp_wrong_token_value") {
		t.Errorf("the token is in the error: %v", err)
	}
}
