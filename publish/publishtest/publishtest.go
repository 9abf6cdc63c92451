// Package publishtest holds what the tests of every publish backend share:
// servers that redirect to another origin to catch a leaked credential, a
// retry policy that does not wait, and an upload hook that records every
// byte. It is for tests only.
package publishtest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// HeaderLog records every header a server saw.
type HeaderLog struct {
	mu   sync.Mutex
	seen []http.Header
}

func (l *HeaderLog) add(h http.Header) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, h.Clone())
}

func (l *HeaderLog) all() []http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]http.Header(nil), l.seen...)
}

// RedirectPair starts the trusted server, which redirects every request to
// a second server on another port; it returns both logs.
func RedirectPair(t *testing.T) (trusted string, first, second *HeaderLog) {
	first, second = &HeaderLog{}, &HeaderLog{}
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

// NoCredentials fails the test unless the server saw requests, none with a credential.
func NoCredentials(t *testing.T, who string, log *HeaderLog, token string) {
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

// SawToken fails the test when the server never saw the token: the test would prove nothing.
func SawToken(t *testing.T, log *HeaderLog, token string) {
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

// QuickRetry tries once and never waits.
func QuickRetry() *publish.Retry {
	return &publish.Retry{Attempts: 1, Sleep: func(context.Context, time.Duration) error { return nil }}
}

// RecordingHook records every upload attempt and the bytes read through it.
type RecordingHook struct {
	mu       sync.Mutex
	attempts map[string][]*bytes.Buffer
	Sizes    map[string]int64
}

// NewRecordingHook returns an empty hook.
func NewRecordingHook() *RecordingHook {
	return &RecordingHook{attempts: map[string][]*bytes.Buffer{}, Sizes: map[string]int64{}}
}

func (h *RecordingHook) Upload(name string, size int64, r io.Reader) io.Reader {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := &bytes.Buffer{}
	h.attempts[name] = append(h.attempts[name], b)
	h.Sizes[name] = size
	return io.TeeReader(r, &lockedWriter{mu: &h.mu, w: b})
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Seen returns, per upload name, the bytes of each attempt.
func (h *RecordingHook) Seen() map[string][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string][]string{}
	for name, as := range h.attempts {
		for _, b := range as {
			out[name] = append(out[name], b.String())
		}
	}
	return out
}

// ReadBack reads a provider version back through a source, as mirror and
// verify do; components names the components file, as a provider URL does.
func ReadBack(ctx context.Context, src publish.Source, label, version string, components ...string) (*release.Provider, error) {
	id, err := provider.ParseLabel(label)
	if err != nil {
		return nil, err
	}
	ref := publish.Ref{ID: id, Version: version}
	if len(components) > 0 {
		ref.Components = components[0]
	}
	return publish.Read(ctx, src, ref)
}

// ID is the provider a label names.
func ID(tb testing.TB, label string) provider.ID {
	tb.Helper()
	id, err := provider.ParseLabel(label)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}
