package publish_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
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

// TestHTTPClient_ARetriedStallWaitsTwiceTheTimeoutInAll: one request of a
// stalled server, its retries and the pauses between them included, waits
// at most twice the timeout: the first attempt waits the timeout, the
// pause comes out of the rest, the last attempt gets what remains, and the
// error says the bound. The attempts left over are not made.
func TestHTTPClient_ARetriedStallWaitsTwiceTheTimeoutInAll(t *testing.T) {
	for _, headers := range []bool{false, true} {
		t.Run(map[bool]string{false: "no reply", true: "body stalls"}[headers], func(t *testing.T) {
			url := stalled(t, headers)
			const timeout = 150 * time.Millisecond
			c := publish.NewHTTPClient(publish.HTTPOptions{Timeout: timeout})
			var afters []time.Duration
			var pauses []time.Duration
			r := publish.Retry{Attempts: 6, Initial: 20 * time.Millisecond, Max: 20 * time.Millisecond,
				Sleep: func(ctx context.Context, d time.Duration) error { pauses = append(pauses, d); return nil }}
			err := r.Do(context.Background(), func(ctx context.Context) error {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				resp, err := c.Do(req)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					_ = resp.Body.Close()
				}
				var te *publish.TimeoutError
				if errors.As(err, &te) {
					afters = append(afters, te.After)
				}
				return err
			})
			if err == nil || !strings.Contains(err.Error(), "gave up after 2 attempts: one request waits at most 300ms in all, 2 times --timeout") {
				t.Fatalf("err = %v", err)
			}
			// 150ms of silence, a 20ms pause, and the 130ms left.
			if want := []time.Duration{timeout, 2*timeout - timeout - 20*time.Millisecond}; !slices.Equal(afters, want) || !slices.Equal(pauses, []time.Duration{20 * time.Millisecond}) {
				t.Errorf("attempts waited %v with pauses %v, want %v and [20ms]", afters, pauses, want)
			}
		})
	}
}
