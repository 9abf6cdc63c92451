// Package signtest is an in-memory Sigstore for tests: a Fulcio that
// certifies any key for the identity its OIDC token names, a Rekor (v1 API)
// that logs every entry with a signed entry timestamp and an inclusion
// proof, both served over HTTP on 127.0.0.1, with the signing config that
// points at them and the trusted root that trusts them. It stands on
// sigstore-go's pkg/testing/ca (the virtual Sigstore: the Rekor key and
// checkpoints), and is imported by tests only: that package would add
// modules and bytes to the capirepo binary.
package signtest

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-openapi/runtime"
	"github.com/go-openapi/strfmt"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	prototrustroot "github.com/sigstore/protobuf-specs/gen/pb-go/trustroot/v1"
	"github.com/sigstore/rekor/pkg/generated/models"
	"github.com/sigstore/rekor/pkg/types"
	_ "github.com/sigstore/rekor/pkg/types/dsse/v0.0.1"         // the entry kinds the log takes
	_ "github.com/sigstore/rekor/pkg/types/hashedrekord/v0.0.1" //
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/capirepo/capirepo/sign"
)

// GitHubIssuer is the OIDC issuer of GitHub Actions' tokens.
const GitHubIssuer = "https://token.actions.githubusercontent.com"

// Sigstore is one in-memory Sigstore instance.
type Sigstore struct {
	vs         *ca.VirtualSigstore
	root       *x509.Certificate
	inter      *x509.Certificate
	interKey   *ecdsa.PrivateKey
	FulcioURL  string
	RekorURL   string
	mu         sync.Mutex
	nextIndex  int64
	entries    int
	tokensSeen []string
}

// New starts the instance's servers; they stop when the test ends.
func New(t testing.TB) *Sigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	rootCert, rootKey, err := ca.GenerateRootCa()
	if err != nil {
		t.Fatal(err)
	}
	inter, interKey, err := ca.GenerateFulcioIntermediate(rootCert, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	s := &Sigstore{vs: vs, root: rootCert, inter: inter, interKey: interKey, nextIndex: 1000}
	fulcio := httptest.NewServer(http.HandlerFunc(s.fulcio))
	rekor := httptest.NewServer(http.HandlerFunc(s.rekor))
	t.Cleanup(fulcio.Close)
	t.Cleanup(rekor.Close)
	s.FulcioURL, s.RekorURL = fulcio.URL, rekor.URL
	return s
}

// Token is an (unsigned) OIDC token for the identity and issuer, as a CI
// hands one out: Fulcio here takes its claims without checking it.
func Token(identity, issuer string) string {
	enc := base64.RawURLEncoding.EncodeToString
	claims, _ := json.Marshal(map[string]any{"iss": issuer, "sub": identity, "email": identity, "email_verified": true,
		"aud": "sigstore", "exp": time.Now().Add(time.Hour).Unix()})
	return enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc(claims) + "." + enc([]byte("not-checked-signature"))
}

// Entries says how many entries the log took.
func (s *Sigstore) Entries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries
}

// TokensSeen are the OIDC tokens Fulcio was sent.
func (s *Sigstore) TokensSeen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tokensSeen...)
}

// fulcio answers POST /api/v2/signingCert: a certificate for the request's
// key, valid from a minute ago for ten minutes, for the identity (email
// claim) and issuer (iss claim) of the bearer token.
func (s *Sigstore) fulcio(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/v2/signingCert" {
		http.NotFound(w, r)
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		http.Error(w, "no bearer token", http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	s.tokensSeen = append(s.tokensSeen, token)
	s.mu.Unlock()
	var claims struct{ Iss, Email string }
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		http.Error(w, "malformed token", http.StatusUnauthorized)
		return
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(payload, &claims) != nil || claims.Email == "" || claims.Iss == "" {
		http.Error(w, "malformed token", http.StatusUnauthorized)
		return
	}
	var req struct {
		PublicKeyRequest struct {
			PublicKey struct{ Content string } `json:"publicKey"`
		} `json:"publicKeyRequest"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	block, _ := pem.Decode([]byte(req.PublicKeyRequest.PublicKey.Content))
	if block == nil {
		http.Error(w, "no public key", http.StatusBadRequest)
		return
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	leaf, err := ca.GenerateLeafCert(claims.Email, claims.Iss, time.Now().Add(-time.Minute), publicOnly{pub}, s.inter, s.interKey)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var chain []string
	for _, c := range []*x509.Certificate{leaf, s.inter, s.root} {
		chain = append(chain, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})))
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"signedCertificateEmbeddedSct": map[string]any{"chain": map[string]any{"certificates": chain}}})
}

// publicOnly hands ca.GenerateLeafCert the requested public key: it needs
// the key only to put it in the certificate.
type publicOnly struct{ pub crypto.PublicKey }

func (p publicOnly) Public() crypto.PublicKey { return p.pub }
func (publicOnly) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return nil, fmt.Errorf("not a private key")
}

// rekor answers POST /api/v1/log/entries (hashedrekord and dsse entries)
// with the entry: canonical body, integrated time, index, log ID, signed
// entry timestamp and an inclusion proof.
func (s *Sigstore) rekor(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/v1/log/entries" {
		http.NotFound(w, r)
		return
	}
	pe, err := models.UnmarshalProposedEntry(r.Body, runtime.JSONConsumer())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx := context.Background()
	impl, err := types.UnmarshalEntry(pe)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	body, err := types.CanonicalizeEntry(ctx, impl)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	logIDHex, err := s.vs.RekorLogID()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	index := s.nextIndex
	s.nextIndex++
	s.entries++
	s.mu.Unlock()
	now := time.Now().Unix()
	b64 := base64.StdEncoding.EncodeToString(body)
	set, err := s.vs.RekorSignPayload(tlog.RekorPayload{Body: b64, IntegratedTime: now, LogIndex: index, LogID: logIDHex})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	proof, err := s.vs.GetInclusionProof(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	uuid := hex.EncodeToString(body[:min(len(body), 16)]) + fmt.Sprint(index)
	entry := models.LogEntry{uuid: models.LogEntryAnon{
		Body: b64, IntegratedTime: &now, LogID: &logIDHex, LogIndex: &index,
		Verification: &models.LogEntryAnonVerification{InclusionProof: proof, SignedEntryTimestamp: strfmt.Base64(set)},
	}}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("ETag", uuid)
	w.Header().Set("Location", "/api/v1/log/entries/"+uuid)
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(entry)
}

// TrustedRoot is what a verifier trusts for this instance: its Fulcio
// chain, its Rekor key and its timestamp authority. It names no
// certificate-transparency log: this Fulcio embeds no SCT.
func (s *Sigstore) TrustedRoot(t testing.TB) *root.TrustedRoot {
	t.Helper()
	tr, err := root.NewTrustedRootFromJSON(s.TrustedRootJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TrustedRootJSON is TrustedRoot as cosign's --trusted-root file holds it.
func (s *Sigstore) TrustedRootJSON(t testing.TB) []byte {
	t.Helper()
	// The virtual log's ID is the hex text of the key's hash; a trusted
	// root holds the raw bytes.
	logs := map[string]*root.TransparencyLog{}
	for id, l := range s.vs.RekorLogs() {
		raw, err := hex.DecodeString(id)
		if err != nil {
			t.Fatal(err)
		}
		c := *l
		c.ID = raw
		c.ValidityPeriodStart = time.Now().Add(-5 * time.Hour)
		c.ValidityPeriodEnd = time.Time{}
		logs[id] = &c
	}
	fulcio := &root.FulcioCertificateAuthority{Root: s.root, Intermediates: []*x509.Certificate{s.inter},
		ValidityPeriodStart: time.Now().Add(-5 * time.Hour), URI: s.FulcioURL}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, []root.CertificateAuthority{fulcio}, nil, s.vs.TimestampingAuthorities(), logs)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// SigningConfigJSON is the signing config (v0.2) that sends certificate
// requests to this Fulcio and entries to this Rekor, as cosign's
// --signing-config file holds it.
func (s *Sigstore) SigningConfigJSON(t testing.TB) []byte {
	t.Helper()
	start := timestamppb.New(time.Now().Add(-time.Hour))
	svc := func(url string) *prototrustroot.Service {
		return &prototrustroot.Service{Url: url, MajorApiVersion: 1, ValidFor: &protocommon.TimeRange{Start: start}, Operator: "capirepo-test"}
	}
	sc := &prototrustroot.SigningConfig{
		MediaType:       root.SigningConfigMediaType02,
		CaUrls:          []*prototrustroot.Service{svc(s.FulcioURL)},
		RekorTlogUrls:   []*prototrustroot.Service{svc(s.RekorURL)},
		RekorTlogConfig: &prototrustroot.ServiceConfiguration{Selector: prototrustroot.ServiceSelector_ANY},
		TsaConfig:       &prototrustroot.ServiceConfiguration{Selector: prototrustroot.ServiceSelector_ANY},
		OidcUrls:        []*prototrustroot.Service{svc("https://oauth2.example.invalid")},
	}
	raw, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// SigningConfig is SigningConfigJSON, parsed.
func (s *Sigstore) SigningConfig(t testing.TB) *root.SigningConfig {
	t.Helper()
	sc, err := root.NewSigningConfigFromJSON(s.SigningConfigJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// WriteFiles writes signing_config.json and trusted_root.json into dir
// and returns their paths.
func (s *Sigstore) WriteFiles(t testing.TB, dir string) (signingConfig, trustedRoot string) {
	t.Helper()
	signingConfig, trustedRoot = filepath.Join(dir, "signing_config.json"), filepath.Join(dir, "trusted_root.json")
	if err := os.WriteFile(signingConfig, s.SigningConfigJSON(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trustedRoot, s.TrustedRootJSON(t), 0o644); err != nil {
		t.Fatal(err)
	}
	return signingConfig, trustedRoot
}

// Signer signs keylessly as identity from issuer through this instance's
// Fulcio and Rekor, picked from its signing config as a real run picks the
// public instance's.
func (s *Sigstore) Signer(t testing.TB, identity, issuer string) *sign.Signer {
	t.Helper()
	svc, err := sign.ServicesFor(s.SigningConfig(t), sign.ServiceOptions{Keyless: true})
	if err != nil {
		t.Fatal(err)
	}
	svc.TrustedRoot = s.TrustedRoot(t)
	signer, err := sign.NewKeylessSigner(func(context.Context) (string, error) { return Token(identity, issuer), nil }, svc)
	if err != nil {
		t.Fatal(err)
	}
	return signer
}
