//go:build unix

package fsafe

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadFileRefusesAFIFOWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "kustomization.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadFile(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo+" is a named pipe (FIFO)") {
			t.Errorf("err = %v, want the path named as a FIFO", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadFile blocked on a FIFO")
	}
}

func TestReadFileReadsARegularFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.yaml")
	if err := os.WriteFile(p, []byte("kind: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := ReadFile(p)
	if err != nil || string(data) != "kind: x\n" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
	if _, err := ReadFile(filepath.Dir(p)); err == nil || !strings.Contains(err.Error(), "a folder") {
		t.Errorf("folder: err = %v", err)
	}
}

func TestCheckEntryNamesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "out.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "metadata.yaml"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		if err := CheckEntry(dir, e); err != nil {
			got[e.Name()] = err.Error()
		} else {
			got[e.Name()] = ""
		}
	}
	for name, want := range map[string]string{
		"ok.yaml":       "",
		"out.yaml":      filepath.Join(dir, "out.yaml") + " is a symlink (to /etc/hostname, out of " + dir + ")",
		"metadata.yaml": filepath.Join(dir, "metadata.yaml") + " is a named pipe (FIFO)",
	} {
		if want == "" && got[name] != "" || !strings.Contains(got[name], want) {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
}

func TestAppendFile_AppendsAndRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "summary.md")
	for _, part := range []string{"one\n", "two\n"} {
		if err := AppendFile(f, []byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(f); string(b) != "one\ntwo\n" {
		t.Errorf("file holds %q", b)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if err := AppendFile(fifo, []byte("x")); err == nil || !strings.Contains(err.Error(), "no regular file") {
		t.Errorf("a FIFO: %v", err)
	}
}
