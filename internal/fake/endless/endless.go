// Package endless is the body the fake GitHub and GitLab servers send when a
// test asks for an asset that never ends. It is for tests of bounded reads,
// not for anything a user runs.
package endless

import (
	"bytes"
	"net/http"
	"time"
)

// Stream answers 200 with a body that never ends: 32 KiB at a time as fast
// as the client reads, or with every > 0 one byte each every (a server that
// trickles, never silent long enough for an idle timeout). It returns when
// the client goes away.
func Stream(w http.ResponseWriter, r *http.Request, every time.Duration) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	if every > 0 {
		chunk = chunk[:1]
	}
	for {
		if _, err := w.Write(chunk); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
		if every > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(every):
			}
		} else if r.Context().Err() != nil {
			return
		}
	}
}
