package dirlock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/capirepo/capirepo/internal/option"
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
	// created is the outermost folder Acquire made for Root, or "".
	created string
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
	return fmt.Sprintf("%s is still writing into %s after %s: wait for it to finish, or raise %s", holder, e.Root, e.Timeout, option.LockTimeout)
}

// Acquire creates root if needed and takes its lock, waiting up to the
// timeout for another holder. A cancelled ctx stops the wait.
func Acquire(ctx context.Context, root string, o Options) (*Lock, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	created := firstMissing(abs)
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	// The whole wait, retries after a holder removed the file included.
	wctx, cancel := context.WithTimeout(ctx, max(timeout, 0))
	defer cancel()
	path := filepath.Join(abs, FileName)
	told := false
	for {
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, err
		}
		fl := flock.New(path)
		ok, err := fl.TryLock()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) { // the root was removed under us: make it again
				continue
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !ok {
			holder := readHolder(path)
			if timeout < 0 {
				return nil, &TimeoutError{Root: abs, Holder: holder, Timeout: 0}
			}
			if o.Wait != nil && !told {
				told = true
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
			ok, err = fl.TryLockContext(wctx, poll)
			if !ok && errors.Is(err, fs.ErrNotExist) && wctx.Err() == nil { // the holder removed the root it made
				_ = fl.Close()
				continue
			}
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
		// A holder removes the file when it releases the lock, so the lock
		// just taken may be on a file no longer at path, which a third
		// writer may have made anew and locked: then try again on that one.
		if held(fl, path) {
			// Say who holds it, for whoever waits next. The lock is on the
			// file, not its content, so rewriting it does not release anything.
			_ = os.WriteFile(path, []byte("pid "+strconv.Itoa(os.Getpid())+"\n"), 0o644)
			return &Lock{fl: fl, Root: abs, created: created}, nil
		}
		_ = fl.Close()
		if wctx.Err() != nil {
			return nil, &TimeoutError{Root: abs, Timeout: timeout}
		}
	}
}

// held says whether the file fl locked is still the one at path.
func held(fl *flock.Flock, path string) bool {
	locked, err := fl.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(path)
	return err == nil && os.SameFile(locked, now)
}

// firstMissing returns the outermost folder of dir that does not exist
// yet ("" when dir exists), so that Release removes what Acquire made, if
// the run left it empty.
func firstMissing(dir string) string {
	missing := ""
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			return missing
		}
		missing = d
		if filepath.Dir(d) == d {
			return missing
		}
	}
}

// Release gives the lock up and leaves nothing in the user's folder: the
// lock file is removed while the lock is held (a writer waiting on it then
// sees the file gone and locks the one at the path instead), and the root,
// when Acquire made it and the run wrote nothing into it, is removed too.
// Where an open file cannot be removed (Windows), the lock file stays. It
// is safe on a nil Lock and more than once.
func (l *Lock) Release() error {
	if l == nil || l.fl == nil {
		return nil
	}
	_ = os.Remove(filepath.Join(l.Root, FileName))
	err := l.fl.Unlock()
	_ = l.fl.Close()
	l.fl = nil
	if l.created != "" {
		for d := l.Root; ; d = filepath.Dir(d) {
			if os.Remove(d) != nil || d == l.created { // not empty: another writer's, or something written
				break
			}
		}
	}
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
