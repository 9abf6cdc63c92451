package publish_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/sign/signtest"
)

// TestSameSignature: a bundle made again for the same bytes by the same
// signer is the same signature; another content or another signer is not.
func TestSameSignature(t *testing.T) {
	ctx := context.Background()
	ss := signtest.New(t)
	keyless := func(id string) *sign.Signer { return ss.Signer(t, id, signtest.GitHubIssuer) }
	withKey := func() *sign.Signer {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		s, err := sign.NewKeySigner(k, sign.Services{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	bundle := func(s *sign.Signer, data string) []byte {
		sig, err := s.SignBlob(ctx, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		return sig.Bundle
	}
	alice, bob, key, otherKey := keyless("alice@example.com"), keyless("bob@example.com"), withKey(), withKey()
	a1, a2 := bundle(alice, "sums"), bundle(keyless("alice@example.com"), "sums")
	k1, k2 := bundle(key, "sums"), bundle(key, "sums")
	for _, tc := range []struct {
		name string
		a, b []byte
		want bool
	}{
		{"keyless, signed again", a1, a2, true},
		{"key, signed again", k1, k2, true},
		{"other content", a1, bundle(alice, "other sums"), false},
		{"other identity", a1, bundle(bob, "sums"), false},
		{"other key", k1, bundle(otherKey, "sums"), false},
		{"key against certificate", k1, a1, false},
		{"not a bundle", a1, []byte("sums"), false},
	} {
		if got := publish.SameSignature(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: SameSignature = %v", tc.name, got)
		}
	}
	if string(a1) == string(a2) || string(k1) == string(k2) {
		t.Fatal("signing again gave the same bytes: the test proves nothing")
	}

	// Compare keeps a published bundle that is the same signature.
	want := []release.File{{Name: "checksums.txt.sigstore.json", Data: a2}}
	have := map[string]publish.Remote{"checksums.txt.sigstore.json": {Size: int64(len(a1)), SHA256: (release.File{Data: a1}).SHA256()}}
	fetch := func(context.Context, string) ([]byte, error) { return a1, nil }
	d, err := publish.Compare(ctx, want, have, fetch)
	if err != nil || len(d.Same) != 1 {
		t.Errorf("Compare = %+v, %v; want the bundle kept", d, err)
	}
	want[0].Data = bundle(bob, "sums")
	if d, _ := publish.Compare(ctx, want, have, fetch); len(d.Changed) != 1 {
		t.Errorf("another signer's bundle: %+v", d)
	}
}
