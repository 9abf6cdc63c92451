package cli

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

// UploadBars draws one progress bar per running upload on a terminal
// (github.com/vbauerster/mpb/v8: several bars at once, as GitHub uploads
// four assets at a time). While the bars are open, everything else the
// command writes to stderr goes through their writer, so those lines land
// above the bars instead of through them. A nil *UploadBars draws nothing.
type UploadBars struct {
	w       io.Writer // stderr
	p       *mpb.Progress
	refresh chan any
	stop    chan struct{}

	mu     sync.Mutex
	bars   map[string]*mpb.Bar // the latest attempt's bar of each upload
	closed bool
}

// Uploads is what a publisher's upload hook does (publish.UploadProgress,
// the same method): cli names it itself, as it sits below publish.
type Uploads interface {
	Upload(name string, size int64, r io.Reader) io.Reader
}

var _ Uploads = (*UploadBars)(nil)

// NewUploadBars returns the bars of a command's uploads, or nil (no bars,
// no hook) unless w is a terminal and the command prints text: never in a
// CI log, never with --output json.
func NewUploadBars(w io.Writer, text bool) *UploadBars {
	if !text || !IsTerminal(w) {
		return nil
	}
	return StartUploadBars(w)
}

// StartUploadBars draws bars on w, whatever w is.
func StartUploadBars(w io.Writer) *UploadBars {
	u := &UploadBars{w: w, refresh: make(chan any), stop: make(chan struct{}), bars: map[string]*mpb.Bar{}}
	u.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(100), mpb.WithManualRefresh(u.refresh))
	go func() {
		t := time.NewTicker(150 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				select {
				case u.refresh <- nil:
				case <-u.stop:
					return
				}
			case <-u.stop:
				return
			}
		}
	}()
	return u
}

// Hook is the publishers' UploadProgress: nil when there are no bars.
func (u *UploadBars) Hook() Uploads {
	if u == nil {
		return nil
	}
	return u
}

// Writer is w going through the bars while they are open, so lines land
// above them; w itself when there are none.
func (u *UploadBars) Writer(w io.Writer) io.Writer {
	if u == nil {
		return w
	}
	return barsWriter{u}
}

// Upload adds a bar for one upload attempt; it goes away when the upload is
// read to the end, or when the upload is tried again (a new bar).
func (u *UploadBars) Upload(name string, size int64, r io.Reader) io.Reader {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed || size <= 0 {
		return r
	}
	if old := u.bars[name]; old != nil {
		old.Abort(true)
	}
	bar, err := u.p.Add(size, mpb.BarStyle().Build(),
		mpb.BarRemoveOnComplete(),
		mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR)),
		mpb.AppendDecorators(decor.CountersKibiByte("% .1f / % .1f", decor.WCSyncSpace), decor.Percentage(decor.WCSyncSpace)))
	if err != nil {
		return r
	}
	u.bars[name] = bar
	pr, err := bar.ProxyReader(r)
	if err != nil {
		bar.Abort(true)
		return r
	}
	return pr
}

// Close takes the bars that are left (failed or stopped uploads) off the
// screen, writes the lines still held and stops drawing; later writes go
// to stderr directly. It may be called more than once.
func (u *UploadBars) Close() {
	if u == nil {
		return
	}
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return
	}
	u.closed = true
	bars := u.bars
	u.mu.Unlock()
	for _, b := range bars {
		b.Abort(true)
	}
	close(u.stop)
	// One last drawing writes the lines written since the last one (unless
	// drawing stopped on an error).
	select {
	case u.refresh <- nil:
	case <-time.After(time.Second):
	}
	u.p.Wait()
}

// barsWriter writes lines above the bars, or to stderr once they are closed.
type barsWriter struct{ u *UploadBars }

func (w barsWriter) Write(b []byte) (int, error) {
	w.u.mu.Lock()
	closed := w.u.closed
	w.u.mu.Unlock()
	if !closed {
		if n, err := w.u.p.Write(b); err == nil {
			return n, nil
		}
	}
	return w.u.w.Write(b)
}

// IsTerminal says whether w is a terminal, where progress rewrites one line
// and uploads get bars; not a file, a pipe or /dev/null.
func IsTerminal(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok { // the secrets mask
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
