//go:build unix

package main

import (
	"bytes"
	"context"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/capirepo/capirepo/internal/dirlock"
	"github.com/capirepo/capirepo/release"
)

const asMainEnv = "CAPIREPO_TEST_AS_MAIN"

// TestMain lets the test binary run as capirepo itself (main, with its
// signal handling), for tests that signal or kill a real process.
func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// syncBuf is a buffer a process writes to while the test reads it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// capirepo starts the test binary as capirepo with args.
func capirepo(t *testing.T, env []string, args ...string) (*exec.Cmd, *syncBuf) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), append([]string{asMainEnv + "=1"}, env...)...)
	stderr := &syncBuf{}
	cmd.Stderr = stderr
	cmd.Stdout = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, stderr
}

func waitFor(t *testing.T, what string, out *syncBuf, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never %s; output:\n%s", what, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exitsWithin signals the process and returns its exit code once it is
// gone, failing when that takes longer than limit.
func exitsWithin(t *testing.T, cmd *exec.Cmd, sig os.Signal, limit time.Duration, out *syncBuf) int {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	start := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("still running %s after %v; output:\n%s", limit, sig, out.String())
	}
	t.Logf("exited %s after %v", time.Since(start).Round(time.Millisecond), sig)
	return cmd.ProcessState.ExitCode()
}

// TestSignal_StalledPublishStopsWithin5s: a GitLab that accepts the
// connection and never answers; SIGTERM or SIGINT ends the publish within
// 5 s, with a failure exit code, though --timeout is 10 minutes.
func TestSignal_StalledPublishStopsWithin5s(t *testing.T) {
	dist := buildExample(t)
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		t.Run(sig.String(), func(t *testing.T) {
			asked := make(chan struct{}, 16)
			srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				asked <- struct{}{}
				<-r.Context().Done()
			}))
			defer srv.Close()
			defer srv.CloseClientConnections()
			cmd, out := capirepo(t, []string{"GITLAB_ACCESS_TOKEN=glpat-0123456789"},
				"publish", "gitlab", "--url", srv.URL, "--project", "g/p", "--from", dist, "--timeout", "10m")
			select {
			case <-asked:
			case <-time.After(60 * time.Second):
				t.Fatalf("the publish never reached the server:\n%s", out.String())
			}
			if code := exitsWithin(t, cmd, sig, 5*time.Second, out); code != exitFailure {
				t.Errorf("exit code %d, want %d; output:\n%s", code, exitFailure, out.String())
			}
			if !strings.Contains(out.String(), "stopping") {
				t.Errorf("no word of stopping:\n%s", out.String())
			}
		})
	}
}

// TestSignal_WaitForTheLockStopsWithin5s: publish local waits for another
// writer of its root (named with its pid); SIGTERM ends the wait within
// 5 s and nothing is written.
func TestSignal_WaitForTheLockStopsWithin5s(t *testing.T) {
	dist := buildExample(t)
	root := t.TempDir()
	held, err := dirlock.Acquire(context.Background(), root, dirlock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	cmd, out := capirepo(t, nil, "publish", "local", "--root", root, "--from", dist)
	waitFor(t, "waited for the lock", out, func() bool {
		return strings.Contains(out.String(), "waiting for another capirepo publishing into "+root+" (pid ")
	})
	if code := exitsWithin(t, cmd, syscall.SIGTERM, 5*time.Second, out); code != exitFailure {
		t.Errorf("exit code %d; output:\n%s", code, out.String())
	}
	if _, err := os.Stat(filepath.Join(root, "infrastructure-example")); err == nil {
		t.Errorf("a stopped publish wrote into the root")
	}
}

// TestSignal_BuildWithAFIFOFailsAtOnce: a FIFO where a resource is
// expected fails the build at once, naming it, and writes nothing (before,
// the build blocked for ever and SIGTERM could not stop it).
func TestSignal_BuildWithAFIFOFailsAtOnce(t *testing.T) {
	tree := copyTree(t, exampleDir(t))
	var victim string
	_ = filepath.WalkDir(filepath.Join(tree, "config"), func(p string, d fs.DirEntry, _ error) error {
		if victim == "" && d.Type().IsRegular() && strings.HasSuffix(p, ".yaml") && !strings.Contains(d.Name(), "kustomization") {
			victim = p
		}
		return nil
	})
	if err := os.Remove(victim); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(victim, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	out := filepath.Join(t.TempDir(), "dist")
	cmd, stderr := capirepo(t, nil, "build", "--dir", tree, "--version", "v0.1.0", "--out", out)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		code := exitsWithin(t, cmd, syscall.SIGTERM, 5*time.Second, stderr)
		t.Fatalf("the build blocked on the FIFO (exit %d after SIGTERM)", code)
	}
	if cmd.ProcessState.ExitCode() != exitFailure || !strings.Contains(stderr.String(), "named pipe (FIFO)") {
		t.Errorf("exit %d:\n%s", cmd.ProcessState.ExitCode(), stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "infrastructure-example")); err == nil {
		t.Error("a failed build wrote its output")
	}
}

// copyTree copies a folder (regular files only) into a new temp folder.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestKill_AtRandomMomentsThenRerunLeavesCompleteOutput kills build,
// publish local and dev with SIGKILL at random moments, several times over
// the same output, then runs them to the end: the output is complete (every
// checksum matches) and no staging folder or temporary file is left.
func TestKill_AtRandomMomentsThenRerunLeavesCompleteOutput(t *testing.T) {
	dist := buildExample(t)
	for _, tc := range []struct {
		name string
		args func(out string) []string
		dir  func(out string) string // the version folder that must be complete
	}{
		{"build", func(out string) []string {
			return []string{"build", "--dir", exampleDir(t), "--version", "v0.1.0", "--out", out}
		}, func(out string) string { return filepath.Join(out, "infrastructure-example", "v0.1.0") }},
		{"publish local", func(out string) []string {
			return []string{"publish", "local", "--root", out, "--from", dist}
		}, func(out string) string { return filepath.Join(out, "infrastructure-example", "v0.1.0") }},
		{"dev", func(out string) []string {
			return []string{"dev", "--dir", exampleDir(t), "--root", out, "--version", "v0.1.9"}
		}, func(out string) string { return filepath.Join(out, "infrastructure-example", "v0.1.9") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			// How long a whole run takes here, to spread the kills over it.
			start := time.Now()
			cmd, stderr := capirepo(t, nil, tc.args(out)...)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("first run: %v\n%s", err, stderr.String())
			}
			full := time.Since(start)
			if err := os.RemoveAll(out); err != nil {
				t.Fatal(err)
			}
			for i := range 6 {
				cmd, _ := capirepo(t, nil, tc.args(out)...)
				time.Sleep(time.Duration(rand.Int64N(int64(full))))
				_ = cmd.Process.Signal(syscall.SIGKILL)
				_ = cmd.Wait()
				t.Logf("kill %d: %s", i, cmd.ProcessState)
			}
			cmd, stderr = capirepo(t, nil, tc.args(out)...)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("re-run after the kills: %v\n%s", err, stderr.String())
			}
			if _, err := release.LoadProvider(tc.dir(out)); err != nil {
				t.Errorf("output not complete after the re-run: %v", err)
			}
			_ = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
				if err == nil && (strings.Contains(d.Name(), ".tmp-") || strings.HasPrefix(d.Name(), ".build-")) {
					t.Errorf("left behind: %s", p)
				}
				return nil
			})
		})
	}
}
