package redact

import (
	"context"

	"github.com/google/go-containerregistry/pkg/authn"
)

// Keychain wraps a registry keychain so every credential it hands out
// (password, token, identity token, basic auth) joins set before it is used,
// and so is masked in anything printed afterwards.
func Keychain(kc authn.Keychain, set *Set) authn.Keychain {
	if kc == nil || set == nil {
		return kc
	}
	return keychain{kc: kc, set: set}
}

type keychain struct {
	kc  authn.Keychain
	set *Set
}

func (k keychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	return k.ResolveContext(context.Background(), r)
}

func (k keychain) ResolveContext(ctx context.Context, r authn.Resource) (authn.Authenticator, error) {
	a, err := authn.Resolve(ctx, k.kc, r)
	if err != nil || a == nil || a == authn.Anonymous {
		return a, err
	}
	return authenticator{a: a, set: k.set}, nil
}

type authenticator struct {
	a   authn.Authenticator
	set *Set
}

func (a authenticator) Authorization() (*authn.AuthConfig, error) {
	return a.AuthorizationContext(context.Background())
}

func (a authenticator) AuthorizationContext(ctx context.Context) (*authn.AuthConfig, error) {
	c, err := authn.Authorization(ctx, a.a)
	if c != nil {
		a.set.Add(c.Password, c.Auth, c.IdentityToken, c.RegistryToken)
	}
	return c, err
}
