package pipeline_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/internal/testtree"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capirepo/capirepo/image"
	"github.com/capirepo/capirepo/image/imagetest"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/release"
)

func exampleDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../examples/infrastructure-example")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func newRegistryHost(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// componentsOf returns the example's components YAML from a built release.
func componentsOf(t *testing.T, rel *release.Release) string {
	t.Helper()
	for _, p := range rel.Providers {
		for _, f := range p.Files {
			if f.Name == "infrastructure-components.yaml" {
				return string(f.Data)
			}
		}
	}
	t.Fatal("no infrastructure-components.yaml in the release")
	return ""
}

// TestBuild_ImagePushedAndComponentsNameItByDigest builds the example's
// manager for two platforms, pushes the image to an in-process registry and
// reads the index back.
func TestBuild_ImagePushedAndComponentsNameItByDigest(t *testing.T) {
	host := newRegistryHost(t)
	base, baseDigest := imagetest.PushBase(t, host)
	repo := host + "/example/capi-example-controller"
	out := filepath.Join(t.TempDir(), "dist")
	var logged bytes.Buffer
	b, err := pipeline.Build(context.Background(), pipeline.BuildOptions{
		Dir: exampleDir(t), Version: "v0.1.0", Out: out, Image: repo, BaseImage: base,
		ImagePush: true, ImageRef: pipeline.ImageRefDigest, SourceDateEpoch: "1700000000",
	}, &logged)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	img := b.Artifacts.Image
	if img == nil || !img.Pushed || len(b.Artifacts.Binaries) != 2 {
		t.Fatalf("image %+v, %d binaries", img, len(b.Artifacts.Binaries))
	}
	wantRef := repo + "@" + img.Digest
	if img.Base != base+"@"+baseDigest.String() || !strings.Contains(logged.String(), "base "+img.Base) {
		t.Errorf("base recorded as %q, want %s@%s; log:\n%s", img.Base, base, baseDigest, logged.String())
	}
	if img.Components != wantRef {
		t.Errorf("components image %s, want %s", img.Components, wantRef)
	}

	tag, _ := name.NewTag(repo + ":v0.1.0")
	idx, err := remote.Index(tag)
	if err != nil {
		t.Fatalf("pull %s: %v", tag, err)
	}
	if d, _ := idx.Digest(); d.String() != img.Digest {
		t.Errorf("registry has %s, build reports %s", d, img.Digest)
	}
	im, _ := idx.IndexManifest()
	var platforms []string
	for i, d := range im.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, _ := img.ConfigFile()
		if cf.Architecture != d.Platform.Architecture || strings.Join(cf.Config.Entrypoint, " ") != "/manager" {
			t.Errorf("%s: config arch %s entrypoint %v", d.Platform, cf.Architecture, cf.Config.Entrypoint)
		}
		if cf.Config.Labels["org.opencontainers.image.version"] != "v0.1.0" {
			t.Errorf("%s: labels %v", d.Platform, cf.Config.Labels)
		}
		layers, _ := img.Layers()
		rc, _ := layers[len(layers)-1].Uncompressed()
		tr := tar.NewReader(rc)
		h, err := tr.Next()
		if err != nil || h.Name != "manager" {
			t.Fatalf("%s: first layer entry %v, %v", d.Platform, h, err)
		}
		inImage, _ := io.ReadAll(tr)
		_ = rc.Close()
		onDisk, err := os.ReadFile(b.Artifacts.Binaries[i].Path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(inImage, onDisk) {
			t.Errorf("%s: /manager in the image differs from %s", d.Platform, b.Artifacts.Binaries[i].Path)
		}
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64/v8"}, platforms); diff != "" {
		t.Errorf("index platforms (-want +got):\n%s", diff)
	}
	if !strings.Contains(componentsOf(t, b.Result.Release), "image: "+wantRef+"\n") {
		t.Errorf("components do not name %s", wantRef)
	}
	if b.Config.Providers[0].Image == nil || b.Config.Providers[0].Image.Digest != img.Digest {
		t.Errorf("Built.Config does not carry the digest: %+v", b.Config.Providers[0].Image)
	}
}

// An image layout builds the binaries even without Binaries: the image is
// made of them.
func TestBuild_ImageLayoutBuildsTheBinariesItNeeds(t *testing.T) {
	out := filepath.Join(t.TempDir(), "dist")
	layoutDir := filepath.Join(t.TempDir(), "oci")
	var logged bytes.Buffer
	b, err := pipeline.Build(context.Background(), pipeline.BuildOptions{
		Dir: exampleDir(t), Version: "v0.1.0", Out: out, Image: "ghcr.io/example/capi-example-controller",
		ImageLayout: layoutDir, ImageRef: pipeline.ImageRefTag, Platforms: []string{"linux/amd64"}, BaseImage: image.NoBase,
	}, &logged)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if _, err := os.Stat(filepath.Join(layoutDir, "index.json")); err != nil {
		t.Errorf("no OCI layout: %v", err)
	}
	if len(b.Artifacts.Binaries) != 1 || b.Artifacts.Binaries[0].Platform.String() != "linux/amd64" {
		t.Errorf("binaries %+v, want one for linux/amd64", b.Artifacts.Binaries)
	}
	if got, want := b.Artifacts.Image.Components, "ghcr.io/example/capi-example-controller:v0.1.0"; got != want {
		t.Errorf("components image %s, want %s", got, want)
	}
	if !strings.Contains(componentsOf(t, b.Result.Release), "image: ghcr.io/example/capi-example-controller:v0.1.0\n") {
		t.Error("components do not name the image by tag")
	}
	if !strings.Contains(logged.String(), "warning: --base-image none: the image holds only /manager: no CA certificates") {
		t.Errorf("log does not warn about the image without a base:\n%s", logged.String())
	}
	if b.Artifacts.Image.Base != "" {
		t.Errorf("base %q recorded for none", b.Artifacts.Image.Base)
	}
	if !strings.Contains(logged.String(), "OCI layout "+layoutDir) {
		t.Errorf("log does not name the layout:\n%s", logged.String())
	}
	if _, err := os.Stat(filepath.Join(out, "infrastructure-example")); err == nil {
		t.Error("Build wrote the release; writing is the caller's step")
	}
}

// TestBuild_ImageTagTemplateIsTheTagPushedAndNamed checks image.tag
// "{{ .VersionNoV }}": the pushed tag and the components agree on 0.1.0.
func TestBuild_ImageTagTemplateIsTheTagPushedAndNamed(t *testing.T) {
	host := newRegistryHost(t)
	repo := host + "/example/capi-example-controller"
	cfg := filepath.Join(t.TempDir(), "capirepo.yaml")
	if err := os.WriteFile(cfg, []byte("providers:\n- name: infrastructure-example\n  image: {tag: '{{ .VersionNoV }}'}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := pipeline.Build(context.Background(), pipeline.BuildOptions{
		Dir: exampleDir(t), ConfigPath: cfg, Version: "v0.1.0", Out: filepath.Join(t.TempDir(), "dist"), Image: repo,
		ImagePush: true, ImageRef: pipeline.ImageRefTag, SourceDateEpoch: "1700000000", BaseImage: image.NoBase,
	}, io.Discard)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if want := repo + ":0.1.0"; b.Artifacts.Image.Components != want || !strings.Contains(componentsOf(t, b.Result.Release), "image: "+want) {
		t.Errorf("components name %s, want %s", b.Artifacts.Image.Components, want)
	}
	tag, _ := name.NewTag(repo + ":0.1.0")
	if _, err := remote.Index(tag); err != nil {
		t.Errorf("the registry has no %s: %v", tag, err)
	}
}

// TestBuild_BeforeCommandsGenerateWhatTheTreeLacks: the config's before:
// commands run in the tree before anything is rendered, each printed, and a
// failing one stops the build and says which.
func TestBuild_BeforeCommandsGenerateWhatTheTreeLacks(t *testing.T) {
	files := testtree.Minimal(map[string]string{
		"config/default/kustomization.yaml": strings.Replace(testtree.Minimal(nil)["config/default/kustomization.yaml"], "resources:", "patches:\n- path: manager_image_patch.yaml\nresources:", 1),
		".gitignore":                        "config/default/manager_image_patch.yaml\n",
		"hack/manager_image_patch.yaml":     "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller-manager\n  namespace: system\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        image: registry.example.com/test/generated:dev\n",
	})
	dir := testtree.Write(t, files)
	build := func(log io.Writer) (*pipeline.Built, error) {
		return pipeline.Build(context.Background(), pipeline.BuildOptions{Dir: dir, Version: "v1.2.3", Out: t.TempDir()}, log)
	}

	// With the command that generates it listed under before:, it builds.
	testtree.WriteInto(t, dir, map[string]string{"capirepo.yaml": "before:\n- cp hack/manager_image_patch.yaml config/default/\nproviders:\n- name: infrastructure-test\n"})
	var log strings.Builder
	b, err := build(&log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "before: cp hack/manager_image_patch.yaml config/default/") {
		t.Errorf("the command was not printed: %q", log.String())
	}
	if comp := string(b.Result.Release.Providers[0].Components().Data); !strings.Contains(comp, "image: registry.example.com/test/generated:v1.2.3") {
		t.Errorf("the generated patch's image is not in the components:\n%s", comp)
	}

	// A failing command stops the build and says which.
	testtree.WriteInto(t, dir, map[string]string{"capirepo.yaml": "before:\n- exit 3\nproviders:\n- name: infrastructure-test\n"})
	if _, err := build(nil); err == nil || !strings.Contains(err.Error(), `before[0] "exit 3" failed`) || !strings.Contains(err.Error(), "exit 3)") {
		t.Fatalf("err = %v", err)
	}
}

// TestLint_ImageTagTheBuildSetIsTheRelease: a manager tagged from
// image.tag with more than the version ("release-1.2.3") is the release's
// own image to the lint, not one of another release (CAPI206, issue 31).
func TestLint_ImageTagTheBuildSetIsTheRelease(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"capirepo.yaml": "providers:\n- name: infrastructure-test\n  image: {tag: 'release-{{ .VersionNoV }}'}\n",
	}))
	b, err := pipeline.Build(context.Background(), pipeline.BuildOptions{Dir: dir, Version: "v1.2.3", Out: t.TempDir()}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(componentsOf(t, b.Result.Release), "manager:release-1.2.3") {
		t.Fatalf("the manager is not tagged release-1.2.3:\n%s", componentsOf(t, b.Result.Release))
	}
	var out strings.Builder
	rep, err := pipeline.Lint(b, nil, &out)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Rule == "CAPI206" {
			t.Errorf("CAPI206 on the tag the build set: %s", f)
		}
	}
}
