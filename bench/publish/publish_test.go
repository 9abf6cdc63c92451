// Package publish_test measures capirepo's GitHub and GitLab publishers
// against the sequential uploads of the usual release jobs, on the fake
// servers with a fixed latency per request (traffic stays on 127.0.0.1).
//
// The timing comparison runs only when asked, and never fails on a timing:
//
//	CAPIREPO_BENCH_PUBLISH=1 go test ./bench/publish -run TestPublishTimes -v -count 1
//
// TestRepublish_UnchangedUploadsNothing always runs: it counts requests.
package publish_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/gitlab"

	gh "github.com/google/go-github/v82/github"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

const (
	owner, repo = "acme", "cluster-api-provider-bench"
	ghToken     = "ghp_benchTOKEN0123456789"
	glToken     = "glpat-bench-token"
	glHost      = "gitlab.example.com"
	glProject   = "acme/provider"
	glID        = 7
	version     = "v1.4.0"
	assets      = 25 // with checksums.txt
)

// benchRelease is a provider release of 25 assets: a 2 MB components file,
// metadata, 22 cluster templates of 4-40 KB, and checksums.txt.
func benchRelease(t testing.TB) *release.Release {
	p := &release.Provider{ID: provider.ID{Name: "bench", Type: clusterctlv1.InfrastructureProviderType},
		Version: version, ComponentsFile: "infrastructure-components.yaml"}
	add := func(name string, size int) {
		data := []byte(strings.Repeat(fmt.Sprintf("# %s\n", name), size/(len(name)+3)+1))
		if err := p.Add(name, data); err != nil {
			t.Fatal(err)
		}
	}
	add("infrastructure-components.yaml", 2<<20)
	add("metadata.yaml", 300)
	for i := range assets - 3 {
		add(fmt.Sprintf("cluster-template-flavor-%02d.yaml", i), 4<<10*(1+i%10))
	}
	rel := &release.Release{Version: version, Providers: []*release.Provider{p}}
	if n := len(p.Assets()); n != assets {
		t.Fatalf("release has %d assets, want %d", n, assets)
	}
	return rel
}

// meter delays every request by latency and counts requests and the bytes
// of request bodies.
type meter struct {
	next    http.RoundTripper
	latency time.Duration

	mu       sync.Mutex
	requests int
	sent     int64
	log      []string
}

func (m *meter) RoundTrip(r *http.Request) (*http.Response, error) {
	m.mu.Lock()
	m.requests++
	if r.ContentLength > 0 {
		m.sent += r.ContentLength
	}
	m.log = append(m.log, r.Method+" "+r.URL.Path)
	m.mu.Unlock()
	if m.latency > 0 {
		t := time.NewTimer(m.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return nil, r.Context().Err()
		}
	}
	return m.next.RoundTrip(r)
}

func (m *meter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests, m.sent, m.log = 0, 0, nil
}

// ghTarget is a fresh fake GitHub with the repository, and a metered client.
type ghTarget struct {
	srv *fakegh.Server
	m   *meter
}

func newGH(t testing.TB, latency time.Duration) *ghTarget {
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	srv.AddRepo(owner, repo, false)
	return &ghTarget{srv: srv, m: &meter{next: srv.Client().Transport, latency: latency}}
}

func (g *ghTarget) capirepo(t testing.TB, rel *release.Release) *publish.Summary {
	return g.capirepoN(t, rel, 0)
}

// capirepoN publishes with n parallel uploads (0: the publisher's default).
func (g *ghTarget) capirepoN(t testing.TB, rel *release.Release, n int) *publish.Summary {
	p, err := github.New(github.Options{Owner: owner, Repo: repo, Token: ghToken, Commitish: "main",
		APIURL: g.srv.APIURL(), HTTPClient: &http.Client{Transport: g.m}, Concurrency: n})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := p.Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// sequential is the usual job: create the release, then upload the assets
// one request after another from files on disk (go-github, as `gh release
// upload` does). ghLoop adds the release lookup each `gh release upload`
// invocation of a shell loop makes before its upload.
func (g *ghTarget) sequential(t testing.TB, dir string, rel *release.Release, ghLoop bool) {
	ctx := context.Background()
	c, err := gh.NewClient(&http.Client{Transport: g.m}).WithEnterpriseURLs(g.srv.APIURL(), g.srv.UploadURL())
	if err != nil {
		t.Fatal(err)
	}
	c = c.WithAuthToken(ghToken)
	r, _, err := c.Repositories.CreateRelease(ctx, owner, repo, &gh.RepositoryRelease{TagName: gh.Ptr(version), TargetCommitish: gh.Ptr("main")})
	if err != nil {
		t.Fatal(err)
	}
	files, err := rel.Flat()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if ghLoop {
			if r, _, err = c.Repositories.GetReleaseByTag(ctx, owner, repo, version); err != nil {
				t.Fatal(err)
			}
		}
		fh, err := os.Open(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = c.Repositories.UploadReleaseAsset(ctx, owner, repo, r.GetID(), &gh.UploadOptions{Name: f.Name}, fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

func (g *ghTarget) assetCount() int {
	rels := g.srv.Releases(owner, repo)
	if len(rels) != 1 {
		return -1
	}
	return len(rels[0].Assets)
}

// glTarget is a fresh fake GitLab with the project, and a metered client.
type glTarget struct {
	srv *fakegl.Server
	m   *meter
}

func newGL(t testing.TB, latency time.Duration) *glTarget {
	srv := fakegl.New(t)
	srv.AddProject(glID, glProject, false)
	srv.AddToken(glToken, fakegl.AccessToken)
	return &glTarget{srv: srv, m: &meter{next: srv.Transport(glHost), latency: latency}}
}

func (g *glTarget) capirepo(t testing.TB, rel *release.Release) *publish.Summary {
	p, err := gitlab.New(gitlab.Options{URL: "https://" + glHost, Project: glProject, Token: glToken,
		HTTPClient: &http.Client{Transport: g.m}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := p.Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// sequential is a curl loop: one PUT per file to the generic package.
func (g *glTarget) sequential(t testing.TB, rel *release.Release) {
	c := &http.Client{Transport: g.m}
	p := rel.Providers[0]
	for _, f := range p.Assets() {
		u := fmt.Sprintf("https://%s/api/v4/projects/%s/packages/generic/%s/%s/%s", glHost, url.PathEscape(glProject), p.Label(), version, f.Name)
		req, err := http.NewRequest(http.MethodPut, u, strings.NewReader(string(f.Data)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("PRIVATE-TOKEN", glToken)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("PUT %s: %s", f.Name, resp.Status)
		}
	}
}

func (g *glTarget) fileCount(label string) int {
	return len(g.srv.Files(glProject, label, version))
}

func writeAssets(t testing.TB, rel *release.Release) string {
	dir := t.TempDir()
	files, err := rel.Flat()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRepublish_UnchangedUploadsNothing: publishing the same release again
// sends no bytes, and makes at most 3 requests plus one per listing page.
func TestRepublish_UnchangedUploadsNothing(t *testing.T) {
	rel := benchRelease(t)
	t.Run("github", func(t *testing.T) {
		g := newGH(t, 0)
		g.capirepo(t, rel)
		if n := g.assetCount(); n != assets {
			t.Fatalf("first publish left %d assets, want %d", n, assets)
		}
		g.m.reset()
		g.capirepo(t, rel)
		pages := 1 // 25 assets fit one listing page
		if g.m.sent != 0 || g.m.requests > 3+pages {
			t.Errorf("re-publish sent %d bytes in %d requests, want 0 bytes in at most %d:\n%s", g.m.sent, g.m.requests, 3+pages, strings.Join(g.m.log, "\n"))
		}
		t.Logf("github re-publish: %d requests, %d bytes: %s", g.m.requests, g.m.sent, strings.Join(g.m.log, "; "))
	})
	t.Run("gitlab", func(t *testing.T) {
		g := newGL(t, 0)
		g.capirepo(t, rel)
		if n := g.fileCount(rel.Providers[0].Label()); n != assets {
			t.Fatalf("first publish left %d files, want %d", n, assets)
		}
		g.m.reset()
		g.capirepo(t, rel)
		pages := 2 // the package list and its file list, 25 files on one page
		if g.m.sent != 0 || g.m.requests > 3+pages {
			t.Errorf("re-publish sent %d bytes in %d requests, want 0 bytes in at most %d:\n%s", g.m.sent, g.m.requests, 3+pages, strings.Join(g.m.log, "\n"))
		}
		t.Logf("gitlab re-publish: %d requests, %d bytes: %s", g.m.requests, g.m.sent, strings.Join(g.m.log, "; "))
	})
}

type sample struct {
	name     string
	d        time.Duration
	requests int
}

// TestPublishTimes compares wall times, rounds alternating the contenders.
// It reports; it does not fail on a timing.
func TestPublishTimes(t *testing.T) {
	if os.Getenv("CAPIREPO_BENCH_PUBLISH") == "" {
		t.Skip("timing comparison: set CAPIREPO_BENCH_PUBLISH=1 (bash bench/run.sh does)")
	}
	rounds := 5
	if s := os.Getenv("ROUNDS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			rounds = n
		}
	}
	latency := 100 * time.Millisecond
	rel := benchRelease(t)
	dir := writeAssets(t, rel)
	contenders := []struct {
		name string
		run  func() int
	}{
		{"github capirepo", func() int {
			g := newGH(t, latency)
			g.capirepo(t, rel)
			check(t, "github capirepo", g.assetCount())
			return g.m.requests
		}},
		{"github capirepo -c 8", func() int {
			g := newGH(t, latency)
			g.capirepoN(t, rel, 8)
			check(t, "github capirepo -c 8", g.assetCount())
			return g.m.requests
		}},
		{"github capirepo -c 10", func() int {
			g := newGH(t, latency)
			g.capirepoN(t, rel, 10)
			check(t, "github capirepo -c 10", g.assetCount())
			return g.m.requests
		}},
		{"github sequential", func() int {
			g := newGH(t, latency)
			g.sequential(t, dir, rel, false)
			check(t, "github sequential", g.assetCount())
			return g.m.requests
		}},
		{"github gh-loop", func() int {
			g := newGH(t, latency)
			g.sequential(t, dir, rel, true)
			check(t, "github gh-loop", g.assetCount())
			return g.m.requests
		}},
		{"github re-publish", func() int {
			g := newGH(t, 0)
			g.capirepo(t, rel)
			g.m.reset()
			g.m.latency = latency
			g.capirepo(t, rel)
			return g.m.requests
		}},
		{"gitlab capirepo", func() int {
			g := newGL(t, latency)
			g.capirepo(t, rel)
			check(t, "gitlab capirepo", g.fileCount(rel.Providers[0].Label()))
			return g.m.requests
		}},
		{"gitlab sequential", func() int {
			g := newGL(t, latency)
			g.sequential(t, rel)
			check(t, "gitlab sequential", g.fileCount(rel.Providers[0].Label()))
			return g.m.requests
		}},
		{"gitlab re-publish", func() int {
			g := newGL(t, 0)
			g.capirepo(t, rel)
			g.m.reset()
			g.m.latency = latency
			g.capirepo(t, rel)
			return g.m.requests
		}},
	}
	var samples []sample
	for r := range rounds {
		for j := range contenders {
			c := contenders[(r+j)%len(contenders)]
			start := time.Now()
			n := c.run()
			samples = append(samples, sample{c.name, time.Since(start), n})
		}
	}
	type row struct {
		req    int
		med    time.Duration
		lo, hi time.Duration
	}
	rows := map[string]row{}
	for _, c := range contenders {
		var ds []time.Duration
		req := 0
		for _, s := range samples {
			if s.name == c.name {
				ds, req = append(ds, s.d), s.requests
			}
		}
		slices.Sort(ds)
		m := ds[len(ds)/2]
		if len(ds)%2 == 0 {
			m = (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
		}
		rows[c.name] = row{req, m, ds[0], ds[len(ds)-1]}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d assets (%d bytes), %s latency per request, %d rounds (contenders alternate)\n\n", assets, size(rel), latency, rounds)
	fmt.Fprintf(&b, "| contender | requests | wall median | wall min-max | / sequential |\n|---|---|---|---|---|\n")
	for _, c := range contenders {
		r := rows[c.name]
		base := rows[strings.Fields(c.name)[0]+" sequential"].med
		fmt.Fprintf(&b, "| %s | %d | %.2f s | %.2f - %.2f s | %.2fx |\n", c.name, r.req, r.med.Seconds(), r.lo.Seconds(), r.hi.Seconds(), float64(r.med)/float64(base))
	}
	fmt.Println(b.String())
}

func check(t testing.TB, name string, n int) {
	if n != assets {
		t.Fatalf("%s: %d assets on the server, want %d", name, n, assets)
	}
}

func size(rel *release.Release) int {
	n := 0
	for _, f := range rel.Providers[0].Assets() {
		n += len(f.Data)
	}
	return n
}
