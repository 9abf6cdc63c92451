package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var testNow = time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)

// recordSleeps returns a Retry that records its waits instead of sleeping.
func recordSleeps(waits *[]time.Duration) Retry {
	return Retry{
		Attempts: 4,
		Initial:  time.Second,
		Max:      3 * time.Second,
		MaxWait:  time.Minute,
		Now:      func() time.Time { return testNow },
		Sleep: func(_ context.Context, d time.Duration) error {
			*waits = append(*waits, d)
			return nil
		},
	}
}

func TestRetry_WaitsAndAttempts(t *testing.T) {
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	status := func(code int, hdr http.Header) error {
		return StatusErrorFrom(code, hdr, testNow, fmt.Errorf("HTTP %d", code))
	}
	tests := []struct {
		name      string
		errs      []error // returned by successive attempts; then success
		wantWaits []time.Duration
		wantErr   bool
		wantCalls int
	}{
		{name: "success at once", wantCalls: 1},
		{name: "5xx then success backs off", errs: []error{status(502, nil), status(503, nil)},
			wantWaits: []time.Duration{time.Second, 2 * time.Second}, wantCalls: 3},
		{name: "backoff is capped", errs: []error{status(500, nil), status(500, nil), status(500, nil)},
			wantWaits: []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, wantCalls: 4},
		{name: "gives up after attempts", errs: []error{status(500, nil), status(500, nil), status(500, nil), status(500, nil)},
			wantWaits: []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, wantErr: true, wantCalls: 4},
		{name: "429 Retry-After seconds", errs: []error{status(429, h("Retry-After", "7"))},
			wantWaits: []time.Duration{7 * time.Second}, wantCalls: 2},
		{name: "Retry-After HTTP date", errs: []error{status(503, h("Retry-After", testNow.Add(9*time.Second).Format(http.TimeFormat)))},
			wantWaits: []time.Duration{9 * time.Second}, wantCalls: 2},
		{name: "secondary rate limit 403 with Retry-After", errs: []error{status(403, h("Retry-After", "20"))},
			wantWaits: []time.Duration{20 * time.Second}, wantCalls: 2},
		{name: "primary rate limit 403 waits until reset", errs: []error{status(403, h("X-RateLimit-Remaining", "0",
			"X-RateLimit-Reset", fmt.Sprint(testNow.Add(30*time.Second).Unix())))},
			wantWaits: []time.Duration{31 * time.Second}, wantCalls: 2},
		{name: "server wait above MaxWait fails", errs: []error{status(429, h("Retry-After", "3600"))},
			wantErr: true, wantCalls: 1},
		{name: "plain 403 is permanent", errs: []error{status(403, nil)}, wantErr: true, wantCalls: 1},
		{name: "401 is permanent", errs: []error{status(401, nil)}, wantErr: true, wantCalls: 1},
		{name: "422 is permanent", errs: []error{status(422, nil)}, wantErr: true, wantCalls: 1},
		{name: "connection reset retried", errs: []error{&url.Error{Op: "Post", URL: "x", Err: syscall.ECONNRESET}},
			wantWaits: []time.Duration{time.Second}, wantCalls: 2},
		{name: "EOF mid reply retried", errs: []error{fmt.Errorf("upload: %w", io.ErrUnexpectedEOF)},
			wantWaits: []time.Duration{time.Second}, wantCalls: 2},
		{name: "Retriable with wait", errs: []error{Retriable(errors.New("busy"), 5*time.Second)},
			wantWaits: []time.Duration{5 * time.Second}, wantCalls: 2},
		{name: "Permanent stops", errs: []error{Permanent(status(500, nil))}, wantErr: true, wantCalls: 1},
		{name: "unknown error is permanent", errs: []error{errors.New("bad input")}, wantErr: true, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var waits []time.Duration
			calls := 0
			err := recordSleeps(&waits).Do(context.Background(), func(context.Context) error {
				calls++
				if calls <= len(tt.errs) {
					return tt.errs[calls-1]
				}
				return nil
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantWaits, waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetry_PermanentErrorIsUnwrapped(t *testing.T) {
	base := errors.New("boom")
	err := Retry{}.Do(context.Background(), func(context.Context) error { return Permanent(base) })
	if err != base { //nolint:errorlint // the very error, not one that wraps it
		t.Fatalf("err = %#v, want the wrapped error itself", err)
	}
}

func TestRetry_StopsWhenContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Retry{Sleep: func(context.Context, time.Duration) error { t.Fatal("slept after cancel"); return nil }}.
		Do(ctx, func(context.Context) error {
			calls++
			cancel()
			return StatusErrorFrom(500, nil, testNow, errors.New("HTTP 500"))
		})
	if err == nil || !errors.Is(err, context.Canceled) && calls != 1 {
		t.Fatalf("err = %v, calls = %d", err, calls)
	}
	if calls != 1 {
		t.Errorf("calls = %d, want 1", calls)
	}
}

func TestRetry_DefaultJitterStaysWithinBounds(t *testing.T) {
	r := DefaultRetry()
	var waits []time.Duration
	r.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	calls := 0
	_ = r.Do(context.Background(), func(context.Context) error {
		calls++
		if calls < 4 {
			return StatusErrorFrom(500, nil, testNow, errors.New("HTTP 500"))
		}
		return nil
	})
	for i, w := range waits {
		base := time.Second << i
		if w < base*3/4 || w > base*5/4 {
			t.Errorf("wait %d = %s, want %s ±25%%", i, w, base)
		}
	}
}
