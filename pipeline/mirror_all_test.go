package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/targets"
)

// clusterctlUpstream serves every provider of clusterctl's own list from
// the fake GitHub (repositories shared as upstream shares them: cluster-api
// holds core, kubeadm, docker, ...), each release holding every components
// file of its repository.
func clusterctlUpstream(t *testing.T, versions ...string) (*fakegh.Server, int) {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "clusterctl.yaml")
	if err := os.WriteFile(empty, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.New(context.Background(), empty)
	if err != nil {
		t.Fatal(err)
	}
	list, err := cfg.Providers().List()
	if err != nil {
		t.Fatal(err)
	}
	srv := fakegh.New(t)
	assets := map[string][]string{} // repo -> components files
	var repos []string
	for _, p := range list {
		seg := strings.Split(p.URL(), "/")
		repo := seg[3] + "/" + seg[4]
		if _, ok := assets[repo]; !ok {
			repos = append(repos, repo)
		}
		assets[repo] = append(assets[repo], path.Base(p.URL()))
	}
	for _, repo := range repos {
		owner, name, _ := strings.Cut(repo, "/")
		srv.AddRepo(owner, name, false)
		for _, v := range versions {
			var major, minor, patch int
			fmt.Sscanf(v, "v%d.%d.%d", &major, &minor, &patch)
			md := metadataFor(fmt.Sprintf("%d.%d=v1beta2", major, minor))
			rel := []fakegh.Asset{{Name: "metadata.yaml", Data: md}}
			for _, c := range assets[repo] {
				rel = append(rel, fakegh.Asset{Name: c, Data: fmt.Appendf(nil, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s-system\n", strings.TrimSuffix(c, ".yaml"))})
			}
			srv.AddRelease(owner, name, fakegh.Release{Tag: v, Assets: rel})
		}
	}
	return srv, len(list)
}

func TestMirror_AllMirrorsEveryProviderClusterctlKnows(t *testing.T) {
	srv, n := clusterctlUpstream(t, "v1.0.0", "v1.0.1")
	cfg := filepath.Join(t.TempDir(), "clusterctl.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var log bytes.Buffer
	sum, err := pipeline.Mirror(context.Background(), pipeline.MirrorOptions{All: true, Clusterctl: clusterctlConfig(t, cfg), To: mustParse(t, "file://"+dir),
		Sources: targets.Options{GitHub: github.Options{APIURL: srv.APIURL()}, HTTPClient: &http.Client{}, Retry: &publish.Retry{Attempts: 1}}, Concurrency: 8, Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(sum.Providers) != n || n < 60 {
		t.Fatalf("mirrored %d providers, clusterctl knows %d", len(sum.Providers), n)
	}
	for _, p := range sum.Providers {
		if len(p.Versions) != 1 || p.Versions[0].Version != "v1.0.1" {
			t.Errorf("%s: mirrored %+v, want v1.0.1 (latest)", p.Label, p.Versions)
		}
	}
	if sum.Verified != n {
		t.Errorf("clusterctl read back %d providers, want %d", sum.Verified, n)
	}
	// The cluster-api repository serves several providers: its releases
	// were listed once.
	if c := srv.Calls(fakegh.RouteListReleases); c > n {
		t.Errorf("%d release listings for %d providers", c, n)
	}
}
