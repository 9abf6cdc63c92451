package builder_test

import (
	"bytes"
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/verify"
)

// Provider trees that cannot be had through the Go module proxy, as fixture
// trees of the same shape (builder/testdata/trees/<name>, over the example
// provider's config/ and metadata.yaml): each is built with its documented
// config (docs/configs) or its own, compared file for file with its
// maintainers' pipeline reproduced in process (their Makefile's sed edits
// made in memory, kustomize as the CLI builds, cp), linted through the one
// gate and read back with clusterctl's client (issue 31).

const (
	exampleTree     = "../examples/infrastructure-example"
	fixtureVersion  = "v0.1.0"
	fixtureTreesDir = "testdata/trees"
)

// fixtureTree is one fixture tree and its maintainers' release.
type fixtureTree struct {
	name string // folder under testdata/trees
	// config is a file of docs/configs; "" takes the tree's capirepo.yaml.
	config string
	// extraConfig is added to the config's last line (more templates.files).
	extraConfig string
	// examples copies the example's templates into the tree: tree path -> file
	// of examples/infrastructure-example/templates.
	examples map[string]string
	// pipeline is the maintainers' release, made in memory from the tree in
	// dir: published name -> bytes (metadata.yaml and the components included).
	pipeline func(t *testing.T, dir string) map[string][]byte
	// findings are the lint findings the shape holds, rule and file
	// ("CAPI506 cluster-template-topology.yaml"): true findings the test
	// expects, errors included; any other error fails it.
	findings []string
	// warnings are parts of the build warnings the shape gives, one each.
	warnings []string
	// unverifiable are files clusterctl fails on: the true findings above.
	unverifiable []string
}

// sed is one Makefile sed edit: the file, the expression and its replacement.
type sed struct{ file, expr, repl string }

// edited returns the tree's disk with the sed edits made in memory.
func edited(t *testing.T, dir string, edits ...sed) filesys.FileSystem {
	t.Helper()
	files := map[string][]byte{}
	for _, e := range edits {
		p := filepath.Clean(filepath.Join(dir, filepath.FromSlash(e.file)))
		data, ok := files[p]
		if !ok {
			var err error
			if data, err = os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
		}
		files[p] = regexp.MustCompile(e.expr).ReplaceAll(data, []byte(e.repl))
	}
	return editedFS{filesys.MakeFsOnDisk(), files}
}

// kustomizeCLI renders a folder as `kustomize build [--load-restrictor
// LoadRestrictionsNone]` does.
func kustomizeCLI(t *testing.T, fs filesys.FileSystem, dir string, loadNone bool) []byte {
	t.Helper()
	o := cliOptions()
	if loadNone {
		o.LoadRestrictions = types.LoadRestrictionsNone
	}
	rm, err := krusty.MakeKustomizer(o).Run(fs, dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out, err := rm.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cp reads files of the tree as the Makefile copies them: published name ->
// tree path.
func cp(t *testing.T, dir string, out map[string][]byte, files map[string]string) {
	t.Helper()
	for name, src := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(src)))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = data
	}
}

// cpGlob copies the files of a folder matching glob under their names.
func cpGlob(t *testing.T, dir string, out map[string][]byte, folder, glob string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(folder), glob))
	if err != nil || len(files) == 0 {
		t.Fatalf("cp %s/%s: nothing to copy (%v)", folder, glob, err)
	}
	for _, f := range files {
		cp(t, dir, out, map[string]string{filepath.Base(f): filepath.ToSlash(strings.TrimPrefix(f, dir+string(filepath.Separator)))})
	}
}

var fixtureTrees = []fixtureTree{
	{
		// Items 1 (image-template-*.yaml are published YAML, not templates),
		// 4 (the image set where it takes effect: config/manager's images:
		// entry, then config/default's image patch) and 10 (what CAPO needs).
		name: "capo", config: "capo.capirepo.yaml",
		examples: map[string]string{"templates/cluster-template.yaml": "cluster-template.yaml",
			"templates/cluster-template-topology.yaml": "cluster-template-topology.yaml", "templates/clusterclass-example-quick-start.yaml": "clusterclass-example-quick-start.yaml"},
		pipeline: func(t *testing.T, dir string) map[string][]byte {
			// manifest-modification, release-manifests, release-templates.
			fs := edited(t, dir,
				sed{"config/default/manager_image_patch.yaml", `image: .*`, "image: registry.k8s.io/capi-openstack/capi-openstack-controller:" + fixtureVersion},
				sed{"config/default/manager_pull_policy.yaml", `imagePullPolicy: .*`, "imagePullPolicy: IfNotPresent"})
			out := map[string][]byte{"infrastructure-components.yaml": kustomizeCLI(t, fs, filepath.Join(dir, "config", "default"), false)}
			cp(t, dir, out, map[string]string{provider.MetadataFile: "metadata.yaml"})
			for _, glob := range []string{"cluster-template*.yaml", "clusterclass*.yaml", "image-template*.yaml"} {
				cpGlob(t, dir, out, "templates", glob)
			}
			return out
		},
		warnings: []string{"infrastructure-openstack: image-template-bastion.yaml, image-template-node.yaml published as they are"},
	},
	{
		// Items 1 (cluster-class.yaml and cluster-class-topology-example.yaml
		// hold a ClusterClass and a topology Cluster, and are no templates) and
		// 2 (the remediation templates a class and a MachineHealthCheck name).
		name: "caph", config: "caph.capirepo.yaml",
		pipeline: caphPipeline,
		warnings: []string{"infrastructure-hetzner: cluster-class-topology-example.yaml, cluster-class.yaml published as they are"},
	},
	{
		// Item 2, in a class clusterctl reads: cluster-class.yaml also
		// published as clusterclass-quick-start.yaml (so a topology Cluster of
		// class quick-start can be generated) is linted as a ClusterClass,
		// and the remediation templates its control plane and machine
		// deployment health checks name are no InfraMachines (CAPI309/CAPI310).
		name: "caph", config: "caph.capirepo.yaml",
		extraConfig: "      clusterclass-quick-start.yaml: templates/cluster-templates/v1beta1/cluster-class.yaml\n",
		pipeline: func(t *testing.T, dir string) map[string][]byte {
			out := caphPipeline(t, dir)
			cp(t, dir, out, map[string]string{"clusterclass-quick-start.yaml": "templates/cluster-templates/v1beta1/cluster-class.yaml"})
			return out
		},
		warnings: []string{"infrastructure-hetzner: cluster-class-topology-example.yaml, cluster-class.yaml published as they are"},
	},
	{
		// Items 5 (the k3s flavors' sed as a release patch on the templates a
		// glob names), 6 (a script published as it is) and 7 (nested flavors:
		// <distro>/default/ is cluster-template-<distro>.yaml; a nested flavor a
		// top-level one builds on, published by name).
		name: "capl", config: "capl.capirepo.yaml",
		pipeline: func(t *testing.T, dir string) map[string][]byte {
			fs := edited(t, dir, sed{"config/default/manager_image_patch.yaml", `image: .*`, "image: docker.io/linode/cluster-api-provider-linode:" + fixtureVersion})
			out := map[string][]byte{"infrastructure-components.yaml": kustomizeCLI(t, fs, filepath.Join(dir, "config", "default"), false)}
			cp(t, dir, out, map[string]string{provider.MetadataFile: "metadata.yaml", "pre-kubeadminit.sh": "scripts/pre-kubeadminit.sh"})
			// hack/generate-flavors.sh, then mv templates/cluster-template* out.
			flavors := filepath.Join(dir, "templates", "flavors")
			disk := filesys.MakeFsOnDisk()
			for file, flavor := range map[string]string{
				"cluster-template.yaml":                    "kubeadm/default", // cluster-template-kubeadm.yaml, moved
				"cluster-template-kubeadm-dual-stack.yaml": "kubeadm/dual-stack",
				"cluster-template-k3s.yaml":                "k3s/default",
				"cluster-template-k3s-etcd-backup.yaml":    "k3s/etcd-backup",
				"cluster-template-dual-stack.yaml":         "dual-stack",
			} {
				out[file] = kustomizeCLI(t, disk, filepath.Join(flavors, filepath.FromSlash(flavor)), false)
			}
			out["cluster-template-k3s-etcd-backup.yaml"] = bytes.ReplaceAll(out["cluster-template-k3s-etcd-backup.yaml"], []byte("${CERTPATH}"), []byte("/var/lib/rancher/k3s/server/tls"))
			return out
		},
		warnings: []string{"infrastructure-linode: pre-kubeadminit.sh published as they are"},
	},
	{
		// Item 6: a variables file beside the template, as it is.
		name: "capm3", config: "capm3.capirepo.yaml",
		examples: map[string]string{"examples/clusterctl-templates/clusterctl-cluster.yaml": "cluster-template.yaml"},
		pipeline: func(t *testing.T, dir string) map[string][]byte {
			fs := edited(t, dir, sed{"config/default/manager_image_patch.yaml", `image: .*`, "image: quay.io/metal3-io/cluster-api-provider-metal3:" + fixtureVersion})
			out := map[string][]byte{"infrastructure-components.yaml": kustomizeCLI(t, fs, filepath.Join(dir, "config", "default"), false)}
			cp(t, dir, out, map[string]string{provider.MetadataFile: "metadata.yaml",
				"cluster-template.yaml": "examples/clusterctl-templates/clusterctl-cluster.yaml",
				"example_variables.rc":  "examples/clusterctl-templates/example_variables.rc"})
			return out
		},
		warnings: []string{"infrastructure-metal3: example_variables.rc published as they are"},
	},
	{
		// Items 3 (the pull policy on the manager container only, not on the
		// bundled operator's init container a replacement gives the release
		// image) and 9 (a one-space default; the tag image.tag sets).
		name: "bundled",
		pipeline: func(t *testing.T, dir string) map[string][]byte {
			fs := edited(t, dir,
				sed{"config/default/manager_image_patch.yaml", `image: .*`, "image: ghcr.io/acme/acme-controller:" + strings.TrimPrefix(fixtureVersion, "v")},
				sed{"config/default/manager_pull_policy.yaml", `imagePullPolicy: .*`, "imagePullPolicy: IfNotPresent"})
			out := map[string][]byte{"infrastructure-components.yaml": kustomizeCLI(t, fs, filepath.Join(dir, "config", "default"), false)}
			cp(t, dir, out, map[string]string{provider.MetadataFile: "metadata.yaml"})
			return out
		},
	},
	{
		// Issue 45, item 1: two managers from two images, both written with
		// the placeholder controller (siderolabs/sidero); its Dockerfile's
		// release stage runs `kustomize edit set image controller=...` in
		// each app's config/manager, then `kustomize build config`.
		name: "sidero",
		pipeline: func(t *testing.T, dir string) map[string][]byte {
			set := func(app string) sed {
				return sed{"app/" + app + "/config/manager/kustomization.yaml", `(?s)$`,
					"images:\n- name: controller\n  newName: ghcr.io/siderolabs/" + app + "\n  newTag: " + fixtureVersion + "\n"}
			}
			fs := edited(t, dir, set("caps-controller-manager"), set("sidero-controller-manager"))
			out := map[string][]byte{"infrastructure-components.yaml": kustomizeCLI(t, fs, filepath.Join(dir, "config"), false)}
			cp(t, dir, out, map[string]string{provider.MetadataFile: "metadata.yaml"})
			return out
		},
	},
	{
		// Item 8: what the lint finds in templates as they are copied.
		name:     "recall",
		examples: map[string]string{"templates/cluster-template.yaml": "cluster-template.yaml"},
		pipeline: func(t *testing.T, dir string) map[string][]byte {
			out := map[string][]byte{"infrastructure-components.yaml": kustomizeCLI(t, edited(t, dir,
				sed{"config/manager/manager.yaml", `image: ghcr.io/capirepo/capi-example-controller:dev`, "image: ghcr.io/capirepo/capi-example-controller:" + fixtureVersion}),
				filepath.Join(dir, "config", "default"), false)}
			cp(t, dir, out, map[string]string{provider.MetadataFile: "metadata.yaml"})
			cpGlob(t, dir, out, "templates", "cluster-template*")
			return out
		},
		findings: []string{
			"CAPI503 cluster-template-empty.yaml",
			"CAPI506 cluster-template-topology.yaml",
			"CAPI507 cluster-template-misspelt.yaml",
		},
		unverifiable: []string{"cluster-template-topology.yaml"},
	},
}

// caphPipeline is CAPH's make release: the two seds, release-manifests,
// cluster-templates and the cp of cluster-class*.
var caphPipeline = func(t *testing.T, dir string) map[string][]byte {
	fs := edited(t, dir,
		sed{"config/default/manager_config_patch.yaml", `image: .*`, "image: ghcr.io/syself/caph:" + fixtureVersion},
		sed{"config/default/manager_pull_policy.yaml", `imagePullPolicy: .*`, "imagePullPolicy: IfNotPresent"})
	out := map[string][]byte{"infrastructure-components.yaml": kustomizeCLI(t, fs, filepath.Join(dir, "config", "default"), false)}
	cp(t, dir, out, map[string]string{provider.MetadataFile: "metadata.yaml"})
	// cluster-templates: kustomize build --load-restrictor LoadRestrictionsNone.
	v1beta1 := filepath.Join(dir, "templates", "cluster-templates", "v1beta1")
	for file, flavor := range map[string]string{
		"cluster-template.yaml":                                  "hcloud",
		"cluster-template-hcloud.yaml":                           "hcloud",
		"cluster-template-hcloud-network.yaml":                   "hcloud-network",
		"cluster-template-hetzner-baremetal-control-planes.yaml": "hetzner-baremetal-control-planes",
	} {
		out[file] = kustomizeCLI(t, filesys.MakeFsOnDisk(), filepath.Join(v1beta1, flavor), true)
	}
	cpGlob(t, dir, out, "templates/cluster-templates/v1beta1", "cluster-class*")
	return out
}

// writeFixture writes a fixture tree: the example provider's config/ and
// metadata.yaml, the fixture's files over them, the example templates named.
func writeFixture(t *testing.T, ft fixtureTree) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{}
	add := func(root, under string) {
		err := filepath.WalkDir(filepath.Join(root, under), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			files[filepath.ToSlash(rel)] = string(data)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, base := range []string{"config/crd", "config/rbac", "config/manager", "metadata.yaml"} {
		add(exampleTree, base)
	}
	add(filepath.Join(fixtureTreesDir, ft.name), "")
	for to, from := range ft.examples {
		data, err := os.ReadFile(filepath.Join(exampleTree, "templates", from))
		if err != nil {
			t.Fatal(err)
		}
		files[to] = string(data)
	}
	testtree.WriteInto(t, dir, files)
	return dir
}

// TestFixtureTrees_SameAsTheMaintainersPipeline builds each fixture tree
// with its config and compares every release file, byte for byte, with its
// maintainers' pipeline (and the release holds no other file); the lint gate
// reports the shape's true findings and no other error; clusterctl's client
// reads the release back, every flavor and class but the true findings'.
func TestFixtureTrees_SameAsTheMaintainersPipeline(t *testing.T) {
	for _, ft := range fixtureTrees {
		name := ft.name
		if ft.extraConfig != "" {
			name += "+" + strings.Fields(ft.extraConfig)[0]
		}
		t.Run(name, func(t *testing.T) {
			dir := writeFixture(t, ft)
			configPath := ""
			if ft.config != "" {
				data, err := os.ReadFile(filepath.Join("..", "docs", "configs", ft.config))
				if err != nil {
					t.Fatal(err)
				}
				configPath = filepath.Join(t.TempDir(), ft.config)
				if err := os.WriteFile(configPath, append(data, ft.extraConfig...), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := provider.LoadConfig(dir, configPath)
			if err != nil {
				t.Fatal(err)
			}
			res, err := builder.Build(context.Background(), builder.Options{Dir: dir, Config: cfg, Version: fixtureVersion})
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			for _, w := range ft.warnings {
				if !slices.ContainsFunc(res.Warnings, func(got string) bool { return strings.Contains(got, w) }) {
					t.Errorf("no warning %q: %v", w, res.Warnings)
				}
			}
			for _, got := range res.Warnings {
				if !slices.ContainsFunc(ft.warnings, func(w string) bool { return strings.Contains(got, w) }) {
					t.Errorf("warning: %s", got)
				}
			}

			// The lint gate: the shape's true findings, and no other error.
			tags := map[string]string{}
			for _, p := range res.Providers {
				tags[p.Label] = p.ImageTag
			}
			rep := contract.Lint(res.Release, contract.Options{Waivers: contract.Waivers(cfg.Lint), Findings: res.Findings, Sources: res.Sources, ImageTags: tags})
			var got []string
			for _, f := range rep.Findings {
				key := f.Rule + " " + filepath.Base(f.File)
				if slices.Contains(ft.findings, key) || f.Severity != contract.Info {
					got = append(got, key)
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(ft.findings, slices.Compact(got)); diff != "" || len(rep.Unmatched) > 0 {
				var b strings.Builder
				_ = rep.WriteText(&b)
				t.Errorf("lint findings (-want +got):\n%s\nunmatched waivers: %v\n%s", diff, rep.Unmatched, b.String())
			}

			// Every file as the maintainers' pipeline makes it.
			p := res.Release.Providers[0]
			want := ft.pipeline(t, dir)
			var names []string
			for _, f := range p.Files {
				names = append(names, f.Name)
				w, ok := want[f.Name]
				if !ok {
					t.Errorf("the release has %s, which the maintainers' pipeline does not publish", f.Name)
					continue
				}
				if !bytes.Equal(f.Data, w) {
					t.Errorf("%s differs from the maintainers' pipeline (-pipeline +capirepo):\n%s", f.Name, cmp.Diff(string(w), string(f.Data)))
				}
			}
			if diff := cmp.Diff(slices.Sorted(maps.Keys(want)), names); diff != "" {
				t.Errorf("release files (-pipeline +capirepo):\n%s", diff)
			}

			// Written, listed in checksums.txt, and read back by clusterctl.
			root := t.TempDir()
			if err := release.Write(root, res.Release); err != nil {
				t.Fatal(err)
			}
			loaded, err := release.LoadProvider(filepath.Join(root, p.Label(), fixtureVersion))
			if err != nil {
				t.Fatalf("the written release does not check against its checksums.txt: %v", err)
			}
			if len(loaded.Files) != len(p.Files) {
				t.Errorf("checksums.txt covers %d files, the release has %d", len(loaded.Files), len(p.Files))
			}
			targets, err := verify.DirRepos(root, fixtureVersion)
			if err != nil {
				t.Fatal(err)
			}
			for i := range targets {
				for _, f := range p.Files {
					if !slices.Contains(ft.unverifiable, f.Name) {
						targets[i].Files = append(targets[i].Files, f.Name)
					}
				}
			}
			vrep, err := verify.Repository(context.Background(), targets, verify.Options{})
			if err != nil {
				t.Fatalf("clusterctl cannot read the release back: %v", err)
			}
			flavors := 0
			for _, f := range p.Files {
				if release.IsFlavor(f.Name) && !slices.Contains(ft.unverifiable, f.Name) {
					flavors++
				}
			}
			if got := len(vrep.Providers[0].Flavors); got != flavors {
				t.Errorf("clusterctl read %d flavors, the release has %d it can read", got, flavors)
			}
		})
	}
}
