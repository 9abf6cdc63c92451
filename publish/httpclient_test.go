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
