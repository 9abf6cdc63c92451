//go:build unix

package stderrfilter

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

const (
	childEnv = "STDERRFILTER_TEST_CHILD"
	notice   = "# Warning: 'bases' is deprecated.\n"
)

// child runs the test binary again with only the test named by scenario,
// which acts when childEnv is set; it returns the child's stdout and stderr.
func child(t *testing.T, scenario string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+scenario+"$", "-test.v=false")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func stat2(t *testing.T) unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(2, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestHold_DropsOnlyTheMessagesAndRestoresDescriptor2: while held, the
// notices written to descriptor 2 (by os.Stderr, a raw write, a child
// process) are dropped and everything else reaches the real stderr in
// order; after the last release descriptor 2 is the original file again and
// nothing written before is missing.
func TestHold_DropsOnlyTheMessagesAndRestoresDescriptor2(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		before := stat2(t)
		f := New(notice)
		release := f.Hold()
		inner := f.Hold() // nested: the first release must not end it
		fmt.Fprint(os.Stderr, "one\n")
		fmt.Fprint(os.Stderr, notice)
		inner()
		inner() // a second call of one release does nothing
		if _, err := unix.Write(2, []byte(notice+"two\n"+notice)); err != nil {
			t.Fatal(err)
		}
		sh := exec.Command("sh", "-c", "echo three >&2; printf %s \"$N\" >&2")
		sh.Env = append(os.Environ(), "N="+notice)
		sh.Stderr = os.Stderr
		if err := sh.Run(); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() { fmt.Fprint(os.Stderr, notice) })
		}
		wg.Wait()
		fmt.Fprint(os.Stderr, "four\n")
		release()
		after := stat2(t)
		fmt.Fprint(os.Stderr, "five "+notice)
		fmt.Printf("restored=%v\n", before.Dev == after.Dev && before.Ino == after.Ino && before.Mode == after.Mode)
		return
	}
	stdout, stderr, err := child(t, "TestHold_DropsOnlyTheMessagesAndRestoresDescriptor2")
	if err != nil {
		t.Fatalf("child: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if !strings.Contains(stdout, "restored=true") {
		t.Errorf("descriptor 2 is not the original after the release: %s", stdout)
	}
	// After the release the filter is off: the notice prints.
	if want := "one\ntwo\nthree\nfour\nfive " + notice; stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
}

// TestHold_CrashReachesTheRealStderr: a panic while held is printed where
// the process's stderr really goes, not into the pipe nobody reads once the
// process dies.
func TestHold_CrashReachesTheRealStderr(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		New(notice).Hold()
		go panic("crash while held")
		select {}
	}
	_, stderr, err := child(t, "TestHold_CrashReachesTheRealStderr")
	if err == nil || !strings.Contains(stderr, "panic: crash while held") {
		t.Errorf("exit %v, stderr:\n%s", err, stderr)
	}
}

// TestHold_ConcurrentHoldsRestoreOnce: holds from many goroutines, started
// and ended in any order, leave descriptor 2 the original.
func TestHold_ConcurrentHoldsRestoreOnce(t *testing.T) {
	before := stat2(t)
	f := New(notice)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			release := f.Hold()
			defer release()
			_ = stat2(t)
		})
	}
	wg.Wait()
	if after := stat2(t); after.Dev != before.Dev || after.Ino != before.Ino {
		t.Errorf("descriptor 2 is %d/%d after the holds, was %d/%d", after.Dev, after.Ino, before.Dev, before.Ino)
	}
	if f.s != nil || f.holds != 0 {
		t.Errorf("holds %d, session %v after every release", f.holds, f.s)
	}
}
