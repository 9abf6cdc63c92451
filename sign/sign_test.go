package sign_test

import (
	"context"
	"crypto/elliptic"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/sign/signtest"
)

const (
	identity = "release@capirepo.example"
	password = "correct horse battery staple"
)

// keylessSigner signs as id through the in-memory Fulcio and Rekor.
func keylessSigner(t *testing.T, ss *signtest.Sigstore, id string) *sign.Signer {
	t.Helper()
	return ss.Signer(t, id, signtest.GitHubIssuer)
}

// generateKey makes a cosign-format key pair (ENCRYPTED SIGSTORE PRIVATE KEY).
func generateKey(t *testing.T) (priv, pub []byte) {
	t.Helper()
	priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte(password)))
	if err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

func TestKeyless_SignsAndVerifiesOffline(t *testing.T) {
	ss := signtest.New(t)
	s := keylessSigner(t, ss, identity)
	data := []byte("0123  metadata.yaml\n")
	sig, err := s.SignBlob(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if sig.Identity != (sign.Identity{Subject: identity, Issuer: signtest.GitHubIssuer}) || s.Identity() != sig.Identity {
		t.Errorf("identity = %+v, signer says %+v", sig.Identity, s.Identity())
	}
	if len(sig.Log) != 1 || sig.Log[0].Log != ss.RekorURL || sig.Log[0].Index < 1000 || sig.Log[0].Integrated.IsZero() {
		t.Errorf("log entries = %+v", sig.Log)
	}
	if !strings.Contains(string(sig.Bundle), `"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json"`) {
		t.Errorf("not a v0.3 bundle:\n%s", sig.Bundle)
	}

	verifier := func(o sign.VerifyOptions) *sign.Verifier {
		t.Helper()
		o.TrustedRoot = ss.TrustedRoot(t)
		v, err := sign.NewVerifier(o)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ok := verifier(sign.VerifyOptions{Identity: identity, Issuer: signtest.GitHubIssuer})
	got, err := ok.VerifyBlob(data, sig.Bundle)
	if err != nil {
		t.Fatalf("own signature refused: %v", err)
	}
	if got.Identity != sig.Identity {
		t.Errorf("verified identity %+v", got.Identity)
	}
	if _, err := ok.VerifyBlob([]byte("0123  other.yaml\n"), sig.Bundle); err == nil {
		t.Error("a signature of other bytes was accepted")
	}
	for _, o := range []sign.VerifyOptions{
		{Identity: "mallory@example.com", Issuer: signtest.GitHubIssuer},
		{Identity: identity, Issuer: "https://gitlab.com"},
	} {
		if _, err := verifier(o).VerifyBlob(data, sig.Bundle); err == nil || !strings.Contains(err.Error(), "expected") {
			t.Errorf("%+v: accepted, or not for the identity: %v", o, err)
		}
	}
	// A regexp identity, as cosign's --certificate-identity-regexp.
	if _, err := verifier(sign.VerifyOptions{IdentityRegexp: `@capirepo\.example$`, Issuer: signtest.GitHubIssuer}).VerifyBlob(data, sig.Bundle); err != nil {
		t.Errorf("regexp identity: %v", err)
	}
	// Another instance's trusted root does not trust this Fulcio.
	other := signtest.New(t)
	v, err := sign.NewVerifier(sign.VerifyOptions{Identity: identity, Issuer: signtest.GitHubIssuer, TrustedRoot: other.TrustedRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.VerifyBlob(data, sig.Bundle); err == nil {
		t.Error("a signature certified by another instance was accepted")
	}
	if n := len(ss.TokensSeen()); n != 1 {
		t.Errorf("Fulcio was asked %d times for one signature", n)
	}
}

func TestKey_SignsWithoutLogAndVerifies(t *testing.T) {
	privPEM, pubPEM := generateKey(t)
	priv, err := sign.LoadPrivateKey(privPEM, []byte(password))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sign.NewKeySigner(priv, sign.Services{})
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("abc  core-components.yaml\n")
	sig, err := s.SignBlob(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Identity().Key, "SHA256:") || len(sig.Log) != 0 {
		t.Errorf("identity %v, log %v", s.Identity(), sig.Log)
	}
	v, err := sign.NewVerifier(sign.VerifyOptions{Key: pubPEM})
	if err != nil {
		t.Fatal(err)
	}
	if v.String() != "key "+s.Identity().Key {
		t.Errorf("verifier = %s, signer = %s", v, s.Identity())
	}
	if _, err := v.VerifyBlob(data, sig.Bundle); err != nil {
		t.Fatalf("own signature refused: %v", err)
	}
	if _, err := v.VerifyBlob(append(data, 'x'), sig.Bundle); err == nil {
		t.Error("a signature of other bytes was accepted")
	}
	_, otherPub := generateKey(t)
	ov, err := sign.NewVerifier(sign.VerifyOptions{Key: otherPub})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ov.VerifyBlob(data, sig.Bundle); err == nil {
		t.Error("another key's signature was accepted")
	}
	// A log is required only when asked for.
	ss := signtest.New(t)
	rv, err := sign.NewVerifier(sign.VerifyOptions{Key: pubPEM, RequireLog: true, TrustedRoot: ss.TrustedRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rv.VerifyBlob(data, sig.Bundle); err == nil {
		t.Error("a signature without a log entry passed a verifier that requires one")
	}
	// Signed with the log: accepted by that verifier.
	svc, err := sign.ServicesFor(ss.SigningConfig(t), sign.ServiceOptions{TransparencyLog: true})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := sign.NewKeySigner(priv, svc)
	if err != nil {
		t.Fatal(err)
	}
	lsig, err := ls.SignBlob(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if len(lsig.Log) != 1 {
		t.Fatalf("log entries %v", lsig.Log)
	}
	if _, err := rv.VerifyBlob(data, lsig.Bundle); err != nil {
		t.Errorf("logged signature refused: %v", err)
	}
}

func TestLoadPrivateKey_Errors(t *testing.T) {
	privPEM, _ := generateKey(t)
	for _, tc := range []struct {
		name     string
		pem, pw  []byte
		wantErr  string
		mustHide string
	}{
		{"wrong password", privPEM, []byte("hunter2-not-it"), "wrong password", "hunter2-not-it"},
		{"no password", privPEM, nil, "no password was given", ""},
		{"not a key", []byte("hello"), []byte(password), "not a private key", password},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sign.LoadPrivateKey(tc.pem, tc.pw)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if tc.mustHide != "" && strings.Contains(err.Error(), tc.mustHide) {
				t.Errorf("the error holds the password: %v", err)
			}
		})
	}
}

// TestSign_StopsWithTheContext: a Fulcio that never answers does not hold a
// stopped run (sigstore-go's client does not take the context).
func TestSign_StopsWithTheContext(t *testing.T) {
	ss := signtest.New(t)
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	t.Cleanup(func() { close(hang); srv.Close() })
	ss.FulcioURL = srv.URL
	s := ss.Signer(t, identity, signtest.GitHubIssuer)
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("stopped by interrupt")) })
	start := time.Now()
	_, err := s.SignBlob(ctx, []byte("data"))
	if err == nil || err.Error() != "stopped by interrupt" {
		t.Errorf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stopped after %s", d)
	}
}
