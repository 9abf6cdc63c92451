package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// Dir verifies a dist folder or a local repository tree, root/<label>/<version>/,
// through file:// URLs. root may also be one <label>/<version> folder. Every
// provider folder holding the version is read: opts.Version, or else the
// newest as clusterctl orders versions (release.Newest: the newest release,
// else the newest pre-release).
func Dir(ctx context.Context, root string, opts Options) (*Report, error) {
	targets, err := DirRepos(root, opts.Version)
	if err != nil {
		return nil, err
	}
	return Repository(ctx, targets, opts)
}

// DirRepos returns the targets Dir verifies.
func DirRepos(root, version string) ([]Repo, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if isVersionDir(abs) {
		if version != "" && version != filepath.Base(abs) {
			return nil, fmt.Errorf("%s is the folder of version %s, not %s", root, filepath.Base(abs), version)
		}
		version = filepath.Base(abs)
		abs = filepath.Dir(filepath.Dir(abs))
	}
	if version != "" {
		if _, err := provider.ParseVersion(version); err != nil {
			return nil, err
		}
	}
	tree, err := release.ScanTree(abs)
	if err != nil {
		return nil, err
	}
	if err := release.Unreadable(tree); err != nil {
		return nil, err
	}
	if len(tree) == 0 {
		return nil, fmt.Errorf("%s holds no <provider-label>/<version> folder: run capirepo build or publish local first", root)
	}
	// versions[label] lists the label's version folders.
	versions := map[string][]string{}
	var ids []provider.ID
	for _, f := range tree {
		if len(versions[f.ID.Label()]) == 0 {
			ids = append(ids, f.ID)
		}
		versions[f.ID.Label()] = append(versions[f.ID.Label()], f.Version)
	}
	if version == "" {
		version = release.Newest(tree)
	}
	var targets []Repo
	for _, id := range ids {
		if !slices.Contains(versions[id.Label()], version) {
			continue
		}
		dir := filepath.Join(abs, id.Label(), version)
		components, err := componentsFile(dir, id)
		if err != nil {
			return nil, err
		}
		targets = append(targets, Repo{
			ID:      id,
			URL:     "file://" + filepath.ToSlash(filepath.Join(dir, components)),
			Version: version,
		})
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("%s holds no provider folder for version %s", root, version)
	}
	return targets, nil
}

func isVersionDir(dir string) bool {
	if _, err := provider.ParseVersion(filepath.Base(dir)); err != nil {
		return false
	}
	_, err := provider.ParseLabel(filepath.Base(filepath.Dir(dir)))
	return err == nil
}

// componentsFile picks the components file of a version folder as
// release.Load does. A file that is not a regular file (a symlink, which
// clusterctl would follow out of the folder; a FIFO, on which it would
// block) is refused by name.
func componentsFile(dir string, id provider.ID) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		if !e.IsDir() {
			if err := fsafe.CheckEntry(dir, e); err != nil {
				return "", err
			}
		}
		names[i] = e.Name()
	}
	name, err := release.ComponentsFile(id, names)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	return name, nil
}
