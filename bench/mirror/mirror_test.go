// Package mirror_test measures capirepo mirror against a sequential
// mirror script: every provider of clusterctl's own list, three versions
// each, from the fake GitHub with a fixed latency per request, into a
// folder (traffic stays on 127.0.0.1). It runs only when asked and never
// fails on a timing:
//
//	CAPIREPO_BENCH_MIRROR=1 go test ./bench/mirror -run TestMirrorTimes -v -count 1
package mirror_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gh "github.com/google/go-github/v82/github"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	capigh "github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/targets"
)

const latency = 100 * time.Millisecond

var versions = []string{"v1.0.0", "v1.0.1", "v1.0.2"}

// slow delays every request, as a distant server does, and counts them.
type slow struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (s *slow) RoundTrip(r *http.Request) (*http.Response, error) {
	s.n.Add(1)
	time.Sleep(latency)
	return s.next.RoundTrip(r)
}

type providerURL struct{ label, owner, repo, components string }

// upstream serves every provider clusterctl knows, three releases each
// (metadata.yaml, every components file of the repository, a template).
func upstream(t *testing.T) (*fakegh.Server, []providerURL, string) {
	cfgFile := filepath.Join(t.TempDir(), "clusterctl.yaml")
	if err := os.WriteFile(cfgFile, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.New(context.Background(), cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	list, err := cfg.Providers().List()
	if err != nil {
		t.Fatal(err)
	}
	srv := fakegh.New(t)
	files := map[string][]string{}
	var repos []string
	var out []providerURL
	for _, p := range list {
		seg := strings.Split(p.URL(), "/")
		key := seg[3] + "/" + seg[4]
		if _, ok := files[key]; !ok {
			repos = append(repos, key)
		}
		files[key] = append(files[key], path.Base(p.URL()))
		out = append(out, providerURL{label: p.ManifestLabel(), owner: seg[3], repo: seg[4], components: path.Base(p.URL())})
	}
	md := []byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 1\n  minor: 0\n  contract: v1beta2\n")
	for _, key := range repos {
		owner, name, _ := strings.Cut(key, "/")
		srv.AddRepo(owner, name, false)
		for _, v := range versions {
			assets := []fakegh.Asset{{Name: "metadata.yaml", Data: md},
				{Name: "cluster-template.yaml", Data: []byte("kind: Cluster\n")},
				{Name: "checksums.txt", Data: []byte("not mirrored\n")}}
			for _, c := range files[key] {
				assets = append(assets, fakegh.Asset{Name: c, Data: []byte(strings.Repeat("# components of "+c+"\n", 20000))})
			}
			srv.AddRelease(owner, name, fakegh.Release{Tag: v, Assets: assets})
		}
	}
	return srv, out, cfgFile
}

// sequential is what a mirror script does: for each provider, list the
// releases, and for each of the three newest get the release and download
// each file clusterctl reads, one request after the other.
func sequential(ctx context.Context, hc *http.Client, api string, provs []providerURL, dir string) error {
	c, err := gh.NewClient(hc).WithEnterpriseURLs(api, api)
	if err != nil {
		return err
	}
	for _, p := range provs {
		rels, _, err := c.Repositories.ListReleases(ctx, p.owner, p.repo, &gh.ListOptions{PerPage: 100})
		if err != nil {
			return err
		}
		var tags []string
		for _, r := range rels {
			if !r.GetDraft() {
				tags = append(tags, r.GetTagName())
			}
		}
		slices.Sort(tags)
		for _, tag := range tags[max(0, len(tags)-3):] {
			r, _, err := c.Repositories.GetReleaseByTag(ctx, p.owner, p.repo, tag)
			if err != nil {
				return err
			}
			out := filepath.Join(dir, p.label, tag)
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			for _, a := range r.Assets {
				n := a.GetName()
				if n != "metadata.yaml" && n != p.components && !strings.HasPrefix(n, "cluster-template") {
					continue
				}
				rc, _, err := c.Repositories.DownloadReleaseAsset(ctx, p.owner, p.repo, a.GetID(), hc)
				if err != nil {
					return err
				}
				data, err := io.ReadAll(rc)
				_ = rc.Close()
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(out, n), data, 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func TestMirrorTimes(t *testing.T) {
	if os.Getenv("CAPIREPO_BENCH_MIRROR") == "" {
		t.Skip("set CAPIREPO_BENCH_MIRROR=1 to measure (about two minutes)")
	}
	ctx := context.Background()
	srv, provs, cfg := upstream(t)
	t.Logf("%d providers x %d versions, %s per request", len(provs), len(versions), latency)

	tr := &slow{next: &http.Transport{MaxIdleConnsPerHost: 64}}
	hc := &http.Client{Transport: tr}
	start := time.Now()
	if err := sequential(ctx, hc, srv.APIURL(), provs, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	seq, seqReqs := time.Since(start), tr.n.Swap(0)
	t.Logf("sequential script:      %6.1fs  %4d requests", seq.Seconds(), seqReqs)

	for _, conc := range []int{4, 16} {
		var reqs []string
		for _, p := range provs {
			reqs = append(reqs, p.label+":latest-2")
		}
		dir := t.TempDir()
		to, err := targets.Parse("file://" + dir)
		if err != nil {
			t.Fatal(err)
		}
		sources := targets.Options{GitHub: capigh.Options{APIURL: srv.APIURL()}, HTTPClient: hc, Retry: &publish.Retry{Attempts: 1}}
		start := time.Now()
		sum, err := pipeline.Mirror(ctx, pipeline.MirrorOptions{Requests: reqs, Clusterctl: clusterctlConfig(t, cfg), To: to,
			Sources: sources, Concurrency: conc, NoVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		d, n := time.Since(start), tr.n.Swap(0)
		mirrored := 0
		for _, p := range sum.Providers {
			mirrored += len(p.Versions)
		}
		t.Logf("capirepo --concurrency %2d: %6.1fs  %4d requests  %d versions  %.2fx of sequential", conc, d.Seconds(), n, mirrored, d.Seconds()/seq.Seconds())

		start = time.Now()
		if _, err := pipeline.Mirror(ctx, pipeline.MirrorOptions{Requests: reqs, Clusterctl: clusterctlConfig(t, cfg), To: to,
			Sources: sources, Concurrency: conc, NoVerify: true}); err != nil {
			t.Fatal(err)
		}
		t.Logf("  re-run (nothing to copy): %6.1fs  %4d requests", time.Since(start).Seconds(), tr.n.Swap(0))
	}
}

// clusterctlConfig opens the clusterctl config file as cmd opens the
// user's.
func clusterctlConfig(t testing.TB, file string) pipeline.Clusterctl {
	t.Helper()
	c, err := config.New(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.Clusterctl{File: file, Config: c}
}
