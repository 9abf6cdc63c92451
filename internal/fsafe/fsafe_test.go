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
