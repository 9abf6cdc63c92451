package verify_test

import (
	"context"
	"errors"
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

	"github.com/capirepo/capirepo/release"
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
          - name: defaulted
            image: ${CAPX_MANAGER_IMAGE:=` + host + `/capx/manager:v1.0.0}
`
	uses, err := release.ComponentImages("infrastructure-capx", "infrastructure-components.yaml", []byte(components))
	if err != nil {
		t.Fatal(err)
	}
	if len(uses) != 7 || uses[0].Object != "Deployment capx-system/capx-controller-manager" || uses[0].Container != "init" {
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
		"${CAPX_JOB_IMAGE}":        "skipped: the reference holds variables without a default, set when clusterctl installs",
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

// TestImages_AnUnreachableRegistryIsNotMissing: an image on a registry that
// cannot be asked is reported as unreachable, apart from missing ones, and
// the error says it is not the same as missing; reported statuses do not
// fail the check.
func TestImages_AnUnreachableRegistryIsNotMissing(t *testing.T) {
	host, _ := privateRegistry(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	down := strings.TrimPrefix(closed.URL, "http://")
	closed.Close() // nothing listens there now: connection refused
	uses := []release.ImageUse{
		{Provider: "infrastructure-capx", File: "infrastructure-components.yaml", Object: "Deployment capx-system/m", Container: "manager", Image: down + "/capx/manager:v1.0.0"},
		{Provider: "infrastructure-capx", File: "infrastructure-components.yaml", Object: "Deployment capx-system/m", Container: "sidecar", Image: host + "/capx/not-promoted:v1.0.0"},
	}
	rep, err := verify.Images(context.Background(), uses, verify.ImagesOptions{})
	if got := [2]int{rep.Count(verify.ImageUnreachable), rep.Count(verify.ImageMissing)}; got != [2]int{1, 1} {
		t.Errorf("unreachable, missing = %v, want [1 1]", got)
	}
	var ie *verify.ImagesError
	if !errors.As(err, &ie) || len(ie.Missing) != 1 || len(ie.Unreachable) != 1 {
		t.Fatalf("err = %v", err)
	}
	for _, s := range []string{"1 of 2 images are not ready for clusterctl init", "not-promoted:v1.0.0: not found in the registry",
		"1 of 2 images could not be checked, which is not the same as missing", "container manager: image " + down + "/capx/manager:v1.0.0: could not reach the registry"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
	if _, err := verify.Images(context.Background(), uses[:1], verify.ImagesOptions{Report: []string{verify.ImageUnreachable}}); err != nil {
		t.Errorf("an unreachable registry, reported: %v", err)
	}
	if _, err := verify.Images(context.Background(), uses, verify.ImagesOptions{Report: []string{verify.ImageUnreachable}}); err == nil || !strings.Contains(err.Error(), "not-promoted") {
		t.Errorf("a missing image among reported unreachable ones: %v", err)
	}
}
