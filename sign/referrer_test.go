package sign_test

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/sign/signtest"
)

// pushRandom pushes a random image to a registry and returns it by digest.
func pushRandom(t *testing.T, host, repo string) name.Digest {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(host+"/"+repo+":v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return tag.Context().Digest(d.String())
}

func TestSignImage_ReferrerAsCosignWritesIt(t *testing.T) {
	for _, referrersAPI := range []bool{true, false} {
		t.Run(map[bool]string{true: "referrers API", false: "referrers tag"}[referrersAPI], func(t *testing.T) {
			srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(referrersAPI), registry.Logger(log.New(io.Discard, "", 0))))
			t.Cleanup(srv.Close)
			host := strings.TrimPrefix(srv.URL, "http://")
			img := pushRandom(t, host, "capi/manager")
			ss := signtest.New(t)
			s := keylessSigner(t, ss, identity)
			created := time.Date(2026, 11, 25, 22, 46, 34, 0, time.UTC)
			sig, err := sign.SignImage(context.Background(), s, img, created)
			if err != nil {
				t.Fatal(err)
			}
			if sig.Identity.Subject != identity || len(sig.Log) != 1 {
				t.Errorf("signature by %+v, log %v", sig.Identity, sig.Log)
			}

			// The manifest, checked itself (the test registry's index lists
			// the config's media type as the artifact type).
			refs, err := sign.Referrers(context.Background(), img, sign.BundleMediaType)
			if err != nil || len(refs) != 1 {
				t.Fatalf("referrers: %v, %v", refs, err)
			}
			desc, err := remote.Get(img.Context().Digest(refs[0].Digest))
			if err != nil {
				t.Fatal(err)
			}
			var m v1.Manifest
			if err := json.Unmarshal(desc.Manifest, &m); err != nil {
				t.Fatal(err)
			}
			head, _ := remote.Head(img)
			want := v1.Manifest{
				SchemaVersion: 2, MediaType: "application/vnd.oci.image.manifest.v1+json",
				Config: v1.Descriptor{MediaType: "application/vnd.oci.empty.v1+json", Size: 2,
					Digest:       v1.Hash{Algorithm: "sha256", Hex: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},
					ArtifactType: sign.BundleMediaType},
				Layers: []v1.Descriptor{{MediaType: sign.BundleMediaType, Size: int64(len(refs[0].Data)), Digest: m.Layers[0].Digest}},
				Annotations: map[string]string{
					"dev.sigstore.bundle.content":       "dsse-envelope",
					"dev.sigstore.bundle.predicateType": "https://sigstore.dev/cosign/sign/v1",
					"org.opencontainers.image.created":  "2026-11-25T22:46:34Z",
				},
				Subject:      &v1.Descriptor{MediaType: head.MediaType, Size: head.Size, Digest: head.Digest},
				ArtifactType: sign.BundleMediaType,
			}
			if diff := cmp.Diff(want, m); diff != "" {
				t.Errorf("referrer manifest (-cosign v3 +got):\n%s", diff)
			}

			v, err := sign.NewVerifier(sign.VerifyOptions{Identity: identity, Issuer: signtest.GitHubIssuer, TrustedRoot: ss.TrustedRoot(t)})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := sign.VerifyImage(context.Background(), v, img); err != nil || len(got) != 1 {
				t.Errorf("VerifyImage = %v, %v", got, err)
			}

			// Signing again keeps the signature: no second referrer.
			if _, err := sign.SignImage(context.Background(), s, img, created); err != nil {
				t.Fatal(err)
			}
			if refs, _ := sign.Referrers(context.Background(), img, sign.BundleMediaType); len(refs) != 1 {
				t.Errorf("%d signatures after signing twice", len(refs))
			}

			// A signature of another digest, attached to this image, is refused.
			other := pushRandom(t, host, "capi/other")
			if _, err := sign.Attach(context.Background(), other, sign.BundleMediaType, refs[0].Data, nil, created); err != nil {
				t.Fatal(err)
			}
			if _, err := sign.VerifyImage(context.Background(), v, other); err == nil || !strings.Contains(err.Error(), "no signature checks out") {
				t.Errorf("another image's signature: %v", err)
			}
			// Unsigned.
			bare := pushRandom(t, host, "capi/bare")
			if _, err := sign.VerifyImage(context.Background(), v, bare); err == nil || !strings.Contains(err.Error(), "is not signed") {
				t.Errorf("unsigned image: %v", err)
			}
		})
	}
}
