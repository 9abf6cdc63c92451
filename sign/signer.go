package sign

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/capirepo/capirepo/release"
)

// Media and payload types of what is signed.
const (
	// BundleMediaType is a Sigstore bundle v0.3, as cosign v3 writes it.
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// BundleSuffix ends the file that holds the bundle of a file.
	BundleSuffix = release.BundleSuffix
	// InTotoPayloadType is the DSSE payload type of an in-toto statement.
	InTotoPayloadType = "application/vnd.in-toto+json"
)

// BundleName is the name of the file that holds the bundle of name.
func BundleName(name string) string { return name + BundleSuffix }

// Identity is who made a signature: a certificate's subject and the OIDC
// issuer that vouched for it (keyless), or a key's fingerprint.
type Identity struct {
	Subject string `json:"subject,omitempty"`
	Issuer  string `json:"issuer,omitempty"`
	Key     string `json:"key,omitempty"`
}

func (i Identity) String() string {
	if i.Key != "" {
		return "key " + i.Key
	}
	return fmt.Sprintf("%s (issuer %s)", i.Subject, i.Issuer)
}

// LogEntry is a signature's entry in a transparency log.
type LogEntry struct {
	// Index is the entry's index in the log.
	Index int64 `json:"index"`
	// Log is the log's URL when the signer knows it, else its ID (hex).
	Log string `json:"log"`
	// Integrated is when the log took the entry; zero for a Rekor v2 log,
	// whose time comes from a timestamp authority.
	Integrated time.Time `json:"integrated,omitzero"`
}

func (e LogEntry) String() string {
	s := fmt.Sprintf("entry %d in %s", e.Index, e.Log)
	if !e.Integrated.IsZero() {
		s += " at " + e.Integrated.UTC().Format(time.RFC3339)
	}
	return s
}

// Signature is one bundle a Signer made, and what it says.
type Signature struct {
	// Bundle is the bundle, JSON, as written to NAME.sigstore.json.
	Bundle   []byte     `json:"-"`
	Identity Identity   `json:"identity"`
	Log      []LogEntry `json:"transparencyLog,omitempty"`
	// Timestamps counts the RFC 3161 timestamps the bundle holds.
	Timestamps int `json:"timestamps,omitempty"`
}

// String says who made the signature and where it was logged, as it is
// printed: "as IDENTITY; transparency log entry N in URL at TIME".
func (s *Signature) String() string {
	if len(s.Log) == 0 {
		return "as " + s.Identity.String() + "; no transparency log"
	}
	parts := make([]string, len(s.Log))
	for i, e := range s.Log {
		parts[i] = e.String()
	}
	return "as " + s.Identity.String() + "; transparency log " + strings.Join(parts, ", ")
}

// TokenSource returns an OIDC identity token for Fulcio. It is called for
// each certificate, so a source that fetches one (GitHub Actions') gives a
// fresh token when a long run needs a second certificate.
type TokenSource func(ctx context.Context) (string, error)

// Services are the Sigstore services a Signer calls. ServicesFor selects
// them from a signing config; tests give in-memory ones.
type Services struct {
	// Certificates issues a certificate for the signer's key from an OIDC
	// token (Fulcio); nil signs with a key.
	Certificates sign.CertificateProvider
	// Logs are the transparency logs (Rekor) each signature goes to, and
	// LogURLs their URLs, in the same order, to print with the entries.
	Logs    []sign.Transparency
	LogURLs []string
	// Timestamps are RFC 3161 timestamp authorities each signature is
	// stamped by (required with a Rekor v2 log).
	Timestamps []*sign.TimestampAuthority
	// TrustedRoot, when set, checks every bundle right after it is made.
	TrustedRoot root.TrustedMaterial
}

// ServiceOptions say which services ServicesFor picks and how it reaches them.
type ServiceOptions struct {
	// Keyless picks a certificate authority (Fulcio).
	Keyless bool
	// TransparencyLog picks the transparency logs; keyless signing always does.
	TransparencyLog bool
	// Timeout bounds every request; 0 means 30 seconds.
	Timeout time.Duration
	// Transport makes the Fulcio and timestamp requests; nil means the default.
	Transport http.RoundTripper
	// Now is the time the services must be valid at; zero means now.
	Now time.Time
}

// ServicesFor picks the services of a signing config (cosign v3's
// --signing-config, or the public instance's) the way cosign does: the
// newest valid service of each kind at an API version sigstore-go speaks,
// and the logs and timestamp authorities its selectors ask for.
func ServicesFor(sc *root.SigningConfig, o ServiceOptions) (Services, error) {
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	var svc Services
	if o.Keyless {
		s, err := root.SelectService(sc.FulcioCertificateAuthorityURLs(), sign.FulcioAPIVersions, now)
		if err != nil {
			return Services{}, fmt.Errorf("signing config: no certificate authority (Fulcio) to use: %w", err)
		}
		svc.Certificates = sign.NewFulcio(&sign.FulcioOptions{BaseURL: s.URL, Timeout: timeout, Retries: 2, Transport: o.Transport})
	}
	if o.Keyless || o.TransparencyLog {
		logs, err := root.SelectServices(sc.RekorLogURLs(), sc.RekorLogURLsConfig(), sign.RekorAPIVersions, now)
		if err != nil {
			return Services{}, fmt.Errorf("signing config: no transparency log (Rekor) to use: %w", err)
		}
		for _, s := range logs {
			svc.Logs = append(svc.Logs, sign.NewRekor(&sign.RekorOptions{BaseURL: s.URL, Timeout: timeout, Retries: 2, Version: s.MajorAPIVersion}))
			svc.LogURLs = append(svc.LogURLs, s.URL)
		}
		// A timestamp authority vouches for the time of a signature where
		// the log does not (Rekor v2), and is asked for whenever the config
		// names one, as cosign does.
		if len(sc.TimestampAuthorityURLs()) > 0 {
			tsas, err := root.SelectServices(sc.TimestampAuthorityURLs(), sc.TimestampAuthorityURLsConfig(), sign.TimestampAuthorityAPIVersions, now)
			if err != nil {
				return Services{}, fmt.Errorf("signing config: no timestamp authority to use: %w", err)
			}
			for _, s := range tsas {
				svc.Timestamps = append(svc.Timestamps, sign.NewTimestampAuthority(&sign.TimestampAuthorityOptions{URL: s.URL, Timeout: timeout, Retries: 2, Transport: o.Transport}))
			}
		}
	}
	return svc, nil
}

// Signer makes Sigstore bundles with one key: a long-lived one, or an
// ephemeral one certified by Fulcio for an OIDC identity. It is safe for
// concurrent use.
type Signer struct {
	kp       sign.Keypair
	svc      Services
	certs    *certCache
	identity Identity // for a key; a certificate's is read from it
}

// NewKeySigner signs with a private key (see LoadPrivateKey). The bundles
// carry the key's hint, not the key; a verifier needs the public key.
func NewKeySigner(priv crypto.Signer, svc Services) (*Signer, error) {
	if svc.Certificates != nil {
		return nil, errors.New("a key signer takes no certificate authority")
	}
	kp, err := newKeypair(priv)
	if err != nil {
		return nil, err
	}
	fp, err := Fingerprint(priv.Public())
	if err != nil {
		return nil, err
	}
	return &Signer{kp: kp, svc: svc, identity: Identity{Key: fp}}, nil
}

// NewKeylessSigner signs with an ephemeral key, certified by
// svc.Certificates for the identity of the tokens the source gives.
func NewKeylessSigner(tokens TokenSource, svc Services) (*Signer, error) {
	if svc.Certificates == nil {
		return nil, errors.New("keyless signing needs a certificate authority (Fulcio)")
	}
	if len(svc.Logs) == 0 {
		return nil, errors.New("keyless signing needs a transparency log (Rekor): a short-lived certificate is only trusted for the time a log or timestamp authority vouches for")
	}
	if tokens == nil {
		return nil, errors.New("keyless signing needs an OIDC identity token")
	}
	kp, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		return nil, err
	}
	return &Signer{kp: kp, svc: svc, certs: &certCache{ca: svc.Certificates, tokens: tokens}}, nil
}

// Identity is who the signer signs as: the key's fingerprint, or the
// certificate's identity once it has one (after the first signature).
func (s *Signer) Identity() Identity {
	if s.certs != nil {
		return s.certs.identity()
	}
	return s.identity
}

// SignBlob signs data into a bundle with a message signature, as
// cosign sign-blob does.
func (s *Signer) SignBlob(ctx context.Context, data []byte) (*Signature, error) {
	return s.bundle(ctx, &sign.PlainData{Data: data})
}

// SignStatement signs an in-toto statement into a bundle with a DSSE
// envelope, as cosign sign and cosign attest do.
func (s *Signer) SignStatement(ctx context.Context, statement []byte) (*Signature, error) {
	return s.bundle(ctx, &sign.DSSEData{Data: statement, PayloadType: InTotoPayloadType})
}

func (s *Signer) bundle(ctx context.Context, content sign.Content) (*Signature, error) {
	opts := sign.BundleOptions{
		TimestampAuthorities: s.svc.Timestamps,
		TransparencyLogs:     s.svc.Logs,
		Context:              ctx,
		TrustedRoot:          s.svc.TrustedRoot,
	}
	if s.certs != nil {
		opts.CertificateProvider = s.certs
	}
	// sigstore-go's Fulcio and timestamp clients do not stop with the
	// context (their waits are bounded by the services' timeout): a stopped
	// run returns at once and leaves the call to end on its own, its result
	// unused.
	type result struct {
		pb  *protobundle.Bundle
		err error
	}
	done := make(chan result, 1)
	go func() {
		pb, err := sign.Bundle(content, s.kp, opts)
		done <- result{pb, err}
	}()
	var pb *protobundle.Bundle
	select {
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case r := <-done:
		if r.err != nil {
			return nil, redactToken(r.err)
		}
		pb = r.pb
	}
	raw, err := MarshalBundle(pb)
	if err != nil {
		return nil, err
	}
	sig, err := Describe(raw)
	if err != nil {
		return nil, err
	}
	if s.certs == nil {
		sig.Identity = s.identity // the fingerprint, where the bundle has a hint
	}
	for i := range sig.Log {
		if i < len(s.svc.LogURLs) {
			sig.Log[i].Log = s.svc.LogURLs[i]
		}
	}
	return sig, nil
}

// MarshalBundle writes a bundle as JSON, indented the same way every
// time, with a final newline.
func MarshalBundle(pb *protobundle.Bundle) ([]byte, error) {
	raw, err := protojson.Marshal(pb)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// Describe reads who made a bundle and where it was logged, without
// checking anything (Verify does).
func Describe(raw []byte) (*Signature, error) {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("not a Sigstore bundle: %w", err)
	}
	sig := &Signature{Bundle: raw}
	vm := b.GetVerificationMaterial()
	switch {
	case vm.GetPublicKey() != nil:
		sig.Identity.Key = "hint " + vm.GetPublicKey().GetHint()
	default:
		var der []byte
		if c := vm.GetCertificate(); c != nil {
			der = c.GetRawBytes()
		} else if ch := vm.GetX509CertificateChain(); ch != nil && len(ch.GetCertificates()) > 0 {
			der = ch.GetCertificates()[0].GetRawBytes()
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("bundle certificate: %w", err)
		}
		sum, err := certificate.SummarizeCertificate(cert)
		if err != nil {
			return nil, fmt.Errorf("bundle certificate: %w", err)
		}
		sig.Identity = Identity{Subject: sum.SubjectAlternativeName, Issuer: sum.Issuer}
	}
	for _, e := range vm.GetTlogEntries() {
		le := LogEntry{Index: e.GetLogIndex(), Log: hex.EncodeToString(e.GetLogId().GetKeyId())}
		if t := e.GetIntegratedTime(); t > 0 {
			le.Integrated = time.Unix(t, 0).UTC()
		}
		sig.Log = append(sig.Log, le)
	}
	sig.Timestamps = len(vm.GetTimestampVerificationData().GetRfc3161Timestamps())
	return sig, nil
}

// certCache asks the certificate authority once for the key, and again
// when the certificate is about to expire (a Fulcio certificate lives ten
// minutes, and a long release signs its OCI artifacts after uploading).
type certCache struct {
	ca     sign.CertificateProvider
	tokens TokenSource

	mu   sync.Mutex
	der  []byte
	cert *x509.Certificate
}

func (c *certCache) GetCertificate(ctx context.Context, kp sign.Keypair, _ *sign.CertificateProviderOptions) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert != nil && time.Until(c.cert.NotAfter) > 2*time.Minute {
		return c.der, nil
	}
	token, err := c.tokens(ctx)
	if err != nil {
		return nil, fmt.Errorf("OIDC identity token: %w", err)
	}
	der, err := c.ca.GetCertificate(ctx, kp, &sign.CertificateProviderOptions{IDToken: token})
	if err != nil {
		return nil, fmt.Errorf("certificate from Fulcio: %w", redactToken(err))
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("certificate from Fulcio: %w", err)
	}
	c.der, c.cert = der, cert
	return der, nil
}

func (c *certCache) identity() Identity {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert == nil {
		return Identity{}
	}
	sum, err := certificate.SummarizeCertificate(c.cert)
	if err != nil {
		return Identity{}
	}
	return Identity{Subject: sum.SubjectAlternativeName, Issuer: sum.Issuer}
}

// redactToken keeps a JWT an error may quote (a service echoing its
// request) out of the message; cmd's redaction masks it too, but an error
// can be logged before it reaches cmd.
func redactToken(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	out := make([]string, 0, 8)
	for _, w := range strings.Fields(msg) {
		if looksLikeJWT(w) {
			w = "[REDACTED]"
		}
		out = append(out, w)
	}
	if red := strings.Join(out, " "); red != strings.Join(strings.Fields(msg), " ") {
		return errors.New(red)
	}
	return err
}

func looksLikeJWT(s string) bool {
	s = strings.Trim(s, `"',;:()[]{}`)
	parts := strings.Split(s, ".")
	return len(parts) == 3 && strings.HasPrefix(s, "eyJ") && len(s) > 40
}
