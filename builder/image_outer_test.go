package builder

import (
	"strings"
	"testing"

	"github.com/capirepo/capirepo/internal/testtree"
)

// managerImageOverridden is the minimal tree whose config/manager names the
// image with an images: entry and whose config/default sets it again after
// that entry: with a second images: entry, or with an image patch (issue 31).
func managerImageOverridden(how string) map[string]string {
	files := testtree.Minimal(map[string]string{
		"config/manager/kustomization.yaml": "resources:\n- manager.yaml\nimages:\n- name: registry.example.com/test/manager\n  newName: gcr.io/k8s-staging-test/test-controller\n  newTag: dev\n",
	})
	switch how {
	case "entry":
		files["config/default/kustomization.yaml"] += "images:\n- name: gcr.io/k8s-staging-test/test-controller\n  newTag: main\n"
	case "patch":
		files["config/default/kustomization.yaml"] += "patches:\n- path: manager_image_patch.yaml\n"
		files["config/default/manager_image_patch.yaml"] = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller-manager\n  namespace: system\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        image: gcr.io/k8s-staging-test/test-controller:main\n"
	}
	return files
}

// TestBuild_ReleaseImageSetWhereItTakesEffect: the release image lands in
// the entry kustomize applies last (the outermost one naming the image), or,
// where a patch sets the image after every entry, on the kustomization being
// built, as `kustomize edit set image` in config/default would; with and
// without image.name.
func TestBuild_ReleaseImageSetWhereItTakesEffect(t *testing.T) {
	const (
		staging = "gcr.io/k8s-staging-test/test-controller"
		prod    = "registry.k8s.io/test/test-controller"
	)
	for _, how := range []string{"entry", "patch"} {
		for _, c := range []struct{ image, want string }{
			{"{pullPolicy: IfNotPresent}", staging},
			{"{newName: " + prod + ", pullPolicy: IfNotPresent}", prod},
			{"{name: " + staging + ", pullPolicy: IfNotPresent}", staging},
			{"{name: " + staging + ", newName: " + prod + ", pullPolicy: IfNotPresent}", prod},
			{"{name: registry.example.com/test/manager, pullPolicy: IfNotPresent}", staging},
			{"{name: registry.example.com/test/manager, newName: " + prod + ", pullPolicy: IfNotPresent}", prod},
		} {
			t.Run(how+" "+c.image, func(t *testing.T) {
				files := managerImageOverridden(how)
				files["capirepo.yaml"] = "providers:\n- name: infrastructure-test\n  image: " + c.image + "\n"
				res := mustBuild(t, testtree.Write(t, files), Options{})
				if got := containerField(t, res, "test-controller-manager", "manager", "image"); got != c.want+":v1.2.3" {
					t.Errorf("manager image = %s, want %s:v1.2.3", got, c.want)
				}
				if got := containerField(t, res, "test-controller-manager", "manager", "imagePullPolicy"); got != "IfNotPresent" {
					t.Errorf("manager pull policy = %s", got)
				}
			})
		}
	}
}

// TestBuild_ImageNameOfAnImagePatchIsTaken: image.name may be the name an
// image patch gives the containers, which no images: entry names.
func TestBuild_ImageNameOfAnImagePatchIsTaken(t *testing.T) {
	files := managerImageOverridden("patch")
	files["config/default/manager_image_patch.yaml"] = strings.Replace(files["config/default/manager_image_patch.yaml"], "gcr.io/k8s-staging-test/test-controller:main", "quay.io/test/patched:main", 1)
	files["capirepo.yaml"] = "providers:\n- name: infrastructure-test\n  image: {name: quay.io/test/managr}\n"
	_, err := build(t, testtree.Write(t, files), Options{})
	if err == nil || !strings.Contains(err.Error(), "an images: entry's name (registry.example.com/test/manager)") || !strings.Contains(err.Error(), "without tag (quay.io/test/patched,") {
		t.Fatalf("err = %v, want the names image.name takes", err)
	}
	files["capirepo.yaml"] = "providers:\n- name: infrastructure-test\n  image: {name: quay.io/test/patched}\n"
	res := mustBuild(t, testtree.Write(t, files), Options{})
	if got := containerField(t, res, "test-controller-manager", "manager", "image"); got != "quay.io/test/patched:v1.2.3" {
		t.Errorf("manager image = %s", got)
	}
}

// TestBuild_PullPolicyNotOnABundledInitContainerGivenTheReleaseImage: a
// replacements: entry copies the release image into a bundled operator's
// init container; image.pullPolicy still reaches the provider's manager
// container only, as the Makefile's manager_pull_policy.yaml patch does.
func TestBuild_PullPolicyNotOnABundledInitContainerGivenTheReleaseImage(t *testing.T) {
	files := bundledOperator(map[string]string{
		"capirepo.yaml": "providers:\n- name: infrastructure-test\n  image: {name: registry.example.com/test/manager, pullPolicy: IfNotPresent}\n",
	})
	files["config/operator/operator.yaml"] = strings.Replace(files["config/operator/operator.yaml"], "      containers:\n",
		"      initContainers:\n      - name: copy-plugin\n        image: placeholder\n        imagePullPolicy: Always\n      containers:\n", 1)
	files["config/default/kustomization.yaml"] += `replacements:
- source:
    kind: Deployment
    name: controller-manager
    fieldPath: spec.template.spec.containers.[name=manager].image
  targets:
  - select:
      kind: Deployment
      name: bundled-operator
    fieldPaths:
    - spec.template.spec.initContainers.[name=copy-plugin].image
`
	res := mustBuild(t, testtree.Write(t, files), Options{})
	d := find(t, objects(t, res.Release.Providers[0].Components().Data), "Deployment", "test-bundled-operator")
	if got := lookup(t, d, "spec", "template", "spec", "initContainers", "[name=copy-plugin]", "image"); got != "registry.example.com/test/manager:v1.2.3" {
		t.Fatalf("the replacement did not copy the release image: %s", got)
	}
	if got := lookup(t, d, "spec", "template", "spec", "initContainers", "[name=copy-plugin]", "imagePullPolicy"); got != "Always" {
		t.Errorf("the bundled init container's pull policy = %s, want the tree's Always", got)
	}
	if got := containerField(t, res, "test-controller-manager", "manager", "imagePullPolicy"); got != "IfNotPresent" {
		t.Errorf("manager pull policy = %s", got)
	}
}
