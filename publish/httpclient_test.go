package publish_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capirepo/capirepo/publish"
)

// headerLog records every header a server saw.
type headerLog struct {
	mu   sync.Mutex
	seen []http.Header
}

func (l *headerLog) add(h http.Header) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, h.Clone())
}

func (l *headerLog) all() []http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]http.Header(nil), l.seen...)
}

// redirectPair starts the trusted server, which redirects every request to
// a second server on another port; it returns both logs.
func redirectPair(t *testing.T) (trusted string, first, second *headerLog) {
	first, second = &headerLog{}, &headerLog{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		second.add(r.Header)
		http.Error(w, `{"message":"404 Not found"}`, http.StatusNotFound)
	}))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first.add(r.Header)
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, first, second
}

func noCredentials(t *testing.T, who string, log *headerLog, token string) {
	t.Helper()
	seen := log.all()
	if len(seen) == 0 {
		t.Fatalf("%s was never asked: the redirect was not followed", who)
	}
	for _, h := range seen {
		for name, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, token) || strings.EqualFold(name, "Authorization") ||
					strings.EqualFold(name, "Private-Token") || strings.EqualFold(name, "Job-Token") {
					t.Errorf("%s saw a credential: %s: %s", who, name, v)
				}
			}
		}
	}
}

func sawToken(t *testing.T, log *headerLog, token string) {
	t.Helper()
	for _, h := range log.all() {
		for _, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, token) {
					return
				}
			}
		}
	}
	t.Errorf("the trusted server never saw the token: the test proves nothing")
}

func quickRetry() *publish.Retry {
	return &publish.Retry{Attempts: 1, Sleep: func(context.Context, time.Duration) error { return nil }}
}

func TestPublishGitHub_RedirectToAnotherPortCarriesNoToken(t *testing.T) {
	api, first, second := redirectPair(t)
	g, err := publish.NewGitHub(publish.GitHubOptions{Owner: "o", Repo: "r", APIURL: api + "/api/v3/",
		Token: testToken, Retry: quickRetry(), HTTPClient: publish.NewHTTPClient(publish.HTTPOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = g.Publish(context.Background(), fixture(t, "v0.1.0"))
	sawToken(t, first, testToken)
	noCredentials(t, "the second server", second, testToken)
}

func TestPublishGitLab_RedirectToAnotherPortCarriesNoToken(t *testing.T) {
	const token = "glpat-redirect-s3cret-0123"
	for _, tt := range []publish.GitLabTokenType{publish.GitLabPrivateToken, publish.GitLabJobToken, publish.GitLabBearerToken} {
		t.Run(string(tt), func(t *testing.T) {
			base, first, second := redirectPair(t)
			g, err := publish.NewGitLab(publish.GitLabOptions{URL: base, Project: "group/project", Token: token, TokenType: tt,
				Retry: quickRetry(), HTTPClient: publish.NewHTTPClient(publish.HTTPOptions{})})
			if err != nil {
				t.Fatal(err)
			}
			_, _ = g.Publish(context.Background(), glRelease(t, "v0.1.0", exampleFiles("v0.1.0")))
			sawToken(t, first, token)
			noCredentials(t, "the second server", second, token)
		})
	}
}

func TestNewGitLab_UserinfoInURLIsDroppedAndWarned(t *testing.T) {
	g, err := publish.NewGitLab(publish.GitLabOptions{URL: "https://user:pa55word@gitlab.example.com", Project: "g/p", Token: "glpat-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	warned := false
	for _, w := range g.Warnings() {
		if strings.Contains(w, "pa55word") {
			t.Errorf("warning prints the password: %s", w)
		}
		if strings.Contains(w, "GITLAB_ACCESS_TOKEN") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning about the userinfo: %v", g.Warnings())
	}
}

// stalled accepts connections and answers nothing until the test ends.
func stalled(t *testing.T, headers bool) string {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if headers {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	return srv.URL
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestHTTPClient_StalledServerFailsWithinTheTimeoutAndSaysWhatItWaitsFor(t *testing.T) {
	for _, headers := range []bool{false, true} {
		name := "no reply"
		if headers {
			name = "body stalls"
		}
		t.Run(name, func(t *testing.T) {
			url := stalled(t, headers)
			var progress lockedBuffer
			c := publish.NewHTTPClient(publish.HTTPOptions{Timeout: 400 * time.Millisecond, WaitNotice: 100 * time.Millisecond, Progress: &progress})
			start := time.Now()
			resp, err := c.Get(url)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				_ = resp.Body.Close()
			}
			if err == nil {
				t.Fatal("a stalled server answered")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("gave up after %s, want about the 400ms timeout", d)
			}
			if ok, _ := publish.IsRetriable(err); !ok {
				t.Errorf("a stall is not retried: %v", err)
			}
			host := strings.TrimPrefix(url, "http://")
			if !strings.Contains(progress.String(), "waiting for "+host) {
				t.Errorf("progress %q does not say what it waits for", progress.String())
			}
		})
	}
}

// slowReader yields one byte every step: a slow link that keeps moving.
type slowReader struct {
	left int
	step time.Duration
}

func (r *slowReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	time.Sleep(r.step)
	r.left--
	p[0] = 'x'
	return 1, nil
}

// TestHTTPClient_SlowUploadThatKeepsMovingIsNotCut: the timeout bounds a
// pause, not the transfer: an upload lasting 6 timeouts succeeds.
func TestHTTPClient_SlowUploadThatKeepsMovingIsNotCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		if n != 12 {
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	c := publish.NewHTTPClient(publish.HTTPOptions{Timeout: 200 * time.Millisecond})
	req, err := http.NewRequest(http.MethodPut, srv.URL, &slowReader{left: 12, step: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("a slow upload that kept moving was cut: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d", resp.StatusCode)
	}
}

func TestHTTPClient_CancelStopsAStalledRequestAtOnce(t *testing.T) {
	url := stalled(t, false)
	c := publish.NewHTTPClient(publish.HTTPOptions{Timeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	start := time.Now()
	_, err := c.Do(req)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %s", d)
	}
}
