package image

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// newRegistry serves go-containerregistry's in-process registry and returns its host.
func newRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// fakeBinaries writes one small file per platform; the image code never runs them.
func fakeBinaries(t *testing.T, platforms ...[2]string) []Binary {
	t.Helper()
	dir := t.TempDir()
	var out []Binary
	for _, p := range platforms {
		path := filepath.Join(dir, "manager-"+p[0]+"-"+p[1])
		if err := os.WriteFile(path, []byte("binary for "+p[0]+"/"+p[1]), 0o600); err != nil {
			t.Fatal(err)
		}
		out = append(out, Binary{OS: p[0], Arch: p[1], Path: path})
	}
	return out
}

var linuxBoth = [][2]string{{"linux", "amd64"}, {"linux", "arm64"}}

// layerFiles reads the files of an image's last layer.
func layerFiles(t *testing.T, img v1.Image) map[string]*tar.Header {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[len(layers)-1].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		h.PAXRecords = map[string]string{"content": string(data)}
		out[h.Name] = h
	}
}

func TestPush_InProcessRegistryHoldsIndexWithBothPlatforms(t *testing.T) {
	ctx := context.Background()
	host := newRegistry(t)
	repo := host + "/example/capi-example-controller"
	bins := fakeBinaries(t, linuxBoth[0], linuxBoth[1])
	idx, err := Build(ctx, Options{Binaries: bins, Source: "https://github.com/example/provider", Version: "v0.1.0", Revision: "abc123",
		Created: time.Unix(1700000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Push(ctx, idx, repo, "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	if ref.DigestStr() != want.String() || ref.Context().String() != repo {
		t.Errorf("Push returned %s, want %s@%s", ref, repo, want)
	}

	tag, _ := name.NewTag(repo + ":v0.1.0")
	pulled, err := remote.Index(tag)
	if err != nil {
		t.Fatalf("pull %s: %v", tag, err)
	}
	if got, _ := pulled.Digest(); got != want {
		t.Errorf("the tag names %s, pushed %s", got, want)
	}
	im, err := pulled.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 {
		t.Fatalf("index holds %d manifests, want 2", len(im.Manifests))
	}
	for i, d := range im.Manifests {
		bin := bins[i]
		if d.Platform == nil || d.Platform.OS != bin.OS || d.Platform.Architecture != bin.Arch {
			t.Errorf("manifest %d platform %v, want %s", i, d.Platform, bin.platform())
		}
		img, err := remote.Image(tag.Context().Digest(d.Digest.String()))
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS != bin.OS || cf.Architecture != bin.Arch {
			t.Errorf("%s: config says %s/%s", bin.platform(), cf.OS, cf.Architecture)
		}
		if diff := cmp.Diff([]string{"/manager"}, cf.Config.Entrypoint); diff != "" {
			t.Errorf("%s: entrypoint (-want +got):\n%s", bin.platform(), diff)
		}
		if cf.Config.User != "65532" {
			t.Errorf("%s: user %q, want 65532", bin.platform(), cf.Config.User)
		}
		wantLabels := map[string]string{LabelSource: "https://github.com/example/provider", LabelVersion: "v0.1.0", LabelRevision: "abc123"}
		if diff := cmp.Diff(wantLabels, cf.Config.Labels); diff != "" {
			t.Errorf("%s: labels (-want +got):\n%s", bin.platform(), diff)
		}
		files := layerFiles(t, img)
		h, ok := files["manager"]
		if !ok || len(files) != 1 {
			t.Fatalf("%s: layer holds %v, want only manager", bin.platform(), files)
		}
		if h.Mode != 0o755 || !h.ModTime.Equal(time.Unix(1700000000, 0)) || h.Uid != 0 {
			t.Errorf("%s: /manager mode %o mtime %v uid %d", bin.platform(), h.Mode, h.ModTime, h.Uid)
		}
		if got := h.PAXRecords["content"]; got != "binary for "+bin.platform() {
			t.Errorf("%s: /manager holds %q", bin.platform(), got)
		}
	}
}

func TestBuild_SameBinariesGiveSameDigest(t *testing.T) {
	bins := fakeBinaries(t, linuxBoth[0], linuxBoth[1])
	o := Options{Binaries: bins, Version: "v1.0.0", Revision: "r"}
	var digests []v1.Hash
	for range 2 {
		idx, err := Build(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := idx.Digest()
		digests = append(digests, d)
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds: %s and %s", digests[0], digests[1])
	}
	o.Revision = "other"
	idx, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := idx.Digest(); d == digests[0] {
		t.Error("a different revision label gave the same digest")
	}
}

func TestBuild_MultiPlatformBaseGivesEachPlatformItsBase(t *testing.T) {
	ctx := context.Background()
	host := newRegistry(t)
	base := mutate.IndexMediaType(empty.Index, "application/vnd.oci.image.index.v1+json")
	baseLayers := map[string]v1.Hash{}
	for _, p := range linuxBoth {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		cf, _ := img.ConfigFile()
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = p[0], p[1]
		cf.Config.Env = []string{"BASE=" + p[1]}
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			t.Fatal(err)
		}
		ls, _ := img.Layers()
		baseLayers[p[1]], _ = ls[0].Digest()
		base = mutate.AppendManifests(base, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p[0], Architecture: p[1]}}})
	}
	baseRef := host + "/base/static:latest"
	tag, _ := name.NewTag(baseRef)
	if err := remote.WriteIndex(tag, base); err != nil {
		t.Fatal(err)
	}

	idx, err := Build(ctx, Options{Binaries: fakeBinaries(t, linuxBoth[0], linuxBoth[1]), Base: baseRef})
	if err != nil {
		t.Fatal(err)
	}
	im, _ := idx.IndexManifest()
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		ls, _ := img.Layers()
		first, _ := ls[0].Digest()
		if len(ls) != 2 || first != baseLayers[d.Platform.Architecture] {
			t.Errorf("%s: %d layers, first %s; want the %s base layer then the manager", d.Platform, len(ls), first, d.Platform.Architecture)
		}
		cf, _ := img.ConfigFile()
		if diff := cmp.Diff([]string{"BASE=" + d.Platform.Architecture}, cf.Config.Env); diff != "" {
			t.Errorf("%s: env from the base (-want +got):\n%s", d.Platform, diff)
		}
	}

	_, err = Build(ctx, Options{Binaries: fakeBinaries(t, [2]string{"linux", "s390x"}), Base: baseRef})
	if err == nil || !strings.Contains(err.Error(), "no image for linux/s390x") {
		t.Errorf("a base without the platform: error %v", err)
	}
}

func TestWriteLayout_IndexTaggedWithVersion(t *testing.T) {
	idx, err := Build(context.Background(), Options{Binaries: fakeBinaries(t, linuxBoth[0], linuxBoth[1]), Version: "v0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "oci")
	for range 2 { // the second run replaces the first layout
		if err := WriteLayout(dir, idx, "v0.1.0"); err != nil {
			t.Fatal(err)
		}
	}
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	tm, _ := top.IndexManifest()
	if len(tm.Manifests) != 1 || tm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v0.1.0" {
		t.Fatalf("index.json = %+v, want one index tagged v0.1.0", tm.Manifests)
	}
	want, _ := idx.Digest()
	if tm.Manifests[0].Digest != want {
		t.Errorf("layout holds %s, built %s", tm.Manifests[0].Digest, want)
	}
	inner, err := top.ImageIndex(want)
	if err != nil {
		t.Fatal(err)
	}
	if im, _ := inner.IndexManifest(); len(im.Manifests) != 2 {
		t.Errorf("layout's index holds %d images, want 2", len(im.Manifests))
	}
	siblings, _ := os.ReadDir(filepath.Dir(dir))
	if len(siblings) != 1 {
		t.Errorf("left %d entries beside the layout, want only it", len(siblings))
	}

	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "keep.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(other, idx, "v0.1.0"); err == nil || !strings.Contains(err.Error(), "not an OCI layout") {
		t.Errorf("writing over a folder of other files: %v", err)
	}
}

func TestBuild_BadInput(t *testing.T) {
	bins := fakeBinaries(t, linuxBoth[0])
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no binaries", Options{}, "no binaries"},
		{"platform twice", Options{Binaries: append(bins, bins...)}, "two binaries for linux/amd64"},
		{"missing file", Options{Binaries: []Binary{{OS: "linux", Arch: "amd64", Path: "/nonexistent/manager"}}}, "/nonexistent/manager"},
		{"bad base ref", Options{Binaries: bins, Base: "UPPER/Case:x"}, "--base-image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(context.Background(), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
