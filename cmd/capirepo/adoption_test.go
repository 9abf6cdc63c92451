package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// kubebuilderMakefile is the part of a kubebuilder-scaffolded provider
// Makefile that the fragment must live beside: the provider's own release
// targets and image variables, ALL_ARCH space-separated as cluster-api's
// and most providers' Makefiles have it.
const kubebuilderMakefile = `VERSION ?= v0.0.0-dev
REGISTRY ?= gcr.io/provider
IMAGE_NAME ?= provider-controller
PLATFORMS ?= linux/arm64,linux/amd64,linux/s390x,linux/ppc64le
ALL_ARCH = amd64 arm64 ppc64le
RELEASE_DIR := out
comma := ,

.PHONY: release release-manifests
release-manifests:
	@echo provider release-manifests $(REGISTRY)/$(IMAGE_NAME) $(PLATFORMS) into $(RELEASE_DIR)

release: release-manifests
	@echo provider release $(VERSION)

include capirepo.mk
`

// TestAdoptionExamples_EveryFileIsValidForItsTool: each file of
// examples/adoption parses for its tool (a new file without a check fails
// here), and the Makefile fragment is included into a kubebuilder-style
// Makefile without redefining anything of the provider's.
func TestAdoptionExamples_EveryFileIsValidForItsTool(t *testing.T) {
	dir := filepath.Join(repoRoot, "examples", "adoption")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml"):
			var m map[string]any
			if err := yaml.UnmarshalStrict(data, &m); err != nil || len(m) == 0 {
				t.Errorf("%s does not parse as YAML: %v", e.Name(), err)
			}
			if strings.Contains(string(data), "@latest") {
				t.Errorf("%s installs @latest: pin a version", e.Name())
			}
			if strings.Contains(string(data), "go-version-file") {
				t.Errorf("%s sets Go up from the provider's go.mod: capirepo needs Go 1.26", e.Name())
			}
			if strings.Contains(string(data), "${GITHUB_REPOSITORY}-") || strings.Contains(string(data), "ghcr.io/${GITHUB_REPOSITORY}") {
				t.Errorf("%s builds an image name from ${GITHUB_REPOSITORY}, which may hold upper case", e.Name())
			}
		case e.Name() == "Makefile":
			testFragmentInKubebuilderMakefile(t, data)
		default:
			t.Errorf("%s: no check knows this file; add one", e.Name())
		}
	}
	rel := loadYAML(t, "examples/adoption/goreleaser.yaml")["release"].(map[string]any)
	if rel["draft"] != true {
		t.Error("goreleaser.yaml: release.draft is not true; the docs rely on GoReleaser leaving a draft for capirepo publish github to check and publish")
	}
}

func testFragmentInKubebuilderMakefile(t *testing.T, fragment []byte) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "capirepo.mk"), fragment, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(kubebuilderMakefile), 0o600); err != nil {
		t.Fatal(err)
	}
	// make runs the recipes with capirepo and gh replaced by echo, so the
	// checks run and the command lines are printed as the shell sees them.
	make := func(dryRun bool, args ...string) (string, error) {
		t.Helper()
		if dryRun {
			args = append([]string{"-n"}, args...)
		}
		cmd := exec.Command("make", append(args, "CAPIREPO=echo capirepo", "CAPIREPO_GH=echo gh")...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if strings.Contains(string(out), "warning:") {
			t.Errorf("make %v warns (a target or variable defined twice?):\n%s", args, out)
		}
		// One line per command: join the recipe's continuation lines.
		return strings.ReplaceAll(string(out), "\\\n\t", ""), err
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := make(false, args...)
		if err != nil {
			t.Fatalf("make %v: %v\n%s", args, err, out)
		}
		return out
	}
	// The provider's own targets and variables are untouched.
	if out := run("release"); !strings.Contains(out, "provider release-manifests gcr.io/provider/provider-controller linux/arm64,linux/amd64,linux/s390x,linux/ppc64le into out") ||
		!strings.Contains(out, "provider release v0.0.0-dev") || strings.Contains(out, "capirepo ") {
		t.Errorf("make release runs:\n%s", out)
	}
	// No example defaults: what a release names must be wired.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"capirepo-release", "CAPIREPO_TAG=v1.4.0"}, "set CAPIREPO_IMAGE=REGISTRY/NAME"},
		{[]string{"capirepo-release", "CAPIREPO_TAG=v1.4.0", "CAPIREPO_IMAGE=$(REGISTRY)/$(IMAGE_NAME)"}, "set CAPIREPO_PUBLISH=github://OWNER/NAME"},
		{[]string{"capirepo-release-manifests"}, "set CAPIREPO_TAG=vX.Y.Z"},
	} {
		if out, err := make(false, c.args...); err == nil || !strings.Contains(out, c.want) || strings.Contains(out, "capirepo build") || strings.Contains(out, "capirepo release") {
			t.Errorf("make %v: err %v:\n%s", c.args, err, out)
		}
	}
	// Without an image the manifests keep the kustomization's.
	if out := run("capirepo-release-manifests", "CAPIREPO_TAG=v1.4.0"); !strings.Contains(out, "capirepo build --version v1.4.0 --out out\n") {
		t.Errorf("make capirepo-release-manifests runs:\n%s", out)
	}
	// Wired to the provider's variables, as a provider would; ALL_ARCH's
	// space-separated list becomes the comma-separated --platforms.
	out := run("capirepo-release", "CAPIREPO_TAG=v1.4.0", "CAPIREPO_IMAGE=$(REGISTRY)/$(IMAGE_NAME)",
		"CAPIREPO_PLATFORMS=$(addprefix linux/,$(ALL_ARCH))", "CAPIREPO_PUBLISH=github://acme/cluster-api-provider-acme")
	if want := "capirepo release --version v1.4.0 --out out --image gcr.io/provider/provider-controller --binaries --platforms linux/amd64,linux/arm64,linux/ppc64le --image-push --image-ref digest --publish github://acme/cluster-api-provider-acme"; !strings.Contains(out, want) {
		t.Errorf("make capirepo-release runs:\n%s\nwant %s", out, want)
	}
	out = run("capirepo-release-dry-run", "CAPIREPO_TAG=v1.4.0", "CAPIREPO_IMAGE=$(REGISTRY)/$(IMAGE_NAME)", "CAPIREPO_PLATFORMS=$(PLATFORMS)")
	if !strings.Contains(out, "--image gcr.io/provider/provider-controller --binaries --platforms linux/arm64,linux/amd64,linux/s390x,linux/ppc64le --dry-run") {
		t.Errorf("make capirepo-release-dry-run with the provider's variables:\n%s", out)
	}
	// The default platforms, space-separated, become comma-separated too.
	if out, _ := make(true, "capirepo-release-image", "CAPIREPO_TAG=v1.4.0", "CAPIREPO_IMAGE=x.io/y"); !strings.Contains(out, "--platforms linux/amd64,linux/arm64 ") {
		t.Errorf("make -n capirepo-release-image:\n%s", out)
	}
	// gh uploads the files of out/<provider>/<version>/.
	if err := os.MkdirAll(filepath.Join(dir, "out", "infrastructure-acme", "v1.4.0"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"metadata.yaml", "infrastructure-components.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, "out", "infrastructure-acme", "v1.4.0", f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out := run("capirepo-gh-release", "CAPIREPO_TAG=v1.4.0"); !strings.Contains(out, "gh release create v1.4.0 --draft --title v1.4.0 out/infrastructure-acme/v1.4.0/infrastructure-components.yaml out/infrastructure-acme/v1.4.0/metadata.yaml") {
		t.Errorf("make capirepo-gh-release runs:\n%s", out)
	}
}

// TestInstallPins_NameWhatExists: every capirepo the docs and examples
// install is pinned (a commit's full hash or a tag, never @latest) and
// exists in this repository, so the install line works as written.
func TestInstallPins_NameWhatExists(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if err := exec.Command("git", "-C", repoRoot, "rev-parse", "--git-dir").Run(); err != nil {
		t.Skip("not a git checkout")
	}
	pin := regexp.MustCompile(`(?:capirepo/cmd/capirepo@|CAPIREPO_VERSION: )([^\s"'}]+)`)
	files, _ := filepath.Glob(filepath.Join(repoRoot, "examples", "adoption", "*"))
	docs, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	files = append(append(files, docs...), filepath.Join(repoRoot, "README.md"))
	pins := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pin.FindAllStringSubmatch(string(data), -1) {
			v := m[1]
			if strings.HasPrefix(v, "${") || v == "COMMIT" || v == "TAG" { // the variable, or the help text's placeholder
				continue
			}
			pins++
			var ref string
			switch {
			case regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(v):
				ref = v + "^{commit}"
			case regexp.MustCompile(`^v\d+\.\d+\.\d+`).MatchString(v):
				ref = "refs/tags/" + v
			default:
				t.Errorf("%s pins capirepo to %q: pin a commit's full hash or a tag", f, v)
				continue
			}
			if out, err := exec.Command("git", "-C", repoRoot, "rev-parse", "-q", "--verify", ref).CombinedOutput(); err != nil {
				t.Errorf("%s installs capirepo@%s, which this repository does not have (%v %s)", f, v, err, out)
			}
		}
	}
	if pins < 3 {
		t.Errorf("found %d pins; want the README's and both CI examples'", pins)
	}
}
