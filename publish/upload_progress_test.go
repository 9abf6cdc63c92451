package publish_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/publish"
)

// recordingHook records every upload attempt and the bytes read through it.
type recordingHook struct {
	mu       sync.Mutex
	attempts map[string][]*bytes.Buffer
	sizes    map[string]int64
}

func newRecordingHook() *recordingHook {
	return &recordingHook{attempts: map[string][]*bytes.Buffer{}, sizes: map[string]int64{}}
}

func (h *recordingHook) Upload(name string, size int64, r io.Reader) io.Reader {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := &bytes.Buffer{}
	h.attempts[name] = append(h.attempts[name], b)
	h.sizes[name] = size
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

// seen returns, per upload name, the bytes of each attempt.
func (h *recordingHook) seen() map[string][]string {
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

func TestUploadProgress_GitHubSeesEveryByteOfEveryAssetOnce(t *testing.T) {
	e := newEnv(t, false)
	rel := fixture(t, "v0.1.0")
	hook := newRecordingHook()
	if _, err := e.publisher(t, 0, func(o *publish.GitHubOptions) { o.UploadProgress = hook }).Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
	files, err := rel.Flat()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for _, f := range files {
		want[f.Name] = []string{string(f.Data)}
	}
	if diff := cmp.Diff(want, hook.seen()); diff != "" {
		t.Errorf("bytes the hook saw per asset and attempt (-want +got):\n%s", diff)
	}
	for _, f := range files {
		if hook.sizes[f.Name] != int64(len(f.Data)) {
			t.Errorf("%s: size %d, want %d", f.Name, hook.sizes[f.Name], len(f.Data))
		}
	}
	// What GitHub holds is what went through the hook.
	if diff := cmp.Diff(wantState(t, rel, false), e.state()); diff != "" {
		t.Errorf("server state (-want +got):\n%s", diff)
	}
}

func TestUploadProgress_GitLabSeesEveryByteOfEveryFileOnceAndAgainOnARetry(t *testing.T) {
	f := newGLFixture(t)
	rel := glRelease(t, "v0.1.0", exampleFiles("1"))
	// The second upload fails once: it is sent again.
	f.srv.Fail(fakegl.Fault{Route: fakegl.RouteUpload, Nth: 2, Status: http.StatusServiceUnavailable})
	hook := newRecordingHook()
	if _, err := f.publish(t, rel, func(o *publish.GitLabOptions) { o.UploadProgress = hook }); err != nil {
		t.Fatal(err)
	}
	p := rel.Providers[0]
	seen := hook.seen()
	retried := 0
	for _, a := range p.Assets() {
		name := p.Label() + "/v0.1.0/" + a.Name
		attempts := seen[name]
		if len(attempts) == 2 {
			retried++
		}
		if len(attempts) == 0 || len(attempts) > 2 || attempts[len(attempts)-1] != string(a.Data) {
			t.Errorf("%s: the hook saw %q, want its %d bytes once (twice when retried)", name, attempts, len(a.Data))
		}
		if hook.sizes[name] != int64(len(a.Data)) {
			t.Errorf("%s: size %d, want %d", name, hook.sizes[name], len(a.Data))
		}
		delete(seen, name)
	}
	if retried != 1 {
		t.Errorf("%d uploads went through the hook twice, want the one that failed once", retried)
	}
	if len(seen) != 0 {
		t.Errorf("the hook saw uploads that are no files of the release: %v", seen)
	}
	if diff := cmp.Diff(wantContents(p), f.srv.Contents(glProject, p.Label(), "v0.1.0")); diff != "" {
		t.Errorf("package (-want +got):\n%s", diff)
	}
}
