package builder

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/filesys"

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
	if e := findBroken(fs, dir); e != nil {
		return e
	}
	return err
}

// findBroken walks the kustomizations from dir as kustomize reads them
// (depth first, in field order) and returns the first kustomization or file
// they name that does not parse, with the entry that pulled it in.
func findBroken(fs filesys.FileSystem, dir string) error {
	var broken error
	check := func(file string, data []byte, pulledBy *kustomization.Entry) error {
		e := yamlpos.Find(file, data)
		if e == nil {
			return nil
		}
		broken = e
		if pulledBy != nil {
			broken = fmt.Errorf("%w; pulled in by %s (field %s)", e, pulledBy.File, pulledBy.Where())
		}
		return kustomization.SkipAll
	}
	follow := kustomization.Options{Follow: []kustomization.Field{kustomization.Resources, kustomization.Bases, kustomization.Components, kustomization.PatchesStrategicMerge, kustomization.Patches}}
	_ = kustomization.Walk(fs, dir, follow, kustomization.Visitor{
		Kustomization: func(k *kustomization.Kustomization) error {
			if k.Data == nil {
				return nil // none, or unreadable: kustomize says why
			}
			return check(k.File, k.Data, k.From)
		},
		Entry: func(_ *kustomization.Kustomization, e kustomization.Entry) error {
			if e.Kind != kustomization.File {
				return nil // folders are walked; the rest is refused or reported elsewhere
			}
			data, err := fs.ReadFile(e.Path)
			if err != nil {
				return nil
			}
			return check(e.Path, data, &e)
		},
	})
	return broken
}
