package image_test

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/capirepo/capirepo/image"
	"github.com/capirepo/capirepo/image/imagetest"
)

func binaries(t *testing.T, platforms ...[2]string) []image.Binary {
	t.Helper()
	dir := t.TempDir()
	var out []image.Binary
	for _, p := range platforms {
		path := filepath.Join(dir, "manager-"+p[0]+"-"+p[1])
		if err := os.WriteFile(path, []byte("binary for "+p[0]+"/"+p[1]), 0o600); err != nil {
			t.Fatal(err)
		}
		out = append(out, image.Binary{OS: p[0], Arch: p[1], Path: path})
	}
	return out
}

// files lists every file of an image's layers.
func files(t *testing.T, img v1.Image) []string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, h.Name)
		}
		_ = rc.Close()
	}
	return out
}

// TestBuild_OnTheDistrolessStandInRecordsTheBaseDigest: the manager sits on
// the base (CA certificates, user 65532), the index lists the base's
// platforms (arm64/v8), and the base's name and resolved digest are in the
// annotations of the index and of each image.
func TestBuild_OnTheDistrolessStandInRecordsTheBaseDigest(t *testing.T) {
	host := imagetest.NewRegistry(t)
	ref, baseDigest := imagetest.PushBase(t, host)
	idx, err := image.Build(context.Background(), image.Options{Base: ref, Binaries: binaries(t, [2]string{"linux", "amd64"}, [2]string{"linux", "arm64"})})
	if err != nil {
		t.Fatal(err)
	}
	gotName, gotDigest, err := image.ResolvedBase(idx)
	if err != nil {
		t.Fatal(err)
	}
	if gotName != ref || gotDigest != baseDigest.String() {
		t.Errorf("index records base %s@%s, want %s@%s", gotName, gotDigest, ref, baseDigest)
	}
	baseIdx, err := imagetest.Index(t, ref)
	if err != nil {
		t.Fatal(err)
	}
	bm, _ := baseIdx.IndexManifest()
	im, _ := idx.IndexManifest()
	var plats []string
	for i, d := range im.Manifests {
		plats = append(plats, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := img.Manifest()
		if m.Annotations[image.AnnotationBaseName] != ref || m.Annotations[image.AnnotationBaseDigest] != bm.Manifests[i].Digest.String() {
			t.Errorf("%s: annotations %v, want the base %s and its %s manifest %s", d.Platform, m.Annotations, ref, d.Platform, bm.Manifests[i].Digest)
		}
		cf, _ := img.ConfigFile()
		if cf.Config.User != image.User || cf.Config.Entrypoint[0] != image.Entrypoint {
			t.Errorf("%s: user %q entrypoint %v", d.Platform, cf.Config.User, cf.Config.Entrypoint)
		}
		if diff := cmp.Diff([]string{"etc/os-release", "etc/passwd", imagetest.CAFile, "manager"}, files(t, img)); diff != "" {
			t.Errorf("%s: files (-want +got):\n%s", d.Platform, diff)
		}
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64/v8"}, plats); diff != "" {
		t.Errorf("index platforms (-want +got):\n%s", diff)
	}
}

func TestBuild_NoBaseIsTheBareBinaryWithNothingRecorded(t *testing.T) {
	idx, err := image.Build(context.Background(), image.Options{Base: image.NoBase, Binaries: binaries(t, [2]string{"linux", "amd64"})})
	if err != nil {
		t.Fatal(err)
	}
	if n, d, _ := image.ResolvedBase(idx); n != "" || d != "" {
		t.Errorf("records base %q %q", n, d)
	}
	im, _ := idx.IndexManifest()
	img, _ := idx.Image(im.Manifests[0].Digest)
	if diff := cmp.Diff([]string{"manager"}, files(t, img)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if cf, _ := img.ConfigFile(); cf.Config.User != image.User {
		t.Errorf("user %q, want %s", cf.Config.User, image.User)
	}
}
