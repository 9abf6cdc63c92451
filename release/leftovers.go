package release

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/provider"
)

// CleanLeftovers removes the temporary folders an interrupted write left in
// a label folder (.<version>.tmp-*, named so clusterctl's version listing
// skips them). Call it only while holding the root's lock (internal/dirlock):
// then no other capirepo is writing there, and every staging folder is a
// leftover of a run that is gone. A folder that was moved aside for a replace whose new folder
// never arrived is moved back, so the previous version stays readable.
func CleanLeftovers(labelDir string) error {
	entries, err := os.ReadDir(labelDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", labelDir, err)
	}
	// Moved-aside folders first, so a missing version is restored before
	// the staged folders are removed.
	slices.SortFunc(entries, func(a, b os.DirEntry) int {
		return boolRank(!strings.HasSuffix(a.Name(), ".old")) - boolRank(!strings.HasSuffix(b.Name(), ".old"))
	})
	for _, e := range entries {
		version, ok := LeftoverVersion(e.Name())
		if !ok {
			continue
		}
		p := filepath.Join(labelDir, e.Name())
		if strings.HasSuffix(e.Name(), ".old") {
			target := filepath.Join(labelDir, version)
			if _, err := os.Lstat(target); errors.Is(err, fs.ErrNotExist) {
				if err := os.Rename(p, target); err != nil {
					return fmt.Errorf("restore %s from %s: %w", target, p, err)
				}
				continue
			}
		}
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("remove leftover %s: %w", p, err)
		}
	}
	return nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// LeftoverVersion recognises StageDir's temporary names,
// .<version>.tmp-<random>[.old], and returns the version.
func LeftoverVersion(name string) (string, bool) {
	if !strings.HasPrefix(name, ".") {
		return "", false
	}
	version, _, ok := strings.Cut(name[1:], ".tmp-")
	if !ok {
		return "", false
	}
	if _, err := provider.ParseVersion(version); err != nil {
		return "", false
	}
	return version, true
}
