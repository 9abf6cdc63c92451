package builder

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/release"
)

// Template layouts of real provider trees (issue 19 item 1), built as small
// fixture trees of the same shape. Each flavor is a real kustomization,
// rendered by kustomize in process.

const (
	kcp = "apiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: KubeadmControlPlane\nmetadata:\n  name: ${CLUSTER_NAME}-control-plane\nspec:\n  replicas: ${CONTROL_PLANE_MACHINE_COUNT}\n"
	// a Cluster and its control plane: what a flavor's base holds.
	baseTemplate = cluster + "---\n" + kcp
	// a patch as flavors apply it.
	replicasPatch = "- op: replace\n  path: /spec/replicas\n  value: 3\n"
	classQuick    = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata:\n  name: quick\nspec: {}\n"
)

func templateNames(p *release.Provider) []string {
	var out []string
	for _, f := range p.Files {
		if strings.HasPrefix(f.Name, "cluster-template") || strings.HasPrefix(f.Name, "clusterclass-") || f.Name == "rosa-network.yaml" {
			out = append(out, f.Name)
		}
	}
	return out
}

func fileData(t *testing.T, p *release.Provider, name string) string {
	t.Helper()
	f, ok := p.File(name)
	if !ok {
		t.Fatalf("release has no %s", name)
	}
	return string(f.Data)
}

func hasWarning(warnings []string, parts ...string) bool {
	for _, w := range warnings {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(w, p)
		}
		if all {
			return true
		}
	}
	return false
}

func buildErr(t *testing.T, files map[string]string) error {
	t.Helper()
	dir := testtree.Write(t, testtree.Minimal(files))
	_, err := build(t, dir, Options{})
	if err == nil {
		t.Fatal("Build succeeded, want an error")
	}
	return err
}

func wantErrParts(t *testing.T, err error, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error does not mention %q:\n%v", p, err)
		}
	}
}

// azureLike is the shape of cluster-api-provider-azure's templates/:
// templates/flavors/{base,default,<name>}/kustomization.yaml, the renders
// committed beside them as templates/cluster-template[-<name>].yaml
// (hack/gen-flavors.sh, `make generate-flavors`), and shared pieces outside
// the flavor folders (templates/azure-cluster-identity/) that flavors load
// with --load-restrictor LoadRestrictionsNone.
func azureLike(overrides map[string]string) map[string]string {
	files := map[string]string{
		"Makefile": ".PHONY: generate-flavors\ngenerate-flavors: $(KUSTOMIZE) generate-addons\n\t./hack/gen-flavors.sh\n\ngenerate-e2e-templates: $(KUSTOMIZE)\n\techo\n",
		"templates/flavors/base/kustomization.yaml":    "resources:\n- cluster-template.yaml\n",
		"templates/flavors/base/cluster-template.yaml": baseTemplate,
		"templates/flavors/default/kustomization.yaml": "resources:\n- ../base\n",
		"templates/flavors/aad/kustomization.yaml":     "resources:\n- ../base\npatches:\n- path: patches/kcp.yaml\n  target: {kind: KubeadmControlPlane}\n",
		"templates/flavors/aad/patches/kcp.yaml":       replicasPatch,
		// The committed renders: same objects, other order and quoting, as
		// `kustomize build --reorder none` writes them.
		"templates/cluster-template.yaml":     kcp + "---\n" + strings.Replace(cluster, "${CLUSTER_NAME}", `"${CLUSTER_NAME}"`, 1),
		"templates/cluster-template-aad.yaml": strings.Replace(kcp, "${CONTROL_PLANE_MACHINE_COUNT}", "3", 1) + "---\n" + cluster,
	}
	for k, v := range overrides {
		files[k] = v
	}
	return files
}

// TestBuild_Layout_CommittedRendersBesideFlavors: flavor sources and their
// committed renders side by side (cluster-api-provider-azure templates/flavors/
// and templates/cluster-template-*.yaml): equal objects make one file, the
// committed one, as the maintainers publish it.
func TestBuild_Layout_CommittedRendersBesideFlavors(t *testing.T) {
	files := azureLike(nil)
	dir := testtree.Write(t, testtree.Minimal(files))
	res := mustBuild(t, dir, Options{})
	p := res.Release.Providers[0]
	if diff := cmp.Diff([]string{"cluster-template-aad.yaml", "cluster-template.yaml"}, templateNames(p)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	if got := fileData(t, p, "cluster-template-aad.yaml"); got != files["templates/cluster-template-aad.yaml"] {
		t.Errorf("cluster-template-aad.yaml is not the committed file:\n%s", got)
	}
	if hasWarning(res.Warnings, "flavors/base") {
		t.Errorf("base is used by the flavors, yet warned about: %v", res.Warnings)
	}
}

func TestBuild_Layout_StaleCommittedRender(t *testing.T) {
	stale := azureLike(map[string]string{"templates/cluster-template-aad.yaml": baseTemplate})
	err := buildErr(t, stale)
	// Names the file, the object and the maintainers' own command.
	wantErrParts(t, err, "templates/cluster-template-aad.yaml: the committed render is stale",
		"flavor aad", "KubeadmControlPlane ${CLUSTER_NAME}-control-plane differently", "`make generate-flavors`", "templates.committed")

	// The config may say which side wins.
	for _, policy := range []string{"source", "committed"} {
		t.Run(policy, func(t *testing.T) {
			files := azureLike(map[string]string{
				"templates/cluster-template-aad.yaml": baseTemplate,
				"capirepo.yaml":                       "providers:\n- name: infrastructure-test\n  templates: {committed: " + policy + "}\n",
			})
			dir := testtree.Write(t, testtree.Minimal(files))
			res := mustBuild(t, dir, Options{})
			got := fileData(t, res.Release.Providers[0], "cluster-template-aad.yaml")
			if policy == "source" && !strings.Contains(got, "replicas: 3") {
				t.Errorf("source: published the committed file:\n%s", got)
			}
			if policy == "committed" && got != baseTemplate {
				t.Errorf("committed: published the render:\n%s", got)
			}
			if !hasWarning(res.Warnings, "cluster-template-aad.yaml", "templates.committed: "+policy) {
				t.Errorf("no warning about the stale render: %v", res.Warnings)
			}
		})
	}
}

// TestBuild_Layout_FlavorsFolderElsewhere: flavor kustomizations under
// templates/cluster-templates/v1beta1/<flavor>/; the config names the folder.
func TestBuild_Layout_FlavorsFolderElsewhere(t *testing.T) {
	files := map[string]string{
		"capirepo.yaml": "providers:\n- name: infrastructure-test\n  templates:\n    flavors: [templates/cluster-templates/v1beta1]\n",
		"templates/cluster-templates/v1beta1/default/kustomization.yaml": "resources:\n- c.yaml\n",
		"templates/cluster-templates/v1beta1/default/c.yaml":             baseTemplate,
		"templates/cluster-templates/v1beta1/flatcar/kustomization.yaml": "resources:\n- ../default\n",
	}
	dir := testtree.Write(t, testtree.Minimal(files))
	res := mustBuild(t, dir, Options{})
	if diff := cmp.Diff([]string{"cluster-template-flatcar.yaml", "cluster-template.yaml"}, templateNames(res.Release.Providers[0])); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
}

// TestBuild_Layout_LoadRestrictorNone: flavors that load shared pieces
// outside their folder (cluster-api-provider-azure flavors patch with
// templates/azure-cluster-identity/*.yaml, rendered with
// --load-restrictor LoadRestrictionsNone).
func TestBuild_Layout_LoadRestrictorNone(t *testing.T) {
	shared := map[string]string{
		"templates/azure-cluster-identity/identity-ref.yaml": "- op: add\n  path: /metadata/labels\n  value: {identity: shared}\n",
		"templates/flavors/aad/kustomization.yaml":           "resources:\n- ../base\npatches:\n- path: ../../azure-cluster-identity/identity-ref.yaml\n  target: {kind: Cluster}\n",
		"templates/cluster-template-aad.yaml":                "",
		"templates/cluster-template.yaml":                    "",
	}
	// Root-only loading, kustomize's default, refuses the shared file: the
	// error names the kustomization, the file, and the key that allows it
	// (issue 45.4), kustomize's own words once.
	err := buildErr(t, azureLike(shared))
	wantErrParts(t, err, "flavor aad", "templates/flavors/aad/kustomization.yaml loads templates/azure-cluster-identity/identity-ref.yaml, outside its folder",
		"set templates.loadRestrictor: none for this provider in capirepo.yaml")
	if n := strings.Count(err.Error(), "is not in or below"); n != 1 {
		t.Errorf("kustomize's refusal is said %d times, want once: %v", n, err)
	}
	// The same for a resource (kustomize then also says it is no folder).
	res := azureLike(shared)
	res["templates/azure-cluster-identity/identity.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: identity}\n"
	res["templates/flavors/aad/kustomization.yaml"] = "resources:\n- ../base\n- ../../azure-cluster-identity/identity.yaml\n"
	wantErrParts(t, buildErr(t, res), "templates/flavors/aad/kustomization.yaml loads templates/azure-cluster-identity/identity.yaml, outside its folder",
		"set templates.loadRestrictor: none")

	// The per-provider switch allows it.
	on := azureLike(shared)
	on["capirepo.yaml"] = "providers:\n- name: infrastructure-test\n  templates: {loadRestrictor: none}\n"
	dir := testtree.Write(t, testtree.Minimal(on))
	built := mustBuild(t, dir, Options{})
	if got := fileData(t, built.Release.Providers[0], "cluster-template-aad.yaml"); !strings.Contains(got, "identity: shared") {
		t.Errorf("shared patch not applied:\n%s", got)
	}

	// Still confined to the tree: .. out of --dir, absolute paths and symlinks stay refused.
	t.Run("dotdot", func(t *testing.T) {
		outside := t.TempDir()
		testtree.WriteInto(t, outside, map[string]string{"p.yaml": shared["templates/azure-cluster-identity/identity-ref.yaml"]})
		files := azureLike(shared)
		files["capirepo.yaml"] = on["capirepo.yaml"]
		dir := testtree.Write(t, testtree.Minimal(files))
		rel, _ := filepath.Rel(filepath.Join(dir, "templates/flavors/aad"), filepath.Join(outside, "p.yaml"))
		testtree.WriteInto(t, dir, map[string]string{"templates/flavors/aad/kustomization.yaml": "resources:\n- ../base\npatches:\n- path: " + rel + "\n  target: {kind: Cluster}\n"})
		_, err := build(t, dir, Options{})
		if err == nil {
			t.Fatal("a patch outside the tree was loaded")
		}
		wantErrParts(t, err, "outside the provider tree")
	})
	t.Run("absolute", func(t *testing.T) {
		files := azureLike(shared)
		files["capirepo.yaml"] = on["capirepo.yaml"]
		dir := testtree.Write(t, testtree.Minimal(files))
		abs := filepath.Join(dir, "templates/azure-cluster-identity/identity-ref.yaml")
		testtree.WriteInto(t, dir, map[string]string{"templates/flavors/aad/kustomization.yaml": "resources:\n- ../base\npatches:\n- path: " + abs + "\n  target: {kind: Cluster}\n"})
		_, err := build(t, dir, Options{})
		if err == nil {
			t.Fatal("an absolute patch path was loaded")
		}
		wantErrParts(t, err, "templates/flavors/aad/kustomization.yaml", "patches[0].path", "is absolute")
	})
	t.Run("symlink", func(t *testing.T) {
		outside := t.TempDir()
		testtree.WriteInto(t, outside, map[string]string{"p.yaml": shared["templates/azure-cluster-identity/identity-ref.yaml"]})
		files := azureLike(shared)
		files["capirepo.yaml"] = on["capirepo.yaml"]
		dir := testtree.Write(t, testtree.Minimal(files))
		link := filepath.Join(dir, "templates/azure-cluster-identity/identity-ref.yaml")
		if err := os.Remove(link); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, "p.yaml"), link); err != nil {
			t.Fatal(err)
		}
		_, err := build(t, dir, Options{})
		if err == nil {
			t.Fatal("a symlink out of the tree was followed")
		}
		wantErrParts(t, err, "symlink", "outside the provider tree")
	})
}

// TestBuild_Layout_FileMapping: a template published under another name
// (examples/clusterctl-templates/clusterctl-cluster.yaml as
// cluster-template.yaml), and a kustomization folder mapped to a name.
func TestBuild_Layout_FileMapping(t *testing.T) {
	files := map[string]string{
		"capirepo.yaml": `providers:
- name: infrastructure-test
  templates:
    files:
      cluster-template.yaml: examples/clusterctl-templates/clusterctl-cluster.yaml
      cluster-template-ha.yaml: examples/ha
`,
		"examples/clusterctl-templates/clusterctl-cluster.yaml": baseTemplate,
		"examples/ha/kustomization.yaml":                        "resources:\n- ../clusterctl-templates/clusterctl-cluster.yaml\npatches:\n- path: p.yaml\n  target: {kind: KubeadmControlPlane}\n",
		"examples/ha/p.yaml":                                    replicasPatch,
	}
	// The kustomization loads a file beside its folder: that needs loadRestrictor none.
	files["capirepo.yaml"] = strings.Replace(files["capirepo.yaml"], "    files:", "    loadRestrictor: none\n    files:", 1)
	dir := testtree.Write(t, testtree.Minimal(files))
	res := mustBuild(t, dir, Options{})
	p := res.Release.Providers[0]
	if diff := cmp.Diff([]string{"cluster-template-ha.yaml", "cluster-template.yaml"}, templateNames(p)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	if got := fileData(t, p, "cluster-template.yaml"); got != baseTemplate {
		t.Errorf("cluster-template.yaml:\n%s", got)
	}
	if got := fileData(t, p, "cluster-template-ha.yaml"); !strings.Contains(got, "replicas: 3") {
		t.Errorf("cluster-template-ha.yaml not rendered:\n%s", got)
	}
}

// TestBuild_Layout_NoTemplatesWarns: an infrastructure provider whose
// templates setting finds nothing is warned about; none: true is silent.
func TestBuild_Layout_NoTemplatesWarns(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{"templates/README.md": "templates live elsewhere"}))
	res := mustBuild(t, dir, Options{})
	if !hasWarning(res.Warnings, "infrastructure-test", "no cluster templates", "templates: {none: true}") {
		t.Errorf("no warning: %v", res.Warnings)
	}
	testtree.WriteInto(t, dir, map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-test\n  templates: {none: true}\n"})
	res = mustBuild(t, dir, Options{})
	if hasWarning(res.Warnings, "no cluster templates") {
		t.Errorf("warned although none: true: %v", res.Warnings)
	}
}

// TestBuild_Layout_MonorepoTemplatesOnlyWhereConfigured: in a tree with a
// bootstrap and an infrastructure provider, templates/ goes to the
// infrastructure provider; the bootstrap provider gets none unless asked.
func TestBuild_Layout_MonorepoTemplatesOnlyWhereConfigured(t *testing.T) {
	m := testtree.Minimal(nil)
	files := map[string]string{
		"templates/cluster-template.yaml":             baseTemplate,
		"capirepo.yaml":                               "providers:\n- name: infrastructure-test\n- name: bootstrap-test\n  kustomize: bootstrap/config/default\n",
		"bootstrap/config/default/kustomization.yaml": strings.Replace(strings.Replace(m["config/default/kustomization.yaml"], "infrastructure-test", "bootstrap-test", 1), "../manager", "../../../config/manager", 1),
		"bootstrap/config/default/namespace.yaml":     m["config/default/namespace.yaml"],
	}
	dir := testtree.Write(t, testtree.Minimal(files))
	res := mustBuild(t, dir, Options{Image: "registry.example.com/test/manager"})
	got := map[string][]string{}
	for _, p := range res.Providers {
		got[p.Label] = p.Templates
	}
	want := map[string][]string{"infrastructure-test": {"cluster-template.yaml"}, "bootstrap-test": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("templates per provider (-want +got):\n%s", diff)
	}
}

// TestBuild_Layout_NestedFlavors: templates/flavors/<distro>/<name>/ is
// flavor <distro>-<name>, and <distro>/default/ flavor <distro> (as
// cluster-api-provider-linode's generate-flavors.sh names it); a
// kustomization deeper still, or one no flavor uses, is a warning naming it,
// never silence, and so is a nested flavor folder a flavor uses as a base.
func TestBuild_Layout_NestedFlavors(t *testing.T) {
	files := map[string]string{
		"templates/flavors/centos/shared/kustomization.yaml":  "resources:\n- ../../base\n",
		"templates/flavors/centos-ha/kustomization.yaml":      "resources:\n- ../centos/shared\n",
		"templates/flavors/bases/common/kustomization.yaml":   "resources:\n- ../../base\n",
		"templates/flavors/centos-ha-2/kustomization.yaml":    "resources:\n- ../bases/common\n",
		"templates/flavors/base/kustomization.yaml":           "resources:\n- c.yaml\n",
		"templates/flavors/base/c.yaml":                       baseTemplate,
		"templates/flavors/ubuntu/default/kustomization.yaml": "resources:\n- ../../base\n",
		"templates/flavors/ubuntu/ha/kustomization.yaml":      "resources:\n- ../../base\npatches:\n- path: p.yaml\n  target: {kind: KubeadmControlPlane}\n",
		"templates/flavors/ubuntu/ha/p.yaml":                  replicasPatch,
		"templates/flavors/flatcar/v1/x/kustomization.yaml":   "resources:\n- ../../../base\n",
		"templates/flavors/base-old/kustomization.yaml":       "resources:\n- ../base\n",
		// inside a flavor, used by nothing
		"templates/flavors/ubuntu/ha/old/kustomization.yaml": "resources:\n- ../../../base\n",
	}
	dir := testtree.Write(t, testtree.Minimal(files))
	res := mustBuild(t, dir, Options{})
	if diff := cmp.Diff([]string{"cluster-template-centos-ha-2.yaml", "cluster-template-centos-ha.yaml", "cluster-template-ubuntu-ha.yaml", "cluster-template-ubuntu.yaml"}, templateNames(res.Release.Providers[0])); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	if !hasWarning(res.Warnings, "templates/flavors/centos/shared: nested flavor folder used by flavor centos-ha as a base, so not published as cluster-template-centos-shared.yaml") {
		t.Errorf("no warning about the nested flavor folder taken as a base: %v", res.Warnings)
	}
	if hasWarning(res.Warnings, "bases/common") {
		t.Errorf("warned about a folder of the bases/ folder: %v", res.Warnings)
	}
	for _, unused := range []string{"templates/flavors/flatcar/v1/x", "templates/flavors/base-old", "templates/flavors/ubuntu/ha/old"} {
		if !hasWarning(res.Warnings, unused+": kustomization is not published") {
			t.Errorf("no warning about %s: %v", unused, res.Warnings)
		}
	}
	if hasWarning(res.Warnings, "templates/flavors/base:") {
		t.Errorf("warned about the base the flavors use: %v", res.Warnings)
	}

	// The config may map a folder two levels down to a name of its own.
	testtree.WriteInto(t, dir, map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-test\n  templates:\n    files: {cluster-template-flatcar.yaml: templates/flavors/flatcar/v1/x}\n"})
	res = mustBuild(t, dir, Options{})
	if diff := cmp.Diff([]string{"cluster-template-centos-ha-2.yaml", "cluster-template-centos-ha.yaml", "cluster-template-flatcar.yaml", "cluster-template-ubuntu-ha.yaml", "cluster-template-ubuntu.yaml"}, templateNames(res.Release.Providers[0])); diff != "" {
		t.Errorf("with a mapping, templates (-want +got):\n%s", diff)
	}
	if hasWarning(res.Warnings, "flatcar/v1/x") {
		t.Errorf("warned about a mapped kustomization: %v", res.Warnings)
	}
}

// TestBuild_Layout_FlavorFoldersAsTemplateNames: flavor sources named as
// their renders, templates/cluster-template-<name>/ beside
// templates/cluster-template-<name>.yaml, with shared bases in
// templates/bases/<x>/ (cluster-api-provider-ibmcloud).
func TestBuild_Layout_FlavorFoldersAsTemplateNames(t *testing.T) {
	files := map[string]string{
		"capirepo.yaml":                                         "providers:\n- name: infrastructure-test\n  templates: {dir: templates, flavors: [templates]}\n",
		"templates/bases/vpc/kustomization.yaml":                "resources:\n- c.yaml\n",
		"templates/bases/vpc/c.yaml":                            baseTemplate,
		"templates/cluster-template/kustomization.yaml":         "resources:\n- ../bases/vpc\n",
		"templates/cluster-template-powervs/kustomization.yaml": "resources:\n- ../bases/vpc\npatches:\n- path: p.yaml\n  target: {kind: KubeadmControlPlane}\n",
		"templates/cluster-template-powervs/p.yaml":             replicasPatch,
		"templates/cluster-template.yaml":                       baseTemplate,
		"templates/cluster-template-powervs.yaml":               strings.Replace(baseTemplate, "${CONTROL_PLANE_MACHINE_COUNT}", "3", 1),
	}
	dir := testtree.Write(t, testtree.Minimal(files))
	res := mustBuild(t, dir, Options{})
	if diff := cmp.Diff([]string{"cluster-template-powervs.yaml", "cluster-template.yaml"}, templateNames(res.Release.Providers[0])); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}

	// Without the flavors setting the committed files ship as they are, and
	// the sources beside them are named, never ignored without a word.
	delete(files, "capirepo.yaml")
	dir = testtree.Write(t, testtree.Minimal(files))
	res = mustBuild(t, dir, Options{})
	if !hasWarning(res.Warnings, "templates/cluster-template-powervs: kustomization is not rendered", "templates.flavors: [templates] to render it") {
		t.Errorf("no hint about the flavor sources: %v", res.Warnings)
	}

	// A source that loads a file outside its folder (ibmcloud's
	// ../addons/crs.yaml) renders only with loadRestrictor: none: the hint
	// says so, and the setting it gives builds.
	files["templates/addons/crs.yaml"] = "apiVersion: addons.cluster.x-k8s.io/v1beta2\nkind: ClusterResourceSet\nmetadata:\n  name: ${CLUSTER_NAME}-crs\nspec:\n  clusterSelector: {}\n"
	files["templates/cluster-template-powervs/kustomization.yaml"] = "resources:\n- ../bases/vpc\n- ../addons/crs.yaml\npatches:\n- path: p.yaml\n  target: {kind: KubeadmControlPlane}\n"
	files["templates/cluster-template-powervs.yaml"] += "---\n" + files["templates/addons/crs.yaml"]
	dir = testtree.Write(t, testtree.Minimal(files))
	res = mustBuild(t, dir, Options{})
	if !hasWarning(res.Warnings, "templates/cluster-template-powervs: kustomization is not rendered", "templates: {flavors: [templates], loadRestrictor: none}") {
		t.Errorf("the hint does not give the load restrictor the source needs: %v", res.Warnings)
	}
	testtree.WriteInto(t, dir, map[string]string{"capirepo.yaml": "providers:\n- name: infrastructure-test\n  templates: {flavors: [templates], loadRestrictor: none}\n"})
	res = mustBuild(t, dir, Options{})
	if len(res.Warnings) != 0 {
		t.Errorf("the hinted setting leaves warnings: %v", res.Warnings)
	}
}

// TestBuild_Layout_ClusterClassFlavor: templates/flavors/clusterclass-<name>/
// holding a ClusterClass renders to clusterclass-<name>.yaml, which a
// topology flavor then uses; a folder named so that holds a Cluster stays a flavor.
func TestBuild_Layout_ClusterClassFlavor(t *testing.T) {
	topology := cluster + "spec:\n  topology:\n    classRef:\n      name: quick\n"
	files := map[string]string{
		"templates/flavors/clusterclass-quick/kustomization.yaml": "resources:\n- class.yaml\n",
		"templates/flavors/clusterclass-quick/class.yaml":         classQuick,
		"templates/flavors/topology/kustomization.yaml":           "resources:\n- c.yaml\n",
		"templates/flavors/topology/c.yaml":                       topology,
		"templates/flavors/clusterclass-all/kustomization.yaml":   "resources:\n- c.yaml\n- ../clusterclass-quick\n",
		"templates/flavors/clusterclass-all/c.yaml":               topology,
	}
	dir := testtree.Write(t, testtree.Minimal(files))
	res := mustBuild(t, dir, Options{})
	p := res.Release.Providers[0]
	if diff := cmp.Diff([]string{"cluster-template-clusterclass-all.yaml", "cluster-template-topology.yaml", "clusterclass-quick.yaml"}, templateNames(p)); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}

	// cluster-api-provider-azure commits the render of
	// templates/flavors/clusterclass-rke2/ as
	// templates/cluster-template-clusterclass-rke2.yaml (hack/gen-flavors.sh
	// names every folder as a flavor): that file is its committed render,
	// compared and published under the maintainers' name, not twice.
	azure := map[string]string{
		"templates/flavors/clusterclass-quick/kustomization.yaml": files["templates/flavors/clusterclass-quick/kustomization.yaml"],
		"templates/flavors/clusterclass-quick/class.yaml":         classQuick,
		"templates/cluster-template.yaml":                         baseTemplate,
		"templates/cluster-template-clusterclass-quick.yaml":      classQuick,
	}
	dir = testtree.Write(t, testtree.Minimal(azure))
	res = mustBuild(t, dir, Options{})
	if diff := cmp.Diff([]string{"cluster-template-clusterclass-quick.yaml", "cluster-template.yaml"}, templateNames(res.Release.Providers[0])); diff != "" {
		t.Errorf("with a committed render, templates (-want +got):\n%s", diff)
	}
}

// TestBuild_Layout_Exclude: templates the maintainers do not release are
// left out by name pattern (cluster-api-provider-aws keeps its ROSA
// templates in templates/ beside the others); a pattern that matches
// nothing is a warning.
func TestBuild_Layout_Exclude(t *testing.T) {
	files := map[string]string{
		"capirepo.yaml":                                    "providers:\n- name: infrastructure-test\n  templates:\n    exclude: [cluster-template-rosa*.yaml, cluster-template-broken.yaml, cluster-template-gone.yaml]\n",
		"templates/cluster-template.yaml":                  baseTemplate,
		"templates/cluster-template-rosa.yaml":             baseTemplate,
		"templates/cluster-template-rosa-machinepool.yaml": baseTemplate,
		// An excluded flavor is not even rendered.
		"templates/flavors/broken/kustomization.yaml": "resources:\n- missing.yaml\n",
	}
	dir := testtree.Write(t, testtree.Minimal(files))
	res := mustBuild(t, dir, Options{})
	if diff := cmp.Diff([]string{"cluster-template.yaml"}, templateNames(res.Release.Providers[0])); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	if !hasWarning(res.Warnings, `"cluster-template-gone.yaml" matches no template`) {
		t.Errorf("no warning for the stale pattern: %v", res.Warnings)
	}
}

// TestBuild_Layout_FlavorFolderName: a flavor folder's name obeys the rule
// flavor files obey, and the error names the fix (issue 21 item 11).
func TestBuild_Layout_FlavorFolderName(t *testing.T) {
	err := buildErr(t, map[string]string{
		"templates/flavors/My Flavor/kustomization.yaml": "resources:\n- c.yaml\n",
		"templates/flavors/My Flavor/c.yaml":             baseTemplate,
	})
	wantErrParts(t, err, "templates/flavors/My Flavor", `flavor folder "My Flavor"`, `holds ' ': GitHub renames a release asset`, "GitLab's generic packages refuse the file name", `rename the folder (e.g. "My-Flavor")`, "templates.exclude")
}

// TestBuild_YAMLErrorPointsIntoTree: a YAML error names the file and its
// line in that file (not counted from the start of the document inside a
// multi-document file), the object, and the kustomization that pulled the
// file in (issue 19 item 8).
func TestBuild_YAMLErrorPointsIntoTree(t *testing.T) {
	broken := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  x: y: z\n"
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name: "components resource",
			files: map[string]string{
				"config/manager/kustomization.yaml": "resources:\n- manager.yaml\n- extra.yaml\n",
				"config/manager/extra.yaml":         broken,
			},
			want: []string{"config/manager/extra.yaml:11: YAML does not parse: document 2 (ConfigMap b): mapping values are not allowed", "pulled in by ", "config/manager/kustomization.yaml (field resources[1])"},
		},
		{
			name: "flavor patch",
			files: map[string]string{
				"templates/flavors/x/kustomization.yaml": "resources:\n- c.yaml\npatches:\n- path: p.yaml\n",
				"templates/flavors/x/c.yaml":             baseTemplate,
				"templates/flavors/x/p.yaml":             broken,
			},
			want: []string{"flavor x", "templates/flavors/x/p.yaml:11: YAML does not parse: document 2 (ConfigMap b)", "templates/flavors/x/kustomization.yaml (field patches[0].path)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErrParts(t, buildErr(t, tt.files), tt.want...)
		})
	}
	// A committed template is copied, not rendered: it goes through the
	// lint's gate (CAPI001, waivable), whose finding names the line in the
	// file and the object.
	t.Run("committed template", func(t *testing.T) {
		report := lintText(t, map[string]string{"templates/cluster-template.yaml": broken})
		for _, want := range []string{"error   CAPI001 document 2", "document 2 does not parse", "(ConfigMap b)", "from templates/cluster-template.yaml:11"} {
			if !strings.Contains(report, want) {
				t.Errorf("report lacks %q:\n%s", want, report)
			}
		}
	})
}

// lintText builds a Minimal tree with files and returns the text report of
// the lint gate the build feeds (its findings and where they came from).
func lintText(t *testing.T, files map[string]string) string {
	t.Helper()
	res, err := build(t, testtree.Write(t, testtree.Minimal(files)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := lintBuilt(res, contract.Options{}).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestBuild_CheckNamesTheFlavorSource: a check that fails on a rendered
// flavor names the folder it was rendered from, not only the file name it
// would have in the release.
func TestBuild_CheckNamesTheFlavorSource(t *testing.T) {
	report := lintText(t, map[string]string{
		"templates/flavors/ns/kustomization.yaml": "resources:\n- c.yaml\n",
		"templates/flavors/ns/c.yaml":             baseTemplate + "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: n\n",
	})
	for _, want := range []string{"cluster-template-ns.yaml\n", "CAPI501 Namespace/n", "from templates/flavors/ns/kustomization.yaml"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

// TestBuild_Layout_VariantsBesideCommittedRenders: flavor sources in another
// layout than flavors/<name>/, templates/overlays/<flavor>/<variant>/, beside
// their committed renders: each variant is rendered and compared with the
// committed file (templates.committed: check), found through
// templates.flavors or mapped in templates.files under another name, rather
// than the committed file replaced (issue 31).
func TestBuild_Layout_VariantsBesideCommittedRenders(t *testing.T) {
	ha := strings.Replace(baseTemplate, "${CONTROL_PLANE_MACHINE_COUNT}", "3", 1)
	files := map[string]string{
		"templates/overlays/base/kustomization.yaml":      "resources:\n- c.yaml\n",
		"templates/overlays/base/c.yaml":                  baseTemplate,
		"templates/overlays/ha/ubuntu/kustomization.yaml": "resources:\n- ../../base\npatches:\n- path: p.yaml\n  target: {kind: KubeadmControlPlane}\n",
		"templates/overlays/ha/ubuntu/p.yaml":             replicasPatch,
		"templates/cluster-template-ha.yaml":              baseTemplate,
		"templates/cluster-template-ha-ubuntu.yaml":       ha,
	}
	for _, tt := range []struct {
		name, config, committed, wantErr string
	}{
		{name: "found, current", config: "templates: {flavors: [templates/overlays]}", committed: ha},
		{name: "found, stale", config: "templates: {flavors: [templates/overlays]}", committed: baseTemplate,
			wantErr: "cluster-template-ha-ubuntu.yaml: the committed render is stale: flavor ha-ubuntu"},
		{name: "mapped, current", config: "templates: {files: {cluster-template-ha-ubuntu.yaml: templates/overlays/ha/ubuntu}}", committed: ha},
		{name: "mapped, stale", config: "templates: {files: {cluster-template-ha-ubuntu.yaml: templates/overlays/ha/ubuntu}}", committed: baseTemplate,
			wantErr: "cluster-template-ha-ubuntu.yaml: the committed render is stale: flavor templates.files[cluster-template-ha-ubuntu.yaml]"},
		{name: "mapped, stale, the render published", config: "templates: {committed: source, files: {cluster-template-ha-ubuntu.yaml: templates/overlays/ha/ubuntu}}", committed: baseTemplate},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := maps.Clone(files)
			fs["templates/cluster-template-ha-ubuntu.yaml"] = tt.committed
			fs["capirepo.yaml"] = "providers:\n- name: infrastructure-test\n  " + tt.config + "\n"
			res, err := build(t, testtree.Write(t, testtree.Minimal(fs)), Options{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := res.Release.Providers[0]
			if diff := cmp.Diff([]string{"cluster-template-ha-ubuntu.yaml", "cluster-template-ha.yaml"}, templateNames(p)); diff != "" {
				t.Errorf("templates (-want +got):\n%s", diff)
			}
			f, _ := p.File("cluster-template-ha-ubuntu.yaml")
			if tt.committed != ha {
				// committed: source publishes the render, with a warning.
				if !strings.Contains(string(f.Data), "replicas: 3") || !hasWarning(res.Warnings, "the committed render is stale", "templates.committed: source") {
					t.Errorf("not the render published (warnings %v):\n%s", res.Warnings, f.Data)
				}
				return
			}
			if string(f.Data) != ha {
				t.Errorf("not the committed file published:\n%s", f.Data)
			}
			if len(res.Warnings) != 0 {
				t.Errorf("warnings: %v", res.Warnings)
			}
		})
	}
	// Without either, the committed files ship as they are and the sources
	// beside them are named, with the setting that compares them.
	res := mustBuild(t, testtree.Write(t, testtree.Minimal(files)), Options{})
	if !hasWarning(res.Warnings, "templates/overlays/ha/ubuntu: kustomization is not rendered; it looks like the source of cluster-template-ha-ubuntu.yaml: add templates.flavors: [templates/overlays]") {
		t.Errorf("no hint about the variant's source: %v", res.Warnings)
	}
}
