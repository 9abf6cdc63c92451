package builder

import (
	"fmt"
	"sync"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomizeOptions are what `kustomize build` uses by default: the legacy
// resource order (Namespace first, webhooks last), root-only loading, no
// plugins, no exec or container KRM functions, no helm.
func kustomizeOptions() *krusty.Options {
	o := krusty.MakeDefaultOptions()
	o.Reorder = krusty.ReorderOptionLegacy
	o.LoadRestrictions = types.LoadRestrictionsRootOnly
	o.PluginConfig = types.DisabledPluginConfig()
	return o
}

// Kustomize renders the kustomization in dir with `kustomize build`
// semantics, reading through fs.
func Kustomize(fs filesys.FileSystem, dir string) (resmap.ResMap, error) {
	return kustomize(fs, dir, false)
}

// kustomize renders dir; loadNone is `--load-restrictor LoadRestrictionsNone`.
// A render of a provider tree notes the deprecated fields of the
// kustomization files it read, for the build's warnings; with a RenderCache
// (Options.Cache), a render whose inputs are unchanged is reused.
func kustomize(fs filesys.FileSystem, dir string, loadNone bool) (resmap.ResMap, error) {
	warmUp()
	o := kustomizeOptions()
	if loadNone {
		o.LoadRestrictions = types.LoadRestrictionsNone
	}
	tree := treeOf(fs)
	if tree == nil {
		return krusty.MakeKustomizer(o).Run(fs, dir)
	}
	cache, key := tree.cache, ""
	var rfs *fsRecorder
	if cache != nil {
		key = renderKey(tree, dir, loadNone)
		if rm, e, ok := cache.lookup(key, fs); ok {
			// The warnings count this render as if it had run.
			tree.deprecated.add(tree.display, e.notices)
			tree.rendered(rm, e)
			return rm, nil
		}
		cache.counted(dir)
		rfs = &fsRecorder{FileSystem: fs}
		fs = rfs
	}
	rec := &kustRecorder{FileSystem: fs}
	rm, err := krusty.MakeKustomizer(o).Run(rec, dir)
	notices := kustNotices(rec.files)
	tree.deprecated.add(tree.display, notices)
	if cache != nil && err == nil {
		tree.rendered(rm, cache.put(key, rfs, rm.DeepCopy(), notices))
	}
	return rm, err
}

var warm sync.Once

// warmUp runs one render with a strategic-merge patch, so kyaml loads its
// global OpenAPI schema once before providers render concurrently.
func warmUp() {
	warm.Do(func() {
		fs := filesys.MakeFsInMemory()
		_ = fs.WriteFile("/w/kustomization.yaml", []byte("resources: [d.yaml]\npatches: [{path: p.yaml}]\n"))
		_ = fs.WriteFile("/w/d.yaml", []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: c, image: i}]}}}\n"))
		_ = fs.WriteFile("/w/p.yaml", []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: c, image: j}]}}}\n"))
		if _, err := krusty.MakeKustomizer(kustomizeOptions()).Run(fs, "/w"); err != nil {
			panic(fmt.Sprintf("kustomize warm-up failed: %v", err))
		}
	})
}
