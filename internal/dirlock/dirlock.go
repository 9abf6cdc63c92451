// Package dirlock is the one lock every capirepo writer takes on an output
// root (a dist folder, a local repository tree, an overrides folder, a dev
// repository): an advisory, exclusive lock on ROOT/.capirepo.lock, held by
// the kernel for the open file (flock on Unix, LockFileEx on Windows), so it
// is released when the process ends, however it ends.
//
// A second writer waits, says once whom it waits for, and gives up after
// the timeout. While a writer holds the lock no other capirepo writes below
// the root, so anything left in a staging folder there is a leftover of a
// run that is gone and may be removed.
package dirlock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// FileName is the lock file inside the root. clusterctl reads only
// <label>/<version>/ folders below a root, so it never sees the file.
const FileName = ".capirepo.lock"

// DefaultTimeout is how long a writer waits for another one (--lock-timeout).
const DefaultTimeout = 2 * time.Minute

// Options say how long to wait and whom to tell.
type Options struct {
	// Timeout is the longest wait; 0 means DefaultTimeout, a negative one
	// does not wait at all.
	Timeout time.Duration
	// Wait, when set, is told once that the run is waiting and for whom.
	Wait io.Writer
	// What the holder is doing, for the message: "publishing into" by default.
	What string
	// poll is the retry interval (tests shorten it); 0 means 100ms.
	poll time.Duration
}

// Lock is a held lock; Release it when the writes are done.
type Lock struct {
	fl   *flock.Flock
	Root string
}

// TimeoutError says the root stayed locked for the whole timeout.
type TimeoutError struct {
	Root    string
	Holder  string // "pid N", or "" when unknown
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	holder := "another capirepo"
	if e.Holder != "" {
		holder += " (" + e.Holder + ")"
	}
	return fmt.Sprintf("%s is still writing into %s after %s: wait for it to finish, or raise --lock-timeout", holder, e.Root, e.Timeout)
}

// Acquire creates root if needed and takes its lock, waiting up to the
// timeout for another holder. A cancelled ctx stops the wait.
func Acquire(ctx context.Context, root string, o Options) (*Lock, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(abs, FileName)
	fl := flock.New(path)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		timeout := o.Timeout
		if timeout == 0 {
			timeout = DefaultTimeout
		}
		holder := readHolder(path)
		if timeout < 0 {
			return nil, &TimeoutError{Root: abs, Holder: holder, Timeout: 0}
		}
		if o.Wait != nil {
			what := o.What
			if what == "" {
				what = "publishing into"
			}
			who := "another capirepo " + what + " " + abs
			if holder != "" {
				who += " (" + holder + ")"
			}
			fmt.Fprintf(o.Wait, "waiting for %s, up to %s...\n", who, timeout)
		}
		poll := o.poll
		if poll == 0 {
			poll = 100 * time.Millisecond
		}
		wctx, cancel := context.WithTimeout(ctx, timeout)
		ok, err = fl.TryLockContext(wctx, poll)
		cancel()
		if !ok {
			_ = fl.Close()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("waiting for the lock on %s: %w", abs, context.Cause(ctx))
			}
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("lock %s: %w", path, err)
			}
			if h := readHolder(path); h != "" {
				holder = h
			}
			return nil, &TimeoutError{Root: abs, Holder: holder, Timeout: timeout}
		}
	}
	// Say who holds it, for whoever waits next. The lock is on the file,
	// not its content, so rewriting it does not release anything.
	_ = os.WriteFile(path, []byte("pid "+strconv.Itoa(os.Getpid())+"\n"), 0o644)
	return &Lock{fl: fl, Root: abs}, nil
}

// Release gives the lock up. It is safe on a nil Lock and more than once.
func (l *Lock) Release() error {
	if l == nil || l.fl == nil {
		return nil
	}
	err := l.fl.Unlock()
	l.fl = nil
	return err
}

func readHolder(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(data))
	if !strings.HasPrefix(s, "pid ") || len(s) > 32 {
		return ""
	}
	return s
}
