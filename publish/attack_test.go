package publish_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/capirepo/capirepo/publish"
)

// endless serves a body that never ends, a byte every every (0: as fast as
// it is read).
func endless(t *testing.T, every time.Duration) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		chunk := []byte(strings.Repeat("x", 32<<10))
		if every > 0 {
			chunk = chunk[:1]
		}
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			fl.Flush()
			time.Sleep(every)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/release/metadata.yaml"
}

func get(t *testing.T, ctx context.Context, hc *http.Client, url string) error {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	_, err = io.ReadAll(resp.Body)
	return err
}

// TestHTTPClient_AReplyIsCutOffAtTheSizeListed: a reply that streams
// without end through capirepo's client stops at the size ReadLimit gives,
// naming the file.
func TestHTTPClient_AReplyIsCutOffAtTheSizeListed(t *testing.T) {
	hc := publish.NewHTTPClient(publish.HTTPOptions{Timeout: 5 * time.Second})
	start := time.Now()
	err := get(t, publish.ReadLimit(context.Background(), "metadata.yaml", 1000), hc, endless(t, 0))
	var big *publish.TooLargeError
	if !errors.As(err, &big) || err.Error() != "metadata.yaml: the server sends more than the 1000 bytes it lists for it: stopped reading (a broken or hostile server)" {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s", d)
	}
}

// TestHTTPClient_AReplyThatTricklesIsCutOffAfterTheTransferBound: a reply
// that never pauses for the timeout, but never ends, stops after
// TransferTimeFactor times it (the clusterctl read-back's client too).
func TestHTTPClient_AReplyThatTricklesIsCutOffAfterTheTransferBound(t *testing.T) {
	const timeout = 100 * time.Millisecond
	for name, hc := range map[string]*http.Client{
		"publishers' client": publish.NewHTTPClient(publish.HTTPOptions{Timeout: timeout}),
		"bounded transport":  {Transport: publish.Bounded(http.DefaultTransport, publish.NewHTTPClient(publish.HTTPOptions{Timeout: timeout}))},
	} {
		start := time.Now()
		err := get(t, context.Background(), hc, endless(t, timeout/5))
		var slow *publish.TransferTimeoutError
		if !errors.As(err, &slow) || !strings.Contains(err.Error(), "/release/metadata.yaml: the reply was still arriving after 1s (10 times --timeout): stopped reading") {
			t.Fatalf("%s: err = %v", name, err)
		}
		if d := time.Since(start); d < 10*timeout || d > 10*timeout+2*time.Second {
			t.Errorf("%s: took %s", name, d)
		}
	}
}
