package builder

import (
	"fmt"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/provider"
)

// applyPatches applies release-only kustomize patches after the tree's own
// kustomization, as `kustomize build` of an overlay holding the rendered
// components and the patches would (CAPA's compiled-manifest does just
// that). Patch files are read from the tree and inlined.
func applyPatches(fs *treeFS, dir string, rm resmap.ResMap, patches []provider.Patch) (resmap.ResMap, error) {
	in, err := asYAML(rm)
	if err != nil {
		return nil, err
	}
	return patchYAML(fs, dir, in, patches, krusty.ReorderOptionLegacy)
}

// patchTemplate applies the patches to a rendered or copied template, in the
// order its objects have: what a Makefile's sed over the file did, by field.
func patchTemplate(fs *treeFS, dir string, data []byte, patches []provider.Patch) ([]byte, error) {
	rm, err := patchYAML(fs, dir, data, patches, krusty.ReorderOptionNone)
	if err != nil {
		return nil, err
	}
	return asYAML(rm)
}

// patchYAML builds, in memory, a kustomization holding in and the patches.
func patchYAML(fs *treeFS, dir string, in []byte, patches []provider.Patch, order krusty.ReorderOption) (resmap.ResMap, error) {
	k := types.Kustomization{Resources: []string{"release.yaml"}}
	for i, p := range patches {
		kp := types.Patch{Patch: p.Patch}
		if p.Path != "" {
			data, err := fs.ReadFile(filepath.Join(dir, filepath.FromSlash(p.Path)))
			if err != nil {
				return nil, fmt.Errorf("patches[%d].path: %w", i, err)
			}
			kp.Patch = string(data)
		}
		if t := p.Target; t != nil {
			kp.Target = &types.Selector{ResId: resid.NewResIdWithNamespace(resid.Gvk{Group: t.Group, Version: t.Version, Kind: t.Kind}, t.Name, t.Namespace),
				LabelSelector: t.LabelSelector, AnnotationSelector: t.AnnotationSelector}
		}
		k.Patches = append(k.Patches, kp)
	}
	kdata, err := yaml.Marshal(k)
	if err != nil {
		return nil, err
	}
	mem := filesys.MakeFsInMemory()
	if err := mem.WriteFile("/release/release.yaml", in); err != nil {
		return nil, err
	}
	if err := mem.WriteFile("/release/kustomization.yaml", kdata); err != nil {
		return nil, err
	}
	o := kustomizeOptions()
	o.Reorder = order
	return krusty.MakeKustomizer(o).Run(mem, "/release")
}
