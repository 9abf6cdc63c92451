package sign

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What an image's referrers hold.
const (
	// CosignSignPredicate is the predicate type of the statement cosign
	// sign (v3) signs for an image: the image digest, and no claims.
	CosignSignPredicate = "https://sigstore.dev/cosign/sign/v1"
	// SBOMArtifactType is the media and artifact type of a CycloneDX SBOM.
	SBOMArtifactType = "application/vnd.cyclonedx+json"

	annotationBundleContent   = "dev.sigstore.bundle.content"
	annotationBundlePredicate = "dev.sigstore.bundle.predicateType"
	annotationCreated         = "org.opencontainers.image.created"
	statementV1               = "https://in-toto.io/Statement/v1"
)

// emptyConfig is the OCI empty descriptor's content, {}.
var emptyConfig = []byte("{}")

// Referrer is a manifest that refers to an image: a signature or an SBOM.
type Referrer struct {
	// Digest is the referrer manifest's digest.
	Digest       string `json:"digest"`
	ArtifactType string `json:"artifactType"`
	// Data is its one layer: the bundle, or the SBOM.
	Data []byte `json:"-"`
}

// SignImage signs the image or OCI artifact at ref as cosign sign (v3)
// does: an in-toto statement naming ref's digest with cosign's sign
// predicate, in a bundle, pushed as an OCI 1.1 referrer of ref (artifactType
// the bundle's media type). A signature the signer already made for ref is
// kept and not made again. created stamps the referrer; zero means now.
func SignImage(ctx context.Context, s *Signer, ref name.Digest, created time.Time, opts ...remote.Option) (*Signature, error) {
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	existing, err := Referrers(ctx, ref, BundleMediaType, opts...)
	if err != nil {
		return nil, err
	}
	for _, r := range existing {
		if sig, err := Describe(r.Data); err == nil && s.made(sig) && statementNames(sig.Bundle, ref.DigestStr()) {
			return sig, nil
		}
	}
	hash, err := v1.NewHash(ref.DigestStr())
	if err != nil {
		return nil, err
	}
	st, err := json.Marshal(map[string]any{
		"_type":         statementV1,
		"subject":       []map[string]any{{"digest": map[string]string{hash.Algorithm: hash.Hex}, "annotations": map[string]string{}}},
		"predicateType": CosignSignPredicate,
		"predicate":     map[string]any{},
	})
	if err != nil {
		return nil, err
	}
	sig, err := s.SignStatement(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", ref, err)
	}
	_, err = Attach(ctx, ref, BundleMediaType, sig.Bundle, map[string]string{
		annotationBundleContent:   "dsse-envelope",
		annotationBundlePredicate: CosignSignPredicate,
	}, created, opts...)
	if err != nil {
		return nil, err
	}
	return sig, nil
}

// made says whether the signer made a signature: the same key, or the
// same certificate identity.
func (s *Signer) made(sig *Signature) bool {
	if s.certs == nil {
		return sig.Identity.Key == "hint "+string(s.kp.GetHint())
	}
	id := s.Identity()
	return id.Subject != "" && sig.Identity.Subject == id.Subject && sig.Identity.Issuer == id.Issuer
}

// statementNames says whether a bundle's DSSE statement has the digest as
// a subject (not checked: only to find a signature already made).
func statementNames(bundleJSON []byte, digest string) bool {
	b, err := loadBundle(bundleJSON)
	if err != nil || b.GetDsseEnvelope() == nil {
		return false
	}
	var st struct {
		Subject []struct {
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
	}
	if json.Unmarshal(b.GetDsseEnvelope().GetPayload(), &st) != nil {
		return false
	}
	h, err := v1.NewHash(digest)
	if err != nil {
		return false
	}
	for _, s := range st.Subject {
		if s.Digest[h.Algorithm] == h.Hex {
			return true
		}
	}
	return false
}

// Attach pushes data as an OCI 1.1 referrer of subject: a manifest with
// the artifact type, the empty config and data as its one layer, in the
// layout cosign v3 writes (artifactType also on the config descriptor). A
// registry without the referrers API gets go-containerregistry's referrers
// tag (sha256-<hex>) updated instead, which cosign and oras read too.
func Attach(ctx context.Context, subject name.Digest, artifactType string, data []byte, annotations map[string]string, created time.Time, opts ...remote.Option) (name.Digest, error) {
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	desc, err := remote.Head(subject, opts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("%s: %w", subject, err)
	}
	repo := subject.Context()
	layer := static.NewLayer(data, types.MediaType(artifactType))
	config := static.NewLayer(emptyConfig, types.OCIEmptyJSON)
	for _, l := range []v1.Layer{config, layer} {
		if err := remote.WriteLayer(repo, l, opts...); err != nil {
			return name.Digest{}, fmt.Errorf("push %s to %s: %w", artifactType, repo, err)
		}
	}
	ld, _ := layer.Digest()
	cd, _ := config.Digest()
	if created.IsZero() {
		created = time.Now()
	}
	ann := map[string]string{annotationCreated: created.UTC().Format(time.RFC3339)}
	for k, v := range annotations {
		ann[k] = v
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        v1.Descriptor{MediaType: types.OCIEmptyJSON, Size: int64(len(emptyConfig)), Digest: cd, ArtifactType: artifactType},
		Layers:        []v1.Descriptor{{MediaType: types.MediaType(artifactType), Size: int64(len(data)), Digest: ld}},
		Annotations:   ann,
		Subject:       &v1.Descriptor{MediaType: desc.MediaType, Size: desc.Size, Digest: desc.Digest},
		ArtifactType:  artifactType,
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return name.Digest{}, err
	}
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return name.Digest{}, err
	}
	ref := repo.Digest(h.String())
	if err := remote.Put(ref, rawManifest{raw: raw, mediaType: types.OCIManifestSchema1}, opts...); err != nil {
		return name.Digest{}, fmt.Errorf("push the %s referrer of %s: %w", artifactType, subject, err)
	}
	return ref, nil
}

type rawManifest struct {
	raw       []byte
	mediaType types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.raw, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mediaType, nil }

// Referrers returns the referrers of ref with the artifact type ("" for
// all), each with its layer. The artifact type is read from each manifest,
// not from the registry's index, which some registries fill from the
// config's media type instead.
func Referrers(ctx context.Context, ref name.Digest, artifactType string, opts ...remote.Option) ([]Referrer, error) {
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	idx, err := remote.Referrers(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", ref, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", ref, err)
	}
	var out []Referrer
	for _, d := range im.Manifests {
		r, err := readReferrer(ref.Context().Digest(d.Digest.String()), opts)
		if err != nil {
			return nil, err
		}
		if artifactType == "" || r.ArtifactType == artifactType {
			out = append(out, *r)
		}
	}
	return out, nil
}

// maxReferrerLayer bounds what is read of a referrer's layer: a bundle or
// an SBOM, not an image.
const maxReferrerLayer = 32 << 20

func readReferrer(ref name.Digest, opts []remote.Option) (*Referrer, error) {
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("referrer %s: %w", ref, err)
	}
	var m v1.Manifest
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		return nil, fmt.Errorf("referrer %s: %w", ref, err)
	}
	r := &Referrer{Digest: desc.Digest.String(), ArtifactType: m.ArtifactType}
	if r.ArtifactType == "" {
		r.ArtifactType = string(m.Config.MediaType)
	}
	if len(m.Layers) != 1 || m.Layers[0].Size > maxReferrerLayer {
		return r, nil // not one of ours: listed, not read
	}
	l, err := remote.Layer(ref.Context().Digest(m.Layers[0].Digest.String()), opts...)
	if err != nil {
		return nil, fmt.Errorf("referrer %s: %w", ref, err)
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, fmt.Errorf("referrer %s: %w", ref, err)
	}
	defer func() { _ = rc.Close() }()
	if r.Data, err = io.ReadAll(io.LimitReader(rc, maxReferrerLayer)); err != nil {
		return nil, fmt.Errorf("referrer %s: %w", ref, err)
	}
	return r, nil
}

// VerifyImage finds the signatures of the image or artifact at ref (its
// bundle referrers) and checks them with v: the statement must name ref's
// digest. It returns those that check out, and an error that says why
// each one did not when none does.
func VerifyImage(ctx context.Context, v *Verifier, ref name.Digest, opts ...remote.Option) ([]*Signature, error) {
	refs, err := Referrers(ctx, ref, BundleMediaType, opts...)
	if err != nil {
		return nil, err
	}
	if len(refs) == 0 {
		return nil, fmt.Errorf("%s is not signed: no referrer of type %s", ref, BundleMediaType)
	}
	h, err := v1.NewHash(ref.DigestStr())
	if err != nil {
		return nil, err
	}
	want, err := hex.DecodeString(h.Hex)
	if err != nil {
		return nil, err
	}
	var ok []*Signature
	var errs []error
	for _, r := range refs {
		sig, _, err := v.VerifyStatement(r.Data, want)
		if err != nil {
			errs = append(errs, fmt.Errorf("signature %s: %w", r.Digest, err))
			continue
		}
		ok = append(ok, sig)
	}
	if len(ok) == 0 {
		return nil, fmt.Errorf("%s: no signature checks out for %s: %w", ref, v, errors.Join(errs...))
	}
	return ok, nil
}
