package builder

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

var (
	remoteOnce sync.Once
	remoteDir  string
	remoteErr  error
)

// remoteScratch returns the private folder where kustomize clones remote
// bases (only with --allow-remote), creating it on first use. kustomize
// clones into os.MkdirTemp("", ...), that is into $TMPDIR, with no option to
// say where; so the process's temp folder is pointed at a new folder only
// this user can enter (0700, a random name). The builder then allows that
// folder besides the tree, never the shared temp folder, so nothing another
// process leaves in /tmp is reachable from a kustomization.
func remoteScratch() (string, error) {
	remoteOnce.Do(func() {
		dir, err := os.MkdirTemp("", "capirepo-remote-")
		if err != nil {
			remoteErr = fmt.Errorf("private folder for remote bases: %w", err)
			return
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			remoteErr = err
			return
		}
		if dir, err = filepath.EvalSymlinks(dir); err != nil {
			remoteErr = err
			return
		}
		vars := []string{"TMPDIR"}
		if runtime.GOOS == "windows" {
			vars = []string{"TMP", "TEMP"}
		}
		for _, v := range vars {
			if err := os.Setenv(v, dir); err != nil {
				remoteErr = err
				return
			}
		}
		remoteDir = dir
	})
	return remoteDir, remoteErr
}
