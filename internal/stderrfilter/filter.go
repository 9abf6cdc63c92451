package stderrfilter

import (
	"bytes"
	"sync"
)

// Filter drops exact occurrences of some byte strings from what is written to
// file descriptor 2 while it is held. One Filter is meant per set of
// messages; holds nest and may come from several goroutines at once.
type Filter struct {
	drop [][]byte

	mu    sync.Mutex
	holds int
	s     *session // nil when not intercepting (none held, or the start failed)
}

// New returns a Filter that drops each of drop (each written whole, in one
// write of at most 4096 bytes, as fmt.Fprintf does for a short line).
func New(drop ...string) *Filter {
	f := &Filter{}
	for _, d := range drop {
		if d != "" {
			f.drop = append(f.drop, []byte(d))
		}
	}
	return f
}

// Hold starts dropping the messages, unless another hold already has, and
// returns the function that ends this hold; call it once, deferred, so a
// panic or a cancelled run also restores standard error. When interception
// cannot start, the messages print as they would without the Filter.
func (f *Filter) Hold() (release func()) {
	f.mu.Lock()
	f.holds++
	if f.holds == 1 {
		f.s, _ = start(f.drop)
	}
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.holds--
			if f.holds == 0 && f.s != nil {
				f.s.stop()
				f.s = nil
			}
		})
	}
}

// dropAll returns chunk without any exact occurrence of the messages.
func dropAll(chunk []byte, drop [][]byte) []byte {
	for _, d := range drop {
		if bytes.Contains(chunk, d) {
			chunk = bytes.ReplaceAll(chunk, d, nil)
		}
	}
	return chunk
}
