package verify_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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

	"github.com/capirepo/capirepo/verify"
)

// privateRegistry serves the in-process registry; once locked, it refuses
// every request under /v2/private/ as a private repository does.
func privateRegistry(t *testing.T) (string, *atomic.Bool) {
	t.Helper()
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	locked := &atomic.Bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if locked.Load() && strings.HasPrefix(r.URL.Path, "/v2/private/") {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), locked
}

func platformImage(t *testing.T, os, arch string) v1.Image {
	t.Helper()
	img, err := random.Image(32, 1)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = os, arch
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func pushIndex(t *testing.T, ref string, platforms ...[2]string) {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: platformImage(t, p[0], p[1]),
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p[0], Architecture: p[1]}}})
	}
	tag, _ := name.NewTag(ref)
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatal(err)
	}
}

func TestImages_ReportsMissingImagesAndPlatformsByObjectAndContainer(t *testing.T) {
	host, locked := privateRegistry(t)
	both := [][2]string{{"linux", "amd64"}, {"linux", "arm64"}}
	pushIndex(t, host+"/capx/manager:v1.0.0", both...)
	pushIndex(t, host+"/capx/amd64-only:v1.0.0", both[0])
	single := platformImage(t, "linux", "amd64")
	tag, _ := name.NewTag(host + "/capx/single:v1.0.0")
	if err := remote.Write(tag, single); err != nil {
		t.Fatal(err)
	}
	pushIndex(t, host+"/private/manager:v1.0.0", both...)
	locked.Store(true)

	components := `apiVersion: v1
kind: Namespace
metadata:
  name: capx-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: capx-controller-manager
  namespace: capx-system
spec:
  template:
    spec:
      initContainers:
      - name: init
        image: ` + host + `/capx/amd64-only:v1.0.0
      containers:
      - name: manager
        image: ` + host + `/capx/manager:v1.0.0
      - name: sidecar
        image: ` + host + `/capx/not-promoted:v1.0.0
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: cleanup
  namespace: capx-system
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: job
            image: ` + host + `/capx/single:v1.0.0
          - name: private
            image: ` + host + `/private/manager:v1.0.0
          - name: templated
            image: ${CAPX_JOB_IMAGE}
`
	uses, err := verify.ComponentImages("infrastructure-capx", "infrastructure-components.yaml", []byte(components))
	if err != nil {
		t.Fatal(err)
	}
	if len(uses) != 6 || uses[0].Object != "Deployment capx-system/capx-controller-manager" || uses[0].Container != "init" {
		t.Fatalf("uses = %+v", uses)
	}
	rep, err := verify.Images(context.Background(), uses, verify.ImagesOptions{})
	got := map[string]string{}
	for _, r := range rep.Images {
		got[strings.TrimPrefix(r.Image, host+"/")] = r.Status + ": " + r.Detail
	}
	want := map[string]string{
		"capx/manager:v1.0.0":      "ok: ",
		"capx/amd64-only:v1.0.0":   "missing: no image for linux/arm64",
		"capx/not-promoted:v1.0.0": "missing: not found in the registry",
		"capx/single:v1.0.0":       "missing: no image for linux/arm64",
		"private/manager:v1.0.0":   "unreadable: the registry refused to show it (401): private, or not there; set registry credentials (docker config) to check it",
		"${CAPX_JOB_IMAGE}":        "skipped: the reference holds variables, set when clusterctl installs",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if err == nil {
		t.Fatal("no error for missing images")
	}
	for _, s := range []string{
		"Deployment capx-system/capx-controller-manager container init: image " + host + "/capx/amd64-only:v1.0.0: no image for linux/arm64",
		"Deployment capx-system/capx-controller-manager container sidecar: image " + host + "/capx/not-promoted:v1.0.0: not found",
		"CronJob capx-system/cleanup container job: image " + host + "/capx/single:v1.0.0: no image for linux/arm64",
		"3 of 6 images",
	} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
	// Only amd64 is built: the amd64-only images are fine.
	rep, err = verify.Images(context.Background(), uses, verify.ImagesOptions{Platforms: []string{"linux/amd64"}})
	if err == nil || rep.Count(verify.ImageMissing) != 1 || rep.Count(verify.ImageOK) != 3 {
		t.Errorf("amd64 only: %d missing, %d ok, err %v", rep.Count(verify.ImageMissing), rep.Count(verify.ImageOK), err)
	}
}
