package builder

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/internal/kustomization"
	"github.com/capirepo/capirepo/internal/option"
)

// followed are the fields whose entries can be kustomizations: kustomize
// builds a folder named there, and a remote one is a base it clones.
var followed = []kustomization.Field{
	kustomization.Resources, kustomization.Bases, kustomization.Components,
	kustomization.Generators, kustomization.Transformers, kustomization.Validators,
}

// checkLocal walks the kustomization graph from dir and refuses any entry
// that kustomize would fetch from the network, any absolute path and any helm
// chart inflation, so a release builds from the checked-out tree alone.
// Remote files matter most: kustomize fetches them over HTTP, past the
// confinement of treeFS (a remote base is cloned, then read through it).
// It looks at every field kustomize loads a file from
// (kustomization.FileFields), and goes into the folders that resources,
// bases, components, generators, transformers and validators name, as
// kustomize builds each of them.
func checkLocal(fs *treeFS, dir string) error {
	var fileOnly []kustomization.Field
	for _, f := range kustomization.FileFields {
		if !slices.Contains(followed, f) {
			fileOnly = append(fileOnly, f)
		}
	}
	// kustomize loads an absolute path as it stands, which with
	// loadRestrictor none nothing else stops: a release names files by
	// their place in the tree.
	refuse := func(e kustomization.Entry) error {
		switch e.Kind {
		case kustomization.Absolute:
			return fmt.Errorf("%s: field %s: %q is absolute; name it relative to the kustomization", e.File, e.Where(), e.Value)
		case kustomization.Remote:
			what := "a remote base"
			if !slices.Contains(followed, e.Field) {
				what = "a remote file"
			}
			return fmt.Errorf("%s: field %s: %q is %s; a release must build from the checked-out tree (pass %s to allow it)", e.File, e.Where(), e.Value, what, option.AllowRemote)
		}
		if err := fs.Violation(); err != nil {
			return fmt.Errorf("%s: field %s: %w", e.File, e.Where(), err)
		}
		return nil
	}
	return kustomization.Walk(fs, dir, kustomization.Options{Follow: followed}, kustomization.Visitor{
		Kustomization: func(k *kustomization.Kustomization) error {
			if err := fs.Violation(); err != nil {
				if k.From != nil {
					return fmt.Errorf("%s: field %s: %w", k.From.File, k.From.Where(), err)
				}
				return err
			}
			if k.File == "" {
				return fmt.Errorf("%s: no kustomization file (%s)", k.Dir, strings.Join(konfig.RecognizedKustomizationFileNames(), ", "))
			}
			if k.Err != nil {
				return k.Err
			}
			var helm struct {
				HelmCharts []json.RawMessage `json:"helmCharts"`
			}
			if err := yaml.Unmarshal(k.Data, &helm); err != nil {
				return fmt.Errorf("%s: %w", k.File, err)
			}
			if len(helm.HelmCharts) > 0 {
				return fmt.Errorf("%s: field helmCharts: helm chart inflation is off in capirepo; render the chart into the tree", k.File)
			}
			for _, e := range k.Entries(fileOnly...) {
				if err := refuse(e); err != nil {
					return err
				}
			}
			return nil
		},
		Entry: func(_ *kustomization.Kustomization, e kustomization.Entry) error { return refuse(e) },
	})
}
