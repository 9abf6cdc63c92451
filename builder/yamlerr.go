package builder

import (
	"fmt"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/internal/kustomization"
	"github.com/capirepo/capirepo/internal/yamlpos"
)

// explainYAML turns kustomize's report of a file that does not parse (the
// line counted from the start of the YAML document, the file named only by
// its entry) into one that points into the tree: the file and its line, the
// object, and the kustomization that pulled the file in. Other errors are
// returned as they are. It runs only after kustomize failed, and only
// reads the files the kustomizations name.
func explainYAML(fs *treeFS, dir string, err error) error {
	if err == nil {
		return err
	}
	if e := findBroken(fs, dir, "", map[string]bool{}); e != nil {
		return e
	}
	return err
}

// findBroken walks the kustomization in dir and the files it names, and
// returns the first that does not parse.
func findBroken(fs *treeFS, dir, pulledBy string, seen map[string]bool) error {
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	kfile := kustomization.Find(fs, dir)
	if kfile == "" {
		return nil
	}
	data, err := fs.ReadFile(kfile)
	if err != nil {
		return nil
	}
	if e := yamlpos.Find(kfile, data); e != nil {
		return withPuller(e, pulledBy)
	}
	var k struct {
		Resources             []string `json:"resources"`
		Bases                 []string `json:"bases"`
		Components            []string `json:"components"`
		PatchesStrategicMerge []string `json:"patchesStrategicMerge"`
		Patches               []struct {
			Path string `json:"path"`
		} `json:"patches"`
	}
	if yaml.Unmarshal(data, &k) != nil {
		return nil
	}
	type ref struct{ field, path string }
	var refs []ref
	for _, f := range []struct {
		field string
		list  []string
	}{{"resources", k.Resources}, {"bases", k.Bases}, {"components", k.Components}, {"patchesStrategicMerge", k.PatchesStrategicMerge}} {
		for i, p := range f.list {
			refs = append(refs, ref{fmt.Sprintf("%s[%d]", f.field, i), p})
		}
	}
	for i, p := range k.Patches {
		if p.Path != "" {
			refs = append(refs, ref{fmt.Sprintf("patches[%d].path", i), p.Path})
		}
	}
	for _, r := range refs {
		if strings.Contains(r.path, "\n") || filepath.IsAbs(r.path) {
			continue // an inline patch, or refused elsewhere
		}
		p := filepath.Join(dir, r.path)
		by := fmt.Sprintf("%s (field %s)", kfile, r.field)
		if fs.IsDir(p) {
			if e := findBroken(fs, p, by, seen); e != nil {
				return e
			}
			continue
		}
		if !fs.Exists(p) {
			continue
		}
		data, err := fs.ReadFile(p)
		if err != nil {
			continue
		}
		if e := yamlpos.Find(p, data); e != nil {
			return withPuller(e, by)
		}
	}
	return nil
}

func withPuller(e *yamlpos.Error, pulledBy string) error {
	if pulledBy == "" {
		return e
	}
	return fmt.Errorf("%w; pulled in by %s", e, pulledBy)
}
