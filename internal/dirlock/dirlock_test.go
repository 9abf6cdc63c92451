package dirlock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
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
