//go:build unix

package builder

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
)

// TestBuild_FIFOIsRefusedNotWaitedOn puts a named pipe where a resource, a
// template, the metadata and a kustomization are expected: each build
// fails at once, naming the path, instead of blocking for ever.
func TestBuild_FIFOIsRefusedNotWaitedOn(t *testing.T) {
	for _, name := range []string{
		"config/manager/manager.yaml",
		"config/default/kustomization.yaml",
		"metadata.yaml",
		"templates/cluster-template.yaml",
	} {
		t.Run(name, func(t *testing.T) {
			files := testtree.Minimal(map[string]string{"templates/cluster-template.yaml": cluster})
			delete(files, name)
			dir := testtree.Write(t, files)
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			done := make(chan error, 1)
			go func() {
				// The config is loaded from the tree too (its conventions
				// read config/default's kustomization).
				cfg, err := provider.LoadConfig(dir, "")
				if err == nil {
					_, err = Build(context.Background(), Options{Dir: dir, Config: cfg, Version: "v1.2.0"})
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "named pipe (FIFO)") || !strings.Contains(err.Error(), filepath.Base(name)) {
					t.Errorf("err = %v, want the FIFO named", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the build blocked on a FIFO")
			}
		})
	}
}
