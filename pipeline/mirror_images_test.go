package pipeline_test

import (
	"bytes"
	"context"
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
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capirepo/capirepo/pipeline"
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

func TestComponentImages_AsClusterctlListImages(t *testing.T) {
	data := []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: x}
data:
  image: not/an/image:1
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      initContainers:
      - {name: i, image: "registry.example/init:1"}
      containers:
      - {name: m, image: "${MANAGER_IMAGE:=registry.example/capi/manager:v1}"}
      - {name: s, image: "registry.example/sidecar@sha256:0123456789012345678901234567890123456789012345678901234567890123"}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds}
spec:
  template:
    spec:
      containers:
      - {name: a, image: "registry.example/init:1"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      containers:
      - {name: j, image: "registry.example/job:1"}
`)
	got, err := pipeline.ComponentImages(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"registry.example/capi/manager:v1", "registry.example/sidecar@sha256:0123456789012345678901234567890123456789012345678901234567890123", "registry.example/init:1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
}
