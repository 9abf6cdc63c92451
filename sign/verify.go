package sign

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/publish"
)

// VerifyOptions say whose signatures are accepted: a public key's, or a
// certificate identity's from an OIDC issuer (cosign's --key, and
// --certificate-identity with --certificate-oidc-issuer).
type VerifyOptions struct {
	// Key is a public key, PEM (cosign.pub).
	Key []byte
	// Identity is the certificate's subject (an e-mail, or a URI such as a
	// GitHub workflow's https://github.com/OWNER/REPO/.github/workflows/F@REF);
	// IdentityRegexp matches it instead.
	Identity, IdentityRegexp string
	// Issuer is the OIDC issuer (https://token.actions.githubusercontent.com,
	// https://gitlab.com); IssuerRegexp matches it instead.
	Issuer, IssuerRegexp string
	// TrustedRoot is what certificates, log entries and timestamps are
	// checked against: needed for an identity; with a key, it has the log
	// entries checked too.
	TrustedRoot root.TrustedMaterial
	// RequireLog refuses a key's signature that has no transparency-log
	// entry (an identity's always needs one).
	RequireLog bool
	// AllowMissingProvenance accepts a signed release that holds no
	// provenance.intoto.json. Its signed checksums.txt names files, not a
	// version, so nothing signed then tells it from another release put
	// under its name (a rollback); capirepo sign writes and signs a
	// provenance unless told not to, so a release without one is refused by
	// default.
	AllowMissingProvenance bool
}

// Verifier checks bundles for one key or identity.
type Verifier struct {
	v      *verify.Verifier
	policy verify.PolicyOption
	desc   string
	// key is the fingerprint of the key, when it checks for one.
	key string
	// logs names the trusted logs by their ID (hex), for the entries printed.
	logs map[string]string
	// allowNoProvenance is VerifyOptions.AllowMissingProvenance.
	allowNoProvenance bool
}

// NewVerifier checks the options and makes the verifier.
func NewVerifier(o VerifyOptions) (*Verifier, error) {
	v, err := newVerifier(o)
	if err != nil {
		return nil, err
	}
	v.allowNoProvenance = o.AllowMissingProvenance
	return v, nil
}

// LoadVerifier makes the verifier o asks for, its public key read from
// keyFile ("" for a certificate identity) and, for an identity or a key
// whose signatures need a log entry, the trusted root of inst (else the
// public instance's; a key needs no network). Mistakes in what is asked
// for are usage errors.
func LoadVerifier(ctx context.Context, o VerifyOptions, keyFile string, inst InstanceOptions) (*Verifier, error) {
	if keyFile != "" {
		pem, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, publish.Usagef("%s: %v", option.Flag(ctx, option.Key), err)
		}
		o.Key = pem
	}
	if needRoot := keyFile == "" || o.RequireLog; needRoot || inst.TrustedRoot != "" {
		_, tr, err := LoadInstance(ctx, inst, false, needRoot)
		if err != nil {
			return nil, err
		}
		if tr != nil {
			o.TrustedRoot = tr
		}
	}
	v, err := NewVerifier(o)
	if err != nil {
		return nil, publish.UsageError{Err: err}
	}
	return v, nil
}

func newVerifier(o VerifyOptions) (*Verifier, error) {
	hasID := o.Identity != "" || o.IdentityRegexp != "" || o.Issuer != "" || o.IssuerRegexp != ""
	switch {
	case len(o.Key) > 0 && hasID:
		return nil, errors.New("give a key or a certificate identity, not both")
	case len(o.Key) > 0:
		return keyVerifier(o)
	case !hasID:
		return nil, errors.New("no key or certificate identity to verify signatures against")
	case o.Identity == "" && o.IdentityRegexp == "":
		return nil, fmt.Errorf("a certificate identity (%s) is needed with the issuer", option.CertificateIdentity)
	case o.Issuer == "" && o.IssuerRegexp == "":
		return nil, fmt.Errorf("an OIDC issuer (%s) is needed with the identity", option.CertificateOIDCIssuer)
	case o.TrustedRoot == nil:
		return nil, errors.New("a certificate identity is checked against a trusted root, and none was given")
	}
	id, err := verify.NewShortCertificateIdentity(o.Issuer, o.IssuerRegexp, o.Identity, o.IdentityRegexp)
	if err != nil {
		return nil, err
	}
	opts := []verify.VerifierOption{verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1)}
	// A root that names certificate-transparency logs has its certificates
	// logged there (Fulcio embeds the SCT): require it, as cosign does.
	if len(o.TrustedRoot.CTLogs()) > 0 {
		opts = append(opts, verify.WithSignedCertificateTimestamps(1))
	}
	v, err := verify.NewVerifier(o.TrustedRoot, opts...)
	if err != nil {
		return nil, err
	}
	desc := "identity " + orRegexp(o.Identity, o.IdentityRegexp) + " from issuer " + orRegexp(o.Issuer, o.IssuerRegexp)
	return &Verifier{v: v, policy: verify.WithCertificateIdentity(id), desc: desc, logs: logNames(o.TrustedRoot)}, nil
}

func orRegexp(exact, re string) string {
	if exact != "" {
		return exact
	}
	return "matching " + re
}

func keyVerifier(o VerifyOptions) (*Verifier, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(o.Key)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	alg, err := signature.GetDefaultAlgorithmDetails(pub)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	sv, err := signature.LoadVerifier(pub, alg.GetHashType())
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	fp, err := Fingerprint(pub)
	if err != nil {
		return nil, err
	}
	// The bundle names its key by a hint; every hint maps to the one key,
	// which never expires.
	var tm root.TrustedMaterial = root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
		return root.NewExpiringKey(sv, time.Time{}, time.Time{}), nil
	})
	opts := []verify.VerifierOption{verify.WithNoObserverTimestamps()}
	if o.RequireLog || o.TrustedRoot != nil {
		if o.TrustedRoot == nil {
			return nil, errors.New("log entries are checked against a trusted root, and none was given")
		}
		tm = keyWithRoot{TrustedMaterial: o.TrustedRoot, key: tm}
		opts = []verify.VerifierOption{verify.WithObserverTimestamps(1)}
		if o.RequireLog {
			opts = append(opts, verify.WithTransparencyLog(1))
		}
	}
	v, err := verify.NewVerifier(tm, opts...)
	if err != nil {
		return nil, err
	}
	return &Verifier{v: v, policy: verify.WithKey(), desc: "key " + fp, key: fp, logs: logNames(o.TrustedRoot)}, nil
}

// logNames maps each log of a trusted root to its URL.
func logNames(tm root.TrustedMaterial) map[string]string {
	out := map[string]string{}
	if tm == nil {
		return out
	}
	for id, l := range tm.RekorLogs() {
		if l.BaseURL != "" {
			out[id] = l.BaseURL
		}
	}
	return out
}

// describe says what a verified bundle holds, with the key's fingerprint
// and the logs' URLs where the verifier knows them.
func (v *Verifier) describe(raw []byte) (*Signature, error) {
	sig, err := Describe(raw)
	if err != nil {
		return nil, err
	}
	if v.key != "" {
		sig.Identity = Identity{Key: v.key}
	}
	for i, e := range sig.Log {
		if u, ok := v.logs[e.Log]; ok {
			sig.Log[i].Log = u
		}
	}
	return sig, nil
}

// keyWithRoot is a trusted root whose public key is the given one.
type keyWithRoot struct {
	root.TrustedMaterial
	key root.TrustedMaterial
}

func (k keyWithRoot) PublicKeyVerifier(hint string) (root.TimeConstrainedVerifier, error) {
	return k.key.PublicKeyVerifier(hint)
}

func (v *Verifier) String() string { return v.desc }

// VerifyBlob checks that the bundle signs data, as cosign verify-blob does.
func (v *Verifier) VerifyBlob(data, bundleJSON []byte) (*Signature, error) {
	return v.check(bundleJSON, verify.WithArtifact(bytes.NewReader(data)))
}

// VerifyStatement checks that the bundle holds a signed in-toto statement
// whose subject has the given sha256 (an image's digest), as cosign
// verify does, and returns the signature and the statement's predicate type.
func (v *Verifier) VerifyStatement(bundleJSON []byte, sha256 []byte) (*Signature, string, error) {
	b, err := loadBundle(bundleJSON)
	if err != nil {
		return nil, "", err
	}
	if b.GetDsseEnvelope() == nil {
		return nil, "", errors.New("the bundle holds no in-toto statement (no DSSE envelope)")
	}
	res, err := v.v.Verify(b, verify.NewPolicy(verify.WithArtifactDigest("sha256", sha256), v.policy))
	if err != nil {
		return nil, "", err
	}
	sig, err := v.describe(bundleJSON)
	if err != nil {
		return nil, "", err
	}
	return sig, res.Statement.GetPredicateType(), nil
}

func (v *Verifier) check(bundleJSON []byte, artifact verify.ArtifactPolicyOption) (*Signature, error) {
	b, err := loadBundle(bundleJSON)
	if err != nil {
		return nil, err
	}
	if _, err := v.v.Verify(b, verify.NewPolicy(artifact, v.policy)); err != nil {
		return nil, err
	}
	return v.describe(bundleJSON)
}

func loadBundle(raw []byte) (*bundle.Bundle, error) {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("not a Sigstore bundle: %w", err)
	}
	return &b, nil
}

// PublicKeyPEM returns the public key of a private one, PEM, as cosign.pub holds it.
func PublicKeyPEM(priv crypto.Signer) ([]byte, error) {
	return cryptoutils.MarshalPublicKeyToPEM(priv.Public())
}
