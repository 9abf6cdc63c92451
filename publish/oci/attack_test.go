package oci

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/publishtest"
)

// TestReadOCI_ALayerThatStreamsWithoutEndIsCutOffAtItsDescriptorSize: a
// registry whose blob download never ends (go-containerregistry's
// in-process registry, its blob replies replaced by an endless stream
// once the release is pushed) is read no further than the size the
// manifest's descriptor gives, naming the file.
func TestReadOCI_ALayerThatStreamsWithoutEndIsCutOffAtItsDescriptorSize(t *testing.T) {
	var endless atomic.Bool
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	tr := &testRegistry{}
	tr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !endless.Load() || r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/blobs/sha256:") {
			reg.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusOK)
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(tr.Close)
	tr.host = strings.TrimPrefix(tr.URL, "http://")

	p := newPublisher(t, tr, nil)
	if _, err := p.Publish(context.Background(), exampleRelease(t)); err != nil {
		t.Fatal(err)
	}
	endless.Store(true)
	start := time.Now()
	_, err := publishtest.ReadBack(context.Background(), p, "infrastructure-example", "v0.1.0")
	var big *publish.TooLargeError
	if err == nil || !errors.As(err, &big) || !strings.Contains(err.Error(), "the server sends more than the ") {
		t.Fatalf("err = %v", err)
	}
	t.Logf("err: %v", err)
	if big.What == "" || big.Limit <= 0 || !strings.Contains(err.Error(), big.What+": ") {
		t.Errorf("the error names no file: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}
