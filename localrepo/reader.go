package localrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// Reader reads a local provider repository tree, Root/<label>/<version>/,
// as clusterctl's local repository does: every version folder is a version
// (the temporary folders of an interrupted write are hidden and skipped).
// A folder with a checksums.txt (written by capirepo) is checked against it.
type Reader struct {
	Root string
	// Components names the components file per provider label; a label not
	// listed gets the conventional name.
	Components map[string]string
}

var _ publish.Lister = (*Reader)(nil)

// Versions lists the version folders of a label.
func (r *Reader) Versions(ctx context.Context, label string) ([]string, error) {
	if _, err := provider.ParseLabel(label); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(r.Root, label))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if _, err := provider.ParseVersion(e.Name()); err == nil && e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Read reads one version folder.
func (r *Reader) Read(ctx context.Context, label, version string) (*release.Provider, error) {
	id, err := provider.ParseLabel(label)
	if err != nil {
		return nil, err
	}
	if _, err := provider.ParseVersion(version); err != nil {
		return nil, err
	}
	dir := filepath.Join(r.Root, label, version)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, publish.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var names []string
	hasSums := false
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
			hasSums = hasSums || e.Name() == release.ChecksumsFile
		}
	}
	if hasSums {
		// Written by capirepo: every file is checked against checksums.txt.
		if _, err := release.LoadProvider(dir); err != nil {
			return nil, err
		}
	}
	components, files, err := publish.ReadFiles(id, names, r.Components[label])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	p := &release.Provider{ID: id, Version: version, ComponentsFile: components}
	for _, n := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		if err := p.Add(n, data); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
	}
	return p, nil
}

// List returns the files Read would return with their size and sha256.
func (r *Reader) List(ctx context.Context, label, version string) (map[string]publish.Remote, error) {
	p, err := r.Read(ctx, label, version)
	if err != nil {
		return nil, err
	}
	out := map[string]publish.Remote{}
	for _, f := range p.Files {
		out[f.Name] = publish.Remote{Name: f.Name, Size: int64(len(f.Data)), SHA256: f.SHA256()}
	}
	return out, nil
}
