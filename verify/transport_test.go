package verify

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capirepo/capirepo/publish"
)

// gitLabWithStorage is a GitLab that serves a provider's package files by
// redirecting each to an object storage host, as GitLab does with object
// storage, and records the credentials each host was sent.
type gitLabWithStorage struct {
	p     map[string][]byte
	stall bool // GitLab sends nothing

	mu    sync.Mutex
	creds map[string][]string // host -> credential headers seen
}

func (g *gitLabWithStorage) RoundTrip(r *http.Request) (*http.Response, error) {
	g.mu.Lock()
	for _, h := range []string{"Authorization", "Private-Token"} {
		if v := r.Header.Get(h); v != "" {
			g.creds[r.URL.Host] = append(g.creds[r.URL.Host], h+": "+v)
		}
	}
	g.mu.Unlock()
	reply := func(status int, h http.Header, body string) *http.Response {
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}
	}
	switch r.URL.Host {
	case "gitlab.example.com":
		if g.stall {
			<-r.Context().Done()
			return nil, context.Cause(r.Context())
		}
		name := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		return reply(http.StatusFound, http.Header{"Location": {"https://storage.example.net/bucket/" + name + "?X-Amz-Signature=x"}}, ""), nil
	case "storage.example.net":
		data, ok := g.p[strings.TrimPrefix(r.URL.Path, "/bucket/")]
		if !ok {
			return reply(http.StatusNotFound, http.Header{}, "no such key"), nil
		}
		return reply(http.StatusOK, http.Header{}, string(data)), nil
	}
	return nil, fmt.Errorf("no host %s here", r.URL.Host)
}

// serveGitLab makes g the process's default transport, as clusterctl's
// GitLab reader uses it, and returns the provider URL of a project no other
// test reads (clusterctl caches files by URL).
func serveGitLab(t *testing.T, g *gitLabWithStorage) string {
	t.Helper()
	before := http.DefaultTransport
	http.DefaultTransport = g
	t.Cleanup(func() { http.DefaultTransport = before })
	return "https://gitlab.example.com/api/v4/projects/capi%2F" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "-") +
		"/packages/generic/infrastructure-example/v0.1.0/infrastructure-components.yaml"
}

// TestRepository_ClusterctlsRequestsKeepTheTokenOnItsHost: clusterctl's
// GitLab reader adds its token on every request its client makes, redirects
// included; under verify the object storage a download redirects to never
// gets it, GitLab does, and the transport before verify is put back.
func TestRepository_ClusterctlsRequestsKeepTheTokenOnItsHost(t *testing.T) {
	p := goodProvider(t)
	g := &gitLabWithStorage{p: map[string][]byte{}, creds: map[string][]string{}}
	var names []string
	for _, f := range p.Files {
		g.p[f.Name] = f.Data
		names = append(names, f.Name)
	}
	url := serveGitLab(t, g)
	rep, err := Repository(context.Background(), []Repo{{ID: exampleID, URL: url, Version: "v0.1.0", Files: names}},
		Options{Variables: map[string]string{"gitlab-access-token": "glpat-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Providers[0].Objects == 0 {
		t.Fatalf("nothing read: %+v", rep.Providers[0])
	}
	if got := g.creds["storage.example.net"]; len(got) > 0 {
		t.Errorf("the object storage was sent %v", got)
	}
	if got := g.creds["gitlab.example.com"]; len(got) == 0 || got[0] != "Authorization: Bearer glpat-secret" {
		t.Errorf("GitLab was sent %v, want the token", got)
	}
	if http.DefaultTransport != http.RoundTripper(g) {
		t.Error("the default transport was not put back")
	}
}

// TestRepository_ClusterctlsRequestsAreBounded: a GitLab that sends
// nothing fails the read after the client's timeout, not clusterctl's own
// 30s, and says what it waited for.
func TestRepository_ClusterctlsRequestsAreBounded(t *testing.T) {
	url := serveGitLab(t, &gitLabWithStorage{stall: true, creds: map[string][]string{}})
	start := time.Now()
	_, err := Repository(context.Background(), []Repo{{ID: exampleID, URL: url, Version: "v0.1.0"}},
		Options{HTTPClient: publish.NewHTTPClient(publish.HTTPOptions{Timeout: 200 * time.Millisecond})})
	if err == nil || !strings.Contains(err.Error(), "gitlab.example.com sent nothing for 200ms") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s", d)
	}
}
