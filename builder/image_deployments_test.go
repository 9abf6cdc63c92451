package builder

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/capirepo/capirepo/internal/testtree"
)

// siderolike is a tree of Sidero's shape (siderolabs/sidero): config/
// builds two apps, each config/default with its own namePrefix over a
// config/manager whose Deployment controller-manager writes its image as
// the placeholder controller; the sidero app's Deployment runs four
// containers from that one image. Sidero's release tags two images, each
// set with its own `kustomize edit set image controller=...` in the app's
// config/manager.
func siderolike(config string) map[string]string {
	app := func(prefix string, containers ...string) map[string]string {
		var cs strings.Builder
		for _, c := range containers {
			cs.WriteString("      - name: " + c + "\n        image: controller:latest\n        imagePullPolicy: Always\n")
		}
		dir := "app/" + prefix + "-controller-manager/config/"
		return map[string]string{
			dir + "default/kustomization.yaml": "namespace: sidero-system\nnamePrefix: " + prefix + "-\nresources:\n- ../manager\n",
			dir + "manager/kustomization.yaml": "resources:\n- manager.yaml\n",
			dir + "manager/manager.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: controller-manager
  namespace: system
  labels: {control-plane: ` + prefix + `-controller-manager}
spec:
  selector:
    matchLabels: {control-plane: ` + prefix + `-controller-manager}
  template:
    metadata:
      labels: {control-plane: ` + prefix + `-controller-manager}
    spec:
      containers:
` + cs.String(),
		}
	}
	files := map[string]string{
		"metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- {major: 1, minor: 2, contract: v1beta1}\n",
		"capirepo.yaml": "providers:\n- name: infrastructure-sidero\n  kustomize: config\n" + config,
		"config/kustomization.yaml": `resources:
- namespace.yaml
- ../app/caps-controller-manager/config/default
- ../app/sidero-controller-manager/config/default
labels:
- includeSelectors: true
  pairs:
    cluster.x-k8s.io/provider: infrastructure-sidero
`,
		"config/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: sidero-system\n",
	}
	for _, m := range []map[string]string{app("caps", "manager"), app("sidero", "manager", "siderolink", "serverlogs", "serverevents")} {
		for k, v := range m {
			files[k] = v
		}
	}
	return files
}

// images lists each Deployment's containers and their images.
func images(t *testing.T, res *Result) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range objects(t, res.Release.Providers[0].Components().Data) {
		if n.GetKind() != "Deployment" {
			continue
		}
		cs, err := n.Pipe(yaml.Lookup("spec", "template", "spec", "containers"))
		if err != nil || cs == nil {
			t.Fatalf("%s: no containers", n.GetName())
		}
		items, _ := cs.Elements()
		for _, c := range items {
			out[n.GetName()+"/"+fieldString(c, "name")] = fieldString(c, "image") + " " + fieldString(c, "imagePullPolicy")
		}
	}
	return out
}

// TestBuild_TwoManagerImagesOfOnePlaceholderAreRefusedUntilTheConfigSaysWhich:
// Sidero's two Deployments both write the image controller; one release
// image for both (what capirepo silently did, issue 45) is refused, naming
// the Deployments, their containers and the config that says which.
func TestBuild_TwoManagerImagesOfOnePlaceholderAreRefusedUntilTheConfigSaysWhich(t *testing.T) {
	for name, c := range map[string]struct {
		config string
		opts   Options
	}{
		"no config":   {},
		"--image":     {opts: Options{Image: "ghcr.io/siderolabs/caps-controller-manager"}},
		"image: name": {config: "  image: {name: controller, newName: ghcr.io/siderolabs/caps-controller-manager}\n"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := build(t, testtree.Write(t, siderolike(c.config)), c.opts)
			if err == nil {
				t.Fatal("one image went to both managers")
			}
			for _, want := range []string{
				"the release image would go to the containers of 2 Deployments (all controller in the tree)",
				"Deployment sidero-system/caps-controller-manager: container manager\n",
				"Deployment sidero-system/sidero-controller-manager: containers manager, siderolink, serverlogs, serverevents\n",
				"capirepo.yaml", "images:\n  - {deployment: caps-controller-manager, newName: REGISTRY/IMAGE}\n  - {deployment: sidero-controller-manager, newName: REGISTRY/IMAGE}",
			} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
		})
	}
}

// TestBuild_AnImagePerDeployment: images: gives each Deployment its image
// with the version tag (every container that ran the manager's image), its
// pull policy on its manager container only, and the build says each edit
// with its count.
func TestBuild_AnImagePerDeployment(t *testing.T) {
	dir := testtree.Write(t, siderolike(`  images:
  - {deployment: caps-controller-manager, newName: ghcr.io/siderolabs/caps-controller-manager, pullPolicy: IfNotPresent}
  - {deployment: sidero-controller-manager, name: controller, newName: ghcr.io/siderolabs/sidero-controller-manager}
`))
	res := mustBuild(t, dir, Options{})
	const caps, sidero = "ghcr.io/siderolabs/caps-controller-manager:v1.2.3", "ghcr.io/siderolabs/sidero-controller-manager:v1.2.3"
	want := map[string]string{
		"caps-controller-manager/manager":        caps + " IfNotPresent",
		"sidero-controller-manager/manager":      sidero + " Always",
		"sidero-controller-manager/siderolink":   sidero + " Always",
		"sidero-controller-manager/serverlogs":   sidero + " Always",
		"sidero-controller-manager/serverevents": sidero + " Always",
	}
	if diff := cmp.Diff(want, images(t, res)); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	var edits []string
	for _, e := range res.Edits {
		edits = append(edits, e.String())
	}
	wantEdits := []string{
		"infrastructure-sidero infrastructure-components.yaml: image " + caps + " set on 1 container in place of the tree's controller (images[0] in capirepo.yaml): Deployment sidero-system/caps-controller-manager container manager",
		"infrastructure-sidero infrastructure-components.yaml: imagePullPolicy IfNotPresent set on 1 container (images[0].pullPolicy in capirepo.yaml): Deployment sidero-system/caps-controller-manager container manager",
		"infrastructure-sidero infrastructure-components.yaml: image " + sidero + " set on 4 containers in place of the tree's controller (images[1] in capirepo.yaml): Deployment sidero-system/sidero-controller-manager containers manager, siderolink, serverlogs, serverevents",
	}
	if diff := cmp.Diff(wantEdits, edits); diff != "" {
		t.Errorf("edits said (-want +got):\n%s", diff)
	}
	if got := res.Providers[0].ImageTag; got != "v1.2.3" {
		t.Errorf("image tag for the lint = %q", got)
	}
}

func TestBuild_AnImagePerDeploymentBadInput(t *testing.T) {
	for _, c := range []struct{ name, config, want string }{
		{"unknown Deployment", "  images: [{deployment: capi-controller-manager, newName: r/x}]\n",
			`images[0].deployment "capi-controller-manager" names no Deployment of the release (Deployments: caps-controller-manager, sidero-controller-manager)`},
		{"unknown container", "  images: [{deployment: sidero-controller-manager, container: agent, newName: r/x}]\n",
			`images[0]: container "agent": Deployment sidero-system/sidero-controller-manager has no such container (containers: manager, siderolink, serverlogs, serverevents)`},
		{"name that selects nothing", "  images: [{deployment: caps-controller-manager, name: ctrl, newName: r/x}]\n",
			`images[0]: name "ctrl" selects no container of Deployment sidero-system/caps-controller-manager`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := build(t, testtree.Write(t, siderolike(c.config)), Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
	_, err := build(t, testtree.Write(t, siderolike("  images: [{deployment: caps-controller-manager, newName: r/x}]\n")), Options{Image: "r/y"})
	if err == nil || !strings.Contains(err.Error(), "--image r/y sets one manager image, but capirepo.yaml gives the provider an image per Deployment") {
		t.Fatalf("--image with images: err = %v", err)
	}
}

// TestBuild_OneImageEditIsSaidWithItsCount: the release image the build
// sets on a tree's manager, and the pull policy, are said.
func TestBuild_OneImageEditIsSaidWithItsCount(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"capirepo.yaml": "providers:\n- name: infrastructure-test\n  image: {pullPolicy: IfNotPresent}\n",
	}))
	res := mustBuild(t, dir, Options{Image: "ghcr.io/acme/manager"})
	var edits []string
	for _, e := range res.Edits {
		edits = append(edits, e.String())
	}
	want := []string{
		"infrastructure-test infrastructure-components.yaml: image ghcr.io/acme/manager:v1.2.3 set on 1 container in place of the tree's registry.example.com/test/manager (--image): Deployment test-system/test-controller-manager container manager",
		"infrastructure-test infrastructure-components.yaml: imagePullPolicy IfNotPresent set on 1 container (image.pullPolicy in capirepo.yaml): Deployment test-system/test-controller-manager container manager",
	}
	if diff := cmp.Diff(want, edits); diff != "" {
		t.Errorf("edits said (-want +got):\n%s", diff)
	}
}
