package dirlock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSecondWaiterWaitsThenGetsTheLock(t *testing.T) {
	root := t.TempDir()
	first, err := Acquire(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var msg bytes.Buffer
	got := make(chan error, 1)
	go func() {
		l, err := Acquire(context.Background(), root, Options{Wait: &msg, poll: 5 * time.Millisecond})
		if err == nil {
			err = l.Release()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("second Acquire returned while the first held the lock: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("waiting for another capirepo publishing into %s (pid %d)", root, os.Getpid())
	if !strings.Contains(msg.String(), want) {
		t.Errorf("wait message %q, want it to contain %q", msg.String(), want)
	}
}

func TestTimeoutNamesHolder(t *testing.T) {
	root := t.TempDir()
	first, err := Acquire(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	_, err = Acquire(context.Background(), root, Options{Timeout: 50 * time.Millisecond, poll: 5 * time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Holder != fmt.Sprintf("pid %d", os.Getpid()) || !strings.Contains(err.Error(), "--lock-timeout") {
		t.Fatalf("err = %v, want a TimeoutError naming pid %d and --lock-timeout", err, os.Getpid())
	}
}

func TestCancelStopsTheWait(t *testing.T) {
	root := t.TempDir()
	first, err := Acquire(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err = Acquire(ctx, root, Options{Timeout: time.Minute, poll: 5 * time.Millisecond})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %s", d)
	}
}

func TestReleaseLetsTheNextOneIn(t *testing.T) {
	root := t.TempDir()
	for range 3 {
		l, err := Acquire(context.Background(), root, Options{Timeout: -1})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
		if err := l.Release(); err != nil {
			t.Fatalf("second Release: %v", err)
		}
	}
}

// TestReleaseLeavesNothingBehind: the lock file goes when the lock is
// released; a root Acquire made and the run left empty goes too, a root
// that holds something stays.
func TestReleaseLeavesNothingBehind(t *testing.T) {
	parent := t.TempDir()
	empty := filepath.Join(parent, "made", "out")
	l, err := Acquire(context.Background(), empty, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(empty, FileName)); err != nil {
		t.Fatalf("no lock file while held: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left in %s: %v", parent, entries)
	}

	written := filepath.Join(parent, "written")
	if l, err = Acquire(context.Background(), written, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(written, "a.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(written); len(entries) != 1 || entries[0].Name() != "a.yaml" {
		t.Errorf("left in %s: %v, want a.yaml only", written, entries)
	}

	existing := t.TempDir() // the user's folder: never removed
	if l, err = Acquire(context.Background(), existing, Options{}); err != nil {
		t.Fatal(err)
	}
	_ = l.Release()
	if _, err := os.Stat(existing); err != nil {
		t.Errorf("the existing root was removed: %v", err)
	}
}

// TestRemovingTheFileKeepsTheLockExclusive: writers that wait while the
// holder removes the lock file never hold the lock at once.
func TestRemovingTheFileKeepsTheLockExclusive(t *testing.T) {
	root := filepath.Join(t.TempDir(), "out")
	var holders, most atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 25 {
				l, err := Acquire(context.Background(), root, Options{poll: time.Millisecond})
				if err != nil {
					errs <- err
					return
				}
				n := holders.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(100 * time.Microsecond)
				holders.Add(-1)
				if err := l.Release(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m := most.Load(); m != 1 {
		t.Errorf("%d writers held the lock at once", m)
	}
}
