package redact

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

type staticKeychain struct{ cfg authn.AuthConfig }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	return authn.FromConfig(k.cfg), nil
}

func TestKeychainAddsCredentialsWhenUsed(t *testing.T) {
	set := &Set{}
	kc := Keychain(staticKeychain{authn.AuthConfig{Username: "robot", Password: "registry-pa55", IdentityToken: "identity-t0ken"}}, set)
	repo, err := name.NewRepository("registry.example.com/team/manager")
	if err != nil {
		t.Fatal(err)
	}
	a, err := kc.Resolve(repo)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.String("registry-pa55"); got != "registry-pa55" {
		t.Fatalf("masked before the credential was used: %q", got)
	}
	if _, err := a.Authorization(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"registry-pa55", "identity-t0ken"} {
		if got := set.String("denied: " + s); got != "denied: "+Mask {
			t.Errorf("%s: %q", s, got)
		}
	}
}
