package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/verify"
)

func newRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func pushIndex(t *testing.T, ref string) v1.Hash {
	t.Helper()
	idx, err := random.Index(256, 2, 3) // three platforms
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(r, idx); err != nil {
		t.Fatal(err)
	}
	d, _ := idx.Digest()
	return d
}

func pushImage(t *testing.T, ref string) v1.Hash {
	t.Helper()
	img, err := random.Image(256, 2)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := name.ParseReference(ref)
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return d
}

func TestMirror_ImagesAreCopiedByDigestWithEveryPlatform(t *testing.T) {
	ctx := context.Background()
	src, dst := newRegistry(t), newRegistry(t)
	exImg := src + "/capirepo/capi-example-controller:v0.2.1"
	saImg := src + "/other/capi-example-controller:v1.1.1" // same name, other provider: no clash
	cmImg := src + "/jetstack/cert-manager-controller:v1.16.0"
	exDigest := pushIndex(t, exImg)
	pushIndex(t, saImg)
	cmDigest := pushImage(t, cmImg)

	u := newUpstream(t, map[string]string{"example": exImg, "sample": saImg, "cert-manager": cmImg})
	var logb bytes.Buffer
	o := u.options(t, "file://"+t.TempDir(), &logb, "infrastructure-example:v0.2.1", "infrastructure-sample:v1.1.1")
	o.Images = dst + "/mirror"
	sum, err := pipeline.Mirror(ctx, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, logb.String())
	}
	var got []string
	for _, i := range sum.Images {
		got = append(got, i.Copy)
		if !i.Copied {
			t.Errorf("%s was not copied on the first run", i.Source)
		}
	}
	slices.Sort(got)
	want := []string{
		dst + "/mirror/cert-manager/cert-manager-controller:v1.16.0",
		dst + "/mirror/infrastructure-example/capi-example-controller:v0.2.1",
		dst + "/mirror/infrastructure-sample/capi-example-controller:v1.1.1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("image targets (-want +got):\n%s", diff)
	}

	// The index arrived whole, under the source's digest.
	ref, _ := name.ParseReference(want[1])
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := idx.Digest(); d != exDigest {
		t.Errorf("mirrored index digest %s, want the source's %s", d, exDigest)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 3 {
		t.Errorf("mirrored index lists %d platforms, want 3", len(im.Manifests))
	}
	for _, m := range im.Manifests {
		img, err := remote.Image(ref.Context().Digest(m.Digest.String()))
		if err != nil {
			t.Fatalf("platform image %s is not in the mirror: %v", m.Digest, err)
		}
		if _, err := img.Layers(); err != nil {
			t.Fatal(err)
		}
	}
	cmRef, _ := name.ParseReference(want[0])
	if d, err := remote.Head(cmRef); err != nil || d.Digest != cmDigest {
		t.Errorf("cert-manager image at the mirror: %v %v, want %s", d, err, cmDigest)
	}

	for _, s := range []string{
		"infrastructure-example:\n    repository: " + dst + "/mirror/infrastructure-example",
		"cert-manager:\n    repository: " + dst + "/mirror/cert-manager",
	} {
		if !strings.Contains(sum.Config, s) {
			t.Errorf("site config lacks %q:\n%s", s, sum.Config)
		}
	}

	again, err := pipeline.Mirror(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range again.Images {
		if i.Copied {
			t.Errorf("re-run copied %s again", i.Source)
		}
	}
}

func TestMirror_ImagesWithTheSameNameInOneProviderAreRefused(t *testing.T) {
	src, dst := newRegistry(t), newRegistry(t)
	a := src + "/capirepo/capi-example-controller:v0.2.1"
	b := src + "/elsewhere/capi-example-controller:v9"
	pushIndex(t, a)
	pushIndex(t, b)
	u := newUpstream(t, map[string]string{"example": a + " " + b})
	var logb bytes.Buffer
	o := u.options(t, "file://"+t.TempDir(), &logb, "infrastructure-example:v0.2.1")
	o.Images = dst + "/mirror"
	o.CertManager = false
	_, err := pipeline.Mirror(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), a[:strings.LastIndex(a, ":")]) || !strings.Contains(err.Error(), b[:strings.LastIndex(b, ":")]) {
		t.Fatalf("err = %v, want the clash of both images named", err)
	}
}

// workloadsYAML adds a StatefulSet, a Job and a CronJob (with an init
// container and an image with a defaulted variable) to the example's
// components: images clusterctl init list-images does not list.
const workloadsYAML = `---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: capi-example-store, namespace: capi-example-system}
spec:
  template:
    spec:
      containers:
      - {name: store, image: "%[1]s/example/store:v1"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: capi-example-migrate, namespace: capi-example-system}
spec:
  template:
    spec:
      containers:
      - {name: migrate, image: "${MIGRATE_IMAGE:=%[1]s/example/migrate:v1}"}
      - {name: site, image: "${SITE_IMAGE}"}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: capi-example-gc, namespace: capi-example-system}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          initContainers:
          - {name: wait, image: "%[1]s/example/wait:v1"}
          containers:
          - {name: gc, image: "%[1]s/example/gc:v1"}
`

// pushPlatforms pushes an index of one image per platform, as verify
// --images wants them.
func pushPlatforms(t *testing.T, ref string, platforms ...string) {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := v1.ParsePlatform(p)
		if err != nil {
			t.Fatal(err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: pl}})
	}
	r, _ := name.ParseReference(ref)
	if err := remote.WriteIndex(r, idx); err != nil {
		t.Fatal(err)
	}
}

// TestMirrorAndVerify_TheSameImagesOfEveryWorkload: a release whose
// components run a StatefulSet, a Job and a CronJob besides the manager:
// verify --images checks and mirror --images copies the same images, and
// mirror says which of them clusterctl does not list (issue 43).
func TestMirrorAndVerify_TheSameImagesOfEveryWorkload(t *testing.T) {
	ctx := context.Background()
	src, dst := newRegistry(t), newRegistry(t)
	manager := src + "/capirepo/capi-example-controller:v0.2.1"
	want := []string{manager}
	for _, n := range []string{"store", "migrate", "wait", "gc"} {
		want = append(want, src+"/example/"+n+":v1")
	}
	for _, ref := range want {
		pushPlatforms(t, ref, "linux/amd64", "linux/arm64")
	}
	slices.Sort(want)

	u := newUpstream(t, map[string]string{"example": manager + " " + fmt.Sprintf(workloadsYAML, src)})
	var logb bytes.Buffer
	repo := t.TempDir()
	o := u.options(t, "file://"+repo, &logb, "infrastructure-example:v0.2.1")
	o.Images, o.CertManager = dst+"/mirror", false
	sum, err := pipeline.Mirror(ctx, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, logb.String())
	}
	var copied, unlisted []string
	for _, i := range sum.Images {
		copied = append(copied, i.Source)
		if !i.Clusterctl {
			unlisted = append(unlisted, i.Source)
		}
		if _, err := remote.Head(mustRef(t, i.Copy)); err != nil {
			t.Errorf("%s is not at the mirror: %v", i.Copy, err)
		}
	}
	slices.Sort(copied)
	if diff := cmp.Diff(want, copied); diff != "" {
		t.Errorf("mirror copied (-every image the components run +got):\n%s", diff)
	}
	slices.Sort(unlisted)
	if diff := cmp.Diff(slices.DeleteFunc(slices.Clone(want), func(s string) bool { return s == manager }), unlisted); diff != "" {
		t.Errorf("images said not listed by clusterctl (-want +got):\n%s", diff)
	}
	if w := strings.Join(sum.Warnings, "\n"); !strings.Contains(w, "1 image was not copied: a variable without a default names it, which the site sets when it installs; copy that image yourself:\n  ${SITE_IMAGE} (infrastructure-example infrastructure-components.yaml: Job capi-example-system/capi-example-migrate container site)") ||
		!strings.Contains(w, "4 images were copied that `clusterctl init list-images` does not list") ||
		!strings.Contains(w, src+"/example/store:v1 (infrastructure-example: StatefulSet capi-example-system/capi-example-store container store) copied to "+dst+"/mirror/infrastructure-example/store:v1") {
		t.Errorf("warnings:\n%s", w)
	}

	rep, err := pipeline.Verify(ctx, pipeline.VerifyOptions{Path: repo, Version: "v0.2.1", Images: true})
	if err != nil {
		t.Fatalf("verify --images: %v", err)
	}
	var checked []string
	for _, i := range rep.Images.Images {
		if i.Status == verify.ImageSkipped && i.Image == "${SITE_IMAGE}" {
			continue // the site's own image, named by a variable
		}
		checked = append(checked, i.Image)
		if i.Status != verify.ImageOK {
			t.Errorf("verify: %s %s (%s)", i.Image, i.Status, i.Detail)
		}
	}
	slices.Sort(checked)
	if diff := cmp.Diff(copied, checked); diff != "" {
		t.Errorf("verify --images checked (-mirror copied +verify checked):\n%s", diff)
	}
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
