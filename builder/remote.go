package builder

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/internal/kustomization"
)

// checkLocal walks the kustomization graph from dir and refuses any entry
// that kustomize would fetch from the network, any absolute path and any helm
// chart inflation, so a release builds from the checked-out tree alone.
// Remote files matter most: kustomize fetches them over HTTP, past the
// confinement of treeFS (a remote base is cloned, then read through it).
// It looks at the fields package kustomization knows; remote files named by
// generators, transformers, configurations, openapi or replacements are
// not checked.
func checkLocal(fs *treeFS, dir string) error {
	// kustomize loads an absolute path as it stands, which with
	// loadRestrictor none nothing else stops: a release names files by
	// their place in the tree.
	refuse := func(e kustomization.Entry) error {
		switch e.Kind {
		case kustomization.Absolute:
			return fmt.Errorf("%s: field %s: %q is absolute; name it relative to the kustomization", e.File, e.Where(), e.Value)
		case kustomization.Remote:
			what := "a remote base"
			if e.Field != kustomization.Resources && e.Field != kustomization.Bases && e.Field != kustomization.Components {
				what = "a remote file"
			}
			return fmt.Errorf("%s: field %s: %q is %s; a release must build from the checked-out tree (pass --allow-remote to allow it)", e.File, e.Where(), e.Value, what)
		}
		if err := fs.Violation(); err != nil {
			return fmt.Errorf("%s: field %s: %w", e.File, e.Where(), err)
		}
		return nil
	}
	return kustomization.Walk(fs, dir, kustomization.Options{}, kustomization.Visitor{
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
			for _, e := range k.Entries(kustomization.Patches, kustomization.PatchesStrategicMerge, kustomization.Crds) {
				if err := refuse(e); err != nil {
					return err
				}
			}
			return nil
		},
		Entry: func(_ *kustomization.Kustomization, e kustomization.Entry) error { return refuse(e) },
	})
}
