package builder

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/testtree"
)

// bundledOperator is a tree whose config/default also deploys another
// operator's Deployment with a container named manager (issue 19, 4a).
func bundledOperator(overrides map[string]string) map[string]string {
	files := testtree.Minimal(map[string]string{
		"config/default/kustomization.yaml": `namespace: test-system
namePrefix: test-
labels:
- includeSelectors: true
  pairs:
    cluster.x-k8s.io/provider: infrastructure-test
resources:
- namespace.yaml
- ../manager
- ../operator
`,
		"config/operator/kustomization.yaml": "resources:\n- operator.yaml\n",
		"config/operator/operator.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: bundled-operator
  namespace: system
spec:
  selector:
    matchLabels: {app: bundled}
  template:
    metadata:
      labels: {app: bundled}
    spec:
      containers:
      - name: manager
        image: quay.io/other/operator:v2.0.0
        imagePullPolicy: Always
`,
	})
	for k, v := range overrides {
		files[k] = v
	}
	return files
}

func containerField(t *testing.T, res *Result, deployment, container, field string) string {
	t.Helper()
	d := find(t, objects(t, res.Release.Providers[0].Components().Data), "Deployment", deployment)
	return lookup(t, d, "spec", "template", "spec", "containers", "[name="+container+"]", field)
}

func TestBuild_BundledOperatorManagerAmbiguousIsRefusedWithCandidates(t *testing.T) {
	dir := testtree.Write(t, bundledOperator(nil))
	_, err := build(t, dir, Options{})
	if err == nil {
		t.Fatal("built without knowing which manager is the provider's")
	}
	for _, want := range []string{"Deployment test-system/test-bundled-operator", "Deployment test-system/test-controller-manager",
		"quay.io/other/operator:v2.0.0", "(registry.example.com/test/manager", "image.name: quay.io/other/operator", "capirepo.yaml"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %q:\n%v", want, err)
		}
	}
}

func TestBuild_BundledOperatorTargetedByTheKustomizationsImageEntry(t *testing.T) {
	// The provider's kustomization names its own image in images:, as
	// `kustomize edit set image` leaves it; the bundled operator's is untouched.
	dir := testtree.Write(t, bundledOperator(map[string]string{
		"config/manager/kustomization.yaml": "resources:\n- manager.yaml\nimages:\n- name: registry.example.com/test/manager\n  newTag: main\n",
	}))
	res := mustBuild(t, dir, Options{Image: "ghcr.io/acme/manager"})
	if got := containerField(t, res, "test-controller-manager", "manager", "image"); got != "ghcr.io/acme/manager:v1.2.3" {
		t.Errorf("provider manager image = %s", got)
	}
	if got := containerField(t, res, "test-bundled-operator", "manager", "image"); got != "quay.io/other/operator:v2.0.0" {
		t.Errorf("bundled operator image changed: %s", got)
	}
}

func TestBuild_BundledOperatorTargetedByConfigAndPullPolicyOnlyOnTheProvidersManager(t *testing.T) {
	dir := testtree.Write(t, bundledOperator(map[string]string{
		"capirepo.yaml": "providers:\n- name: infrastructure-test\n  image: {name: registry.example.com/test/manager, pullPolicy: IfNotPresent}\n",
	}))
	res := mustBuild(t, dir, Options{})
	if got := containerField(t, res, "test-controller-manager", "manager", "image"); got != "registry.example.com/test/manager:v1.2.3" {
		t.Errorf("provider manager image = %s", got)
	}
	if got := containerField(t, res, "test-controller-manager", "manager", "imagePullPolicy"); got != "IfNotPresent" {
		t.Errorf("provider manager pull policy = %s", got)
	}
	if got := containerField(t, res, "test-bundled-operator", "manager", "imagePullPolicy"); got != "Always" {
		t.Errorf("bundled operator pull policy = %s, want its own Always", got)
	}
	if got := containerField(t, res, "test-bundled-operator", "manager", "image"); got != "quay.io/other/operator:v2.0.0" {
		t.Errorf("bundled operator image changed: %s", got)
	}
}

func TestBuild_PullPolicyTheTreeSetsIsKept(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"config/manager/kustomization.yaml": "resources:\n- manager.yaml\npatches:\n- path: policy.yaml\n",
		"config/manager/policy.yaml":        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller-manager\n  namespace: system\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        imagePullPolicy: Always\n",
	}))
	res := mustBuild(t, dir, Options{})
	if got := containerField(t, res, "test-controller-manager", "manager", "imagePullPolicy"); got != "Always" {
		t.Errorf("pull policy = %s, want the tree's Always", got)
	}
}

func TestBuild_ImageSetBeforeReplacementsSoDerivedValuesCarryTheVersion(t *testing.T) {
	// A user agent built from the manager image's tag by a replacement, as
	// some providers derive it; the Makefile sets the image first, so the
	// released user agent carries the release tag.
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"config/default/kustomization.yaml": `namespace: test-system
namePrefix: test-
labels:
- includeSelectors: true
  pairs:
    cluster.x-k8s.io/provider: infrastructure-test
resources:
- namespace.yaml
- ../manager
- agent.yaml
replacements:
- source:
    kind: Deployment
    name: controller-manager
    fieldPath: spec.template.spec.containers.[name=manager].image
    options: {delimiter: ":", index: 1}
  targets:
  - select: {kind: ConfigMap, name: agent}
    fieldPaths: [data.version]
`,
		"config/default/agent.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: agent\n  namespace: system\ndata:\n  version: unset\n",
	}))
	res := mustBuild(t, dir, Options{Image: "ghcr.io/acme/manager"})
	cm := find(t, objects(t, res.Release.Providers[0].Components().Data), "ConfigMap", "test-agent")
	if got := lookup(t, cm, "data", "version"); got != "v1.2.3" {
		t.Errorf("derived version = %s, want the release tag v1.2.3 (the image was set after the replacement ran)", got)
	}
}

func TestBuild_ImageNameMatchesTheKustomizationsPlaceholderOrTheRenderedName(t *testing.T) {
	// `kustomize edit set image controller=registry.example/provider:v1`
	// leaves this entry; manager.yaml names the placeholder.
	tree := testtree.Minimal(map[string]string{
		"config/manager/kustomization.yaml": "resources:\n- manager.yaml\nimages:\n- name: controller\n  newName: registry.example/provider\n  newTag: v1\n",
	})
	tree["config/manager/manager.yaml"] = strings.Replace(tree["config/manager/manager.yaml"], "registry.example.com/test/manager:dev", "controller:latest", 1)
	for _, name := range []string{"controller", "registry.example/provider", ""} {
		t.Run("image.name="+name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range tree {
				files[k] = v
			}
			files["capirepo.yaml"] = "providers:\n- name: infrastructure-test\n  image: {name: '" + name + "', newName: ghcr.io/acme/provider, tag: '{{ .VersionNoV }}'}\n"
			res := mustBuild(t, testtree.Write(t, files), Options{})
			if got := containerField(t, res, "test-controller-manager", "manager", "image"); got != "ghcr.io/acme/provider:1.2.3" {
				t.Errorf("manager image = %s, want ghcr.io/acme/provider:1.2.3", got)
			}
		})
	}
}

func TestBuild_ImageNameThatMatchesNothingIsRefused(t *testing.T) {
	files := testtree.Minimal(map[string]string{
		"capirepo.yaml": "providers:\n- name: infrastructure-test\n  image: {name: registry.example.com/test/managr}\n",
	})
	_, err := build(t, testtree.Write(t, files), Options{})
	// The error lists the names image.name takes: the image names the
	// containers have, without tag (not tagged references it refuses).
	if err == nil || !strings.Contains(err.Error(), `image.name "registry.example.com/test/managr" selects no container image`) ||
		!strings.Contains(err.Error(), "without tag (registry.example.com/test/manager, registry.example.com/test/sidecar)") || strings.Contains(err.Error(), ":dev") {
		t.Fatalf("err = %v", err)
	}
}

func TestBuild_KeepImageLeavesTheKustomizationsImage(t *testing.T) {
	res := mustBuild(t, testtree.Write(t, testtree.Minimal(nil)), Options{KeepImage: true})
	if got := containerField(t, res, "test-controller-manager", "manager", "image"); got != "registry.example.com/test/manager:dev" {
		t.Errorf("manager image = %s, want the :dev image the kustomization names", got)
	}
	res = mustBuild(t, testtree.Write(t, testtree.Minimal(nil)), Options{KeepImage: true, Image: "ghcr.io/me/m"})
	if got := containerField(t, res, "test-controller-manager", "manager", "image"); got != "ghcr.io/me/m:v1.2.3" {
		t.Errorf("manager image with --image = %s", got)
	}
}

// twoProviders is a tree with a bootstrap and a control-plane provider.
func twoProviders(cpImage string) map[string]string {
	files := testtree.Minimal(nil)
	out := map[string]string{"metadata.yaml": files["metadata.yaml"],
		"capirepo.yaml": "providers:\n- name: bootstrap-test\n  kustomize: b/default\n- name: control-plane-test\n  kustomize: c/default\n"}
	for prefix, img := range map[string]string{"b": "registry.example.com/test/manager", "c": cpImage} {
		label := map[string]string{"b": "bootstrap-test", "c": "control-plane-test"}[prefix]
		for k, v := range files {
			if !strings.HasPrefix(k, "config/") {
				continue
			}
			v = strings.ReplaceAll(v, "infrastructure-test", label)
			v = strings.ReplaceAll(v, "registry.example.com/test/manager", img)
			v = strings.ReplaceAll(v, "test-system", prefix+"-system")
			out[prefix+strings.TrimPrefix(k, "config")] = v
		}
	}
	return out
}

func TestBuild_OneImageForProvidersWithDifferentImagesIsAUsageError(t *testing.T) {
	_, err := build(t, testtree.Write(t, twoProviders("registry.example.com/test/cp")), Options{Image: "ghcr.io/acme/one"})
	var ue *ImageUsageError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want an ImageUsageError", err)
	}
	for _, want := range []string{"bootstrap-test (registry.example.com/test/manager)", "control-plane-test (registry.example.com/test/cp)", "providers[].image.newName"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	// Providers that share one image (one binary, several types) keep working.
	res := mustBuild(t, testtree.Write(t, twoProviders("registry.example.com/test/manager")), Options{Image: "ghcr.io/acme/one"})
	for _, p := range res.Release.Providers {
		if !strings.Contains(string(p.Components().Data), "image: ghcr.io/acme/one:v1.2.3") {
			t.Errorf("%s: no ghcr.io/acme/one:v1.2.3", p.Label())
		}
	}
}

func TestBuild_SeveralComponentsFilesEachRenderedAndChecked(t *testing.T) {
	files := testtree.Minimal(map[string]string{
		"capirepo.yaml":                        "providers:\n- name: infrastructure-test\n  components:\n  - {kustomize: config/supervisor, file: infrastructure-components-supervisor.yaml}\n",
		"config/supervisor/kustomization.yaml": "resources:\n- ../default\npatches:\n- patch: |\n    - op: add\n      path: /spec/template/spec/containers/0/args/-\n      value: --mode=supervisor\n  target: {kind: Deployment, name: test-controller-manager}\n",
	})
	res := mustBuild(t, testtree.Write(t, files), Options{})
	p := res.Release.Providers[0]
	sup, ok := p.File("infrastructure-components-supervisor.yaml")
	if !ok {
		t.Fatal("no infrastructure-components-supervisor.yaml in the release")
	}
	d := find(t, objects(t, sup.Data), "Deployment", "test-controller-manager")
	if got := lookup(t, d, "spec", "template", "spec", "containers", "[name=manager]", "image"); got != "registry.example.com/test/manager:v1.2.3" {
		t.Errorf("supervisor manager image = %s", got)
	}
	if !strings.Contains(string(sup.Data), "--mode=supervisor") || strings.Contains(string(p.Components().Data), "--mode=supervisor") {
		t.Error("the supervisor file is not the supervisor kustomization's render")
	}
	if got := res.Providers[0].MoreComponents; len(got) != 1 || got[0] != "infrastructure-components-supervisor.yaml" {
		t.Errorf("MoreComponents = %v", got)
	}

	// Each file is checked: a second file without the provider namespace fails the build.
	files["config/supervisor/kustomization.yaml"] = "resources:\n- ../manager\n"
	res, err := build(t, testtree.Write(t, files), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := lintBuilt(res, contract.Options{})
	if !slices.ContainsFunc(rep.Findings, func(f contract.Finding) bool {
		return f.Severity == contract.Error && strings.HasSuffix(f.File, "/infrastructure-components-supervisor.yaml") && f.Rule == "CAPI201"
	}) {
		t.Fatalf("no namespace error on the supervisor file: %+v", rep.Findings)
	}
}

func TestBuild_ReleasePatchesApplyAfterTheTreesKustomization(t *testing.T) {
	// What a Makefile's sed did: the role a binding names becomes a clusterctl variable.
	files := testtree.Minimal(map[string]string{
		"config/manager/kustomization.yaml": "resources:\n- manager.yaml\n- binding.yaml\n",
		"config/manager/binding.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: b\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\n" +
			"subjects:\n- kind: ServiceAccount\n  name: default\n  namespace: system\n",
		"hack/release/role.yaml": "- op: replace\n  path: /roleRef/name\n  value: ${CLUSTER_ROLE:=cluster-admin}\n",
		"capirepo.yaml":          "providers:\n- name: infrastructure-test\n  patches:\n  - {path: hack/release/role.yaml, target: {kind: ClusterRoleBinding, name: test-b}}\n",
	})
	res := mustBuild(t, testtree.Write(t, files), Options{})
	b := find(t, objects(t, res.Release.Providers[0].Components().Data), "ClusterRoleBinding", "test-b")
	if got := lookup(t, b, "roleRef", "name"); got != "${CLUSTER_ROLE:=cluster-admin}" {
		t.Errorf("roleRef.name = %s", got)
	}
	found := false
	for _, v := range res.Providers[0].Variables {
		found = found || v.Name == "CLUSTER_ROLE"
	}
	if !found {
		t.Errorf("variables %v lack CLUSTER_ROLE", res.Providers[0].Variables)
	}
}

func TestBuild_GeneratedPatchMissingNamesTheFileAndBefore(t *testing.T) {
	files := testtree.Minimal(map[string]string{
		"config/default/kustomization.yaml": strings.Replace(testtree.Minimal(nil)["config/default/kustomization.yaml"], "resources:", "patches:\n- path: manager_image_patch.yaml\nresources:", 1),
		".gitignore":                        "config/default/manager_image_patch.yaml\n",
		"hack/manager_image_patch.yaml":     "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller-manager\n  namespace: system\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        image: registry.example.com/test/generated:dev\n",
	})
	dir := testtree.Write(t, files)
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	_, err := build(t, dir, Options{})
	if err == nil {
		t.Fatal("built without the generated patch")
	}
	for _, want := range []string{"config/default/manager_image_patch.yaml is missing", "git-ignored", "before:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}

	// pipeline/TestBuild_BeforeCommandsGenerateWhatTheTreeLacks runs the
	// command that generates it (before:) and builds.
}

func TestBuild_FirstGuessFromTheSourcesIsCheckedAgainstTheRender(t *testing.T) {
	// The sources name the bundled operator's manager first, but the
	// kustomizations' images: entries name the provider's (and a sidecar):
	// the release image goes on the provider's manager only.
	dir := testtree.Write(t, bundledOperator(map[string]string{
		"config/default/kustomization.yaml": `namespace: test-system
namePrefix: test-
labels:
- includeSelectors: true
  pairs:
    cluster.x-k8s.io/provider: infrastructure-test
resources:
- namespace.yaml
- ../operator
- ../manager
`,
		"config/manager/kustomization.yaml": "resources:\n- manager.yaml\nimages:\n- name: registry.example.com/test/manager\n  newTag: main\n- name: registry.example.com/test/sidecar\n  newTag: '1.1'\n",
	}))
	res := mustBuild(t, dir, Options{Image: "ghcr.io/acme/manager"})
	if got := containerField(t, res, "test-controller-manager", "manager", "image"); got != "ghcr.io/acme/manager:v1.2.3" {
		t.Errorf("provider manager image = %s", got)
	}
	if got := containerField(t, res, "test-bundled-operator", "manager", "image"); got != "quay.io/other/operator:v2.0.0" {
		t.Errorf("bundled operator image changed: %s", got)
	}
	if got := containerField(t, res, "test-controller-manager", "sidecar", "image"); got != "registry.example.com/test/sidecar:1.1" {
		t.Errorf("sidecar image = %s, want the tree's own entry applied", got)
	}
}

func TestScanManagerImage_NearestPatchFirst(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"config/default/kustomization.yaml": strings.Replace(testtree.Minimal(nil)["config/default/kustomization.yaml"], "resources:", "patches:\n- path: image.yaml\nresources:", 1),
		"config/default/image.yaml":         "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller-manager\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        image: registry.example.com/test/patched:main\n",
	}))
	fs, err := newTreeFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := scanManagerImage(fs, dir+"/config/default")
	if err != nil || got != "registry.example.com/test/patched" {
		t.Errorf("scan = %q, %v; want the top kustomization's patch, which applies last", got, err)
	}
}

// TestBuild_ComponentsFileOutsideTheirFolderSaysNoKeyAllowsIt: a
// components kustomization that loads a file beside its folder fails as
// kustomize build fails on it; the error names the kustomization and the
// file, and says what does allow it, since no capirepo.yaml key loosens
// the components' loading (issue 45.4).
func TestBuild_ComponentsFileOutsideTheirFolderSaysNoKeyAllowsIt(t *testing.T) {
	files := testtree.Minimal(map[string]string{
		"capirepo.yaml":                     "providers:\n- name: infrastructure-test\n",
		"config/default/kustomization.yaml": "namespace: test-system\nresources:\n- namespace.yaml\n- ../manager\npatches:\n- path: ../shared/pull-policy.yaml\n",
		"config/shared/pull-policy.yaml":    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller-manager\n  namespace: system\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        imagePullPolicy: Always\n",
	})
	_, err := build(t, testtree.Write(t, files), Options{})
	if err == nil {
		t.Fatal("built a patch from outside config/default")
	}
	for _, want := range []string{"config/default/kustomization.yaml loads config/shared/pull-policy.yaml, outside its folder", "no capirepo.yaml key loosens this for the components", "give its folder a kustomization.yaml"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
}

func TestBuild_MissingFileOutsideGitNamesTheFileAndTheFix(t *testing.T) {
	files := testtree.Minimal(map[string]string{
		"config/manager/kustomization.yaml": "resources:\n- manager.yaml\n- generated-rbac.yaml\n",
	})
	_, err := build(t, testtree.Write(t, files), Options{})
	if err == nil {
		t.Fatal("built without config/manager/generated-rbac.yaml")
	}
	for _, want := range []string{"config/manager/generated-rbac.yaml is missing", "the kustomization names it", "before:", "accumulating resources from 'generated-rbac.yaml'"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	// kustomize's own error says the path twice (as a file, then as a
	// folder); the explained error says it once (issue 38.4).
	if n := strings.Count(err.Error(), "no such file or directory"); n != 1 {
		t.Errorf("error says the cause %d times, want once: %v", n, err)
	}
}
