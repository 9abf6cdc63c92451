package builder_test

import (
	"bytes"
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/verify"
)

// The maintainers' release pipelines of the four real module trees,
// reproduced in process: the files their Makefiles edit (sed, gojq) are
// edited in memory the same way, and kustomize builds with krusty as the
// kustomize CLI v5.8.2 does (it links sigs.k8s.io/kustomize/api v0.21.2, the
// version go.mod requires). bench/realtrees.sh runs the same comparison
// against the CLI itself.

// cliOptions are `kustomize build`'s defaults in kustomize v5.8.2.
func cliOptions() *krusty.Options {
	o := krusty.MakeDefaultOptions()
	o.Reorder = krusty.ReorderOptionLegacy
	return o
}

// editedFS is the disk with some files replaced, as the Makefile leaves them
// after its sed step.
type editedFS struct {
	filesys.FileSystem
	files map[string][]byte
}

func (e editedFS) ReadFile(p string) ([]byte, error) {
	if d, ok := e.files[filepath.Clean(p)]; ok {
		return d, nil
	}
	return e.FileSystem.ReadFile(p)
}

func kustomizeBuild(t *testing.T, fs filesys.FileSystem, dir string) []byte {
	t.Helper()
	return kustomizeCLI(t, fs, dir, false)
}

// sedPipeline is cluster-api's, CAPD's and CAPG's: set-manifest-image and
// set-manifest-pull-policy sed config/default's two patch files, then
// kustomize build.
func sedPipeline(t *testing.T, dir, kdir, image, policy string) []byte {
	t.Helper()
	fs := edited(t, dir,
		sed{path.Join(kdir, "manager_image_patch.yaml"), `image: .*`, "image: " + image},
		sed{path.Join(kdir, "manager_pull_policy.yaml"), `imagePullPolicy: .*`, "imagePullPolicy: " + policy})
	return kustomizeBuild(t, fs, filepath.Join(dir, filepath.FromSlash(kdir)))
}

// capaPipeline is CAPA's compiled-manifest: build config/default into
// source-manifest.yaml, then build hack/image-patch's kustomization with the
// image and the pull-policy patch filled in by gojq.
func capaPipeline(t *testing.T, dir, oldImg, img, tag, policy string) []byte {
	t.Helper()
	source := kustomizeBuild(t, filesys.MakeFsOnDisk(), filepath.Join(dir, "config", "default"))
	var k map[string]any
	readYAML(t, filepath.Join(dir, "hack", "image-patch", "kustomization.yaml"), &k)
	k["images"].([]any)[0] = map[string]any{"name": oldImg, "newName": img, "newTag": tag}
	target := k["patchesJson6902"].([]any)[0].(map[string]any)["target"].(map[string]any)
	target["name"], target["namespace"] = "capa-controller-manager", "capa-system"
	var pp []map[string]any
	readYAML(t, filepath.Join(dir, "hack", "image-patch", "pull-policy-patch.yaml"), &pp)
	pp[0]["value"] = policy
	mem := filesys.MakeFsInMemory()
	for name, v := range map[string]any{"kustomization.yaml": k, "pull-policy-patch.yaml": pp} {
		data, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := mem.WriteFile("/patch/"+name, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := mem.WriteFile("/patch/source-manifest.yaml", source); err != nil {
		t.Fatal(err)
	}
	return kustomizeBuild(t, mem, "/patch")
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// realTree is one real provider tree with the documented config
// (docs/configs) and what its maintainers' release holds.
type realTree struct {
	name, module, config, version string
	// components: file -> the maintainers' pipeline output.
	components func(t *testing.T, dir string) map[string][]byte
	// copied are the templates the Makefile copies as they are (folder, glob).
	copied [2]string
	// noTemplates leaves templates out (see docs/providers.md).
	noTemplates bool
	// unverifiable are flavors clusterctl cannot generate without a
	// cluster: topology Clusters whose class the release ships only
	// inline, as no clusterclass-*.yaml. (A class shipped as a flavor of
	// its own, as CAPG's clusterclass flavors, is read as after that
	// flavor; such topology flavors verify.)
	unverifiable []string
	// after are the topology flavors read as after the flavor that ships
	// their class (issue 44.5), by flavor.
	after map[string]string
}

var realTrees = []realTree{
	{name: "cluster-api", module: testtree.ClusterAPIModule, config: "cluster-api.capirepo.yaml", version: "v1.14.2",
		components: func(t *testing.T, dir string) map[string][]byte {
			return map[string][]byte{
				"cluster-api/core-components.yaml": sedPipeline(t, dir, "core/config/default",
					"registry.k8s.io/cluster-api/cluster-api-controller:v1.14.2", "IfNotPresent"),
				"bootstrap-kubeadm/bootstrap-components.yaml": sedPipeline(t, dir, "bootstrap/kubeadm/config/default",
					"registry.k8s.io/cluster-api/kubeadm-bootstrap-controller:v1.14.2", "IfNotPresent"),
				"control-plane-kubeadm/control-plane-components.yaml": sedPipeline(t, dir, "controlplane/kubeadm/config/default",
					"registry.k8s.io/cluster-api/kubeadm-control-plane-controller:v1.14.2", "IfNotPresent"),
			}
		}},
	{name: "capd", module: testtree.CAPDModule, config: "capd.capirepo.yaml", version: "v1.14.2",
		components: func(t *testing.T, dir string) map[string][]byte {
			return map[string][]byte{"infrastructure-docker/infrastructure-components-development.yaml": sedPipeline(t, dir, "infrastructure/docker/config/default",
				"gcr.io/k8s-staging-cluster-api/capd-manager:v1.14.2", "IfNotPresent")}
		},
		copied: [2]string{"infrastructure/docker/templates", "*"}},
	{name: "capa", module: testtree.CAPAModule, config: "capa.capirepo.yaml", version: "v2.13.0",
		components: func(t *testing.T, dir string) map[string][]byte {
			return map[string][]byte{"infrastructure-aws/infrastructure-components.yaml": capaPipeline(t, dir,
				"gcr.io/k8s-staging-cluster-api-aws/cluster-api-aws-controller", "registry.k8s.io/cluster-api-aws/cluster-api-aws-controller", "v2.13.0", "IfNotPresent")}
		},
		// goreleaser's extra_files: ./templates/*.yaml
		copied: [2]string{"templates", "*.yaml"},
		// The two flavors of the true CAPI504 finding (docs/providers.md).
		unverifiable: []string{"cluster-template-multitenancy-clusterclass.yaml", "cluster-template-simple-clusterclass.yaml"}},
	{name: "capg", module: testtree.CAPGModule, config: "capg.capirepo.yaml", version: "v1.13.1",
		components: func(t *testing.T, dir string) map[string][]byte {
			return map[string][]byte{"infrastructure-gcp/infrastructure-components.yaml": sedPipeline(t, dir, "config/default",
				"registry.k8s.io/cluster-api-gcp/cluster-api-gcp-controller:v1.13.1", "IfNotPresent")}
		},
		copied: [2]string{"templates", "cluster-template*"},
		// Each ClusterClass is a flavor of its own, applied first
		// (docs/book/src/topics/clusterclass in CAPG's tree).
		after: map[string]string{"topology": "clusterclass", "gke-topology": "gke-clusterclass", "gke-autopilot-topology": "gke-autopilot-clusterclass"}},
}

// TestRealTrees_SameAsTheMaintainersPipeline builds each real tree with its
// documented config and compares every components file byte for byte with
// the maintainers' pipeline, metadata.yaml and the copied templates with
// the tree's files, then reads the release back with clusterctl's client.
// The lint gate, with the config's waivers, reports no error: only the true
// findings docs/providers.md lists, which the configs waive with a reason.
func TestRealTrees_SameAsTheMaintainersPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("renders four real provider trees")
	}
	for _, rt := range realTrees {
		t.Run(rt.name, func(t *testing.T) {
			dir := testtree.ModuleDir(t, rt.module)
			cfg, err := provider.LoadConfig(dir, filepath.Join("..", "docs", "configs", rt.config))
			if err != nil {
				t.Fatal(err)
			}
			if rt.noTemplates {
				for i := range cfg.Providers {
					cfg.Providers[i].Templates = &provider.Templates{None: true}
				}
			}
			res, err := builder.Build(context.Background(), builder.Options{Dir: dir, Config: cfg, Version: rt.version})
			if err != nil {
				t.Fatalf("build %s with %s: %v", rt.name, rt.config, err)
			}
			// kustomize's deprecation notices of the components'
			// kustomization, as kustomize itself finds them in the real
			// file: each is one warning, naming the file (CAPA and CAPG
			// have them; issue 38.4).
			kfile := path.Join(cfg.Providers[0].Kustomize, "kustomization.yaml")
			if data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(kfile))); err == nil {
				var k types.Kustomization
				if err := k.Unmarshal(data); err != nil {
					t.Fatal(err)
				}
				for _, notice := range *k.CheckDeprecatedFields() {
					text := strings.TrimPrefix(notice, "# Warning: ")
					var said []string
					for _, w := range res.Warnings {
						if strings.Contains(w, text) {
							said = append(said, w)
						}
					}
					if len(said) != 1 || !strings.Contains(said[0], kfile) {
						t.Errorf("%s: kustomize's notice %q is said %d times (want once, naming %s): %q", rt.name, text, len(said), kfile, said)
					}
				}
			}
			lrep := contract.Lint(res.Release, contract.Options{Waivers: contract.Waivers(res.Config.Lint), Findings: res.Findings, Sources: res.Sources})
			if lrep.HasErrors() || len(lrep.Unmatched) > 0 {
				var b strings.Builder
				_ = lrep.WriteText(&b)
				t.Errorf("%s: the lint gate stops the build (or a waiver matched nothing):\n%s", rt.name, b.String())
			}
			got := map[string]*release.Provider{}
			for _, p := range res.Release.Providers {
				got[p.Label()] = p
			}
			for file, want := range rt.components(t, dir) {
				label, name, _ := strings.Cut(file, "/")
				p := got[label]
				if p == nil {
					t.Fatalf("no provider %s", label)
				}
				f, ok := p.File(name)
				if !ok {
					t.Fatalf("%s: no %s", label, name)
				}
				if !bytes.Equal(f.Data, want) {
					t.Errorf("%s differs from the maintainers' pipeline (-pipeline +capirepo):\n%s", file, cmp.Diff(string(want), string(f.Data)))
				}
				md, _ := p.File(provider.MetadataFile)
				wantMD, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(cfg.Providers[0].Metadata)))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(md.Data, wantMD) {
					t.Errorf("%s: metadata.yaml is not the tree's", label)
				}
			}
			if rt.copied[0] != "" {
				p := res.Release.Providers[0]
				files, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(rt.copied[0]), rt.copied[1]))
				if err != nil || len(files) == 0 {
					t.Fatalf("no templates to compare: %v", err)
				}
				var names []string
				for _, f := range files {
					if !strings.HasSuffix(f, ".yaml") || filepath.Base(f) == "kustomization.yaml" {
						continue
					}
					names = append(names, filepath.Base(f))
					want, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					a, ok := p.File(filepath.Base(f))
					if !ok {
						t.Errorf("the release lacks %s, which the Makefile copies", filepath.Base(f))
						continue
					}
					if !bytes.Equal(a.Data, want) {
						t.Errorf("%s differs from the tree's file", filepath.Base(f))
					}
				}
				if gotNames := res.Providers[0].Templates; !slices.Equal(gotNames, names) {
					t.Errorf("templates %v, the Makefile copies %v", gotNames, names)
				}
			}

			root := t.TempDir()
			if err := release.Write(root, res.Release); err != nil {
				t.Fatal(err)
			}
			targets, err := verify.DirRepos(root, rt.version)
			if err != nil {
				t.Fatal(err)
			}
			for i := range targets {
				for _, a := range got[targets[i].ID.Label()].Assets() {
					if !slices.Contains(rt.unverifiable, a.Name) {
						targets[i].Files = append(targets[i].Files, a.Name)
					}
				}
			}
			rep, err := verify.Repository(context.Background(), targets, verify.Options{})
			if err != nil {
				t.Fatalf("clusterctl cannot read the release back: %v", err)
			}
			if len(rep.Providers) != len(cfg.Providers) {
				t.Errorf("verify read %d providers, want %d", len(rep.Providers), len(cfg.Providers))
			}
			for _, p := range rep.Providers {
				if p.Objects == 0 {
					t.Errorf("%s: clusterctl read no objects", p.Label)
				}
				after := map[string]string{}
				for _, f := range p.Flavors {
					for _, c := range f.After {
						after[f.Name] = strings.Join(c.Flavors, ",")
					}
				}
				if diff := cmp.Diff(rt.after, after, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: flavors read as after their class flavor (-want +got):\n%s", p.Label, diff)
				}
				if n := len(got[p.Label].Assets()); !rt.noTemplates && len(res.Providers[0].Templates) > 0 && len(p.Flavors) == 0 {
					t.Errorf("%s: clusterctl read no flavors of %d assets", p.Label, n)
				}
			}
		})
	}
}
