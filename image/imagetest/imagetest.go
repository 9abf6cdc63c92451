// Package imagetest serves go-containerregistry's in-process registry and
// pushes a stand-in of the default base image to it, so image tests never
// reach a public registry. It is for tests only.
package imagetest

import (
	"archive/tar"
	"bytes"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// CAFile is where the stand-in base, like distroless, keeps CA certificates.
const CAFile = "etc/ssl/certs/ca-certificates.crt"

// NewRegistry serves an in-process registry for the test and returns its host.
func NewRegistry(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// PushBase pushes to host/distroless/static:nonroot a stand-in of
// gcr.io/distroless/static:nonroot: an OCI index with one image per
// platform ("linux/amd64", "linux/arm64/v8", ...; default linux/amd64 and
// linux/arm64/v8), each a layer with CAFile and /etc/passwd, user 65532.
// It returns the reference and the index digest.
func PushBase(t testing.TB, host string, platforms ...string) (string, v1.Hash) {
	t.Helper()
	ref := host + "/distroless/static:nonroot"
	return ref, PushIndex(t, ref, platforms...)
}

// PushIndex pushes to ref an index like PushBase's and returns its digest.
func PushIndex(t testing.TB, ref string, platforms ...string) v1.Hash {
	t.Helper()
	if len(platforms) == 0 {
		platforms = []string{"linux/amd64", "linux/arm64/v8"}
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		plat, err := v1.ParsePlatform(p)
		if err != nil {
			t.Fatal(err)
		}
		img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
		layer := fileLayer(t, map[string]string{
			CAFile:           "-----BEGIN CERTIFICATE-----\nstand-in for " + p + "\n-----END CERTIFICATE-----\n",
			"etc/passwd":     "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
			"etc/os-release": "PRETTY_NAME=\"stand-in distroless static\"\n",
		})
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture, cf.Variant = plat.OS, plat.Architecture, plat.Variant
		cf.Config.User = "65532"
		cf.Config.WorkingDir = "/home/nonroot"
		cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=/" + CAFile}
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			t.Fatal(err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: plat}})
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatal(err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func fileLayer(t testing.TB, files map[string]string) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range []string{"etc/os-release", "etc/passwd", CAFile} {
		data := files[n]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Index pulls an index from the in-process registry.
func Index(t testing.TB, ref string) (v1.ImageIndex, error) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	return remote.Index(r)
}
