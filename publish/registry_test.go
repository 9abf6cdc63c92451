package publish_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/publish"
)

// TestRegistryOptions_NoCredentialsOnRedirectToAnotherOrigin: a registry
// that asks for basic auth and redirects the manifest to another origin
// (as to blob storage): the other origin gets neither the Authorization
// header nor the credentials' text anywhere in the request.
func TestRegistryOptions_NoCredentialsOnRedirectToAnotherOrigin(t *testing.T) {
	const user, pass = "robot", "s3cret-registry-password"
	var mu sync.Mutex
	var other []http.Header
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		other = append(other, r.Header.Clone())
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer storage.Close()
	sawAuth := false
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		sawAuth = true
		if r.URL.Path == "/v2/" {
			return
		}
		http.Redirect(w, r, storage.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer reg.Close()
	ref, err := name.ParseReference(strings.TrimPrefix(reg.URL, "http://")+"/p/img:v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	kc := staticKeychain{authn.FromConfig(authn.AuthConfig{Username: user, Password: pass})}
	secrets := &redact.Set{}
	opts := publish.RegistryOptions(publish.Registry{Keychain: kc, Secrets: secrets, HTTP: publish.HTTPOptions{Timeout: 5 * time.Second}})
	_, err = remote.Get(ref, append(opts, remote.WithContext(context.Background()))...)
	if err == nil {
		t.Fatal("the storage answered 404; want an error")
	}
	if !sawAuth {
		t.Fatal("the registry never got the credentials: the test proves nothing")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(other) == 0 {
		t.Fatal("the redirect was not followed")
	}
	for _, h := range other {
		for k, v := range h {
			if strings.EqualFold(k, "Authorization") || strings.Contains(strings.Join(v, ","), pass) {
				t.Errorf("the other origin got %s: %v", k, v)
			}
		}
	}
	if got := secrets.String(pass); strings.Contains(got, pass) {
		t.Errorf("the password is not redacted once used: %q", got)
	}
}

// TestRegistryOptions_StalledRegistryIsBounded: a registry that accepts the
// connection and never answers fails the call with a TimeoutError after the
// timeout, not after go-containerregistry's default (no bound).
func TestRegistryOptions_StalledRegistryIsBounded(t *testing.T) {
	release := make(chan struct{})
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer reg.Close()
	defer close(release)
	ref, err := name.ParseReference(strings.TrimPrefix(reg.URL, "http://")+"/p/img:v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	opts := publish.RegistryOptions(publish.Registry{HTTP: publish.HTTPOptions{Timeout: 300 * time.Millisecond}})
	_, err = remote.Get(ref, append(opts, remote.WithContext(ctx), remote.WithRetryPredicate(func(error) bool { return false }))...)
	var te *publish.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v; want a TimeoutError", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

type staticKeychain struct{ a authn.Authenticator }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.a, nil }
