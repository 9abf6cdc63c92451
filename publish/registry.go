package publish

import (
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capirepo/capirepo/internal/redact"
)

// Registry says how capirepo reaches OCI registries: whose credentials, kept
// secret how, over which transport.
type Registry struct {
	// Keychain gives the credentials; nil means anonymous.
	Keychain authn.Keychain
	// Secrets receives every credential the keychain hands out before it
	// is used, so it is masked in anything printed (nil: not masked here;
	// a keychain the caller wrapped already stays wrapped).
	Secrets *redact.Set
	// Transport is the transport to send through; nil means one with the
	// bounded waits of NewHTTPClient(HTTP). A transport of NewHTTPClient's
	// is used as it is; any other gets those waits put around it.
	Transport http.RoundTripper
	// HTTP bounds the waits of the transport made when Transport is nil.
	HTTP HTTPOptions
}

// RegistryOptions are the go-containerregistry options of every registry
// call capirepo makes (push, pull, image check, signing, referrers, mirror):
// one keychain with redaction, waits bounded as HTTPOptions say, and no
// credential on a redirect to another origin. Callers add per-call options
// (context, retries) after these.
func RegistryOptions(r Registry) []remote.Option {
	kc := r.Keychain
	if kc == nil {
		kc = authn.NewMultiKeychain() // anonymous
	}
	return []remote.Option{
		remote.WithAuthFromKeychain(redact.Keychain(kc, r.Secrets)),
		remote.WithTransport(RegistryTransport(r.Transport, r.HTTP)),
		remote.WithUserAgent("capirepo"),
	}
}

// RegistryTransport is the transport of RegistryOptions: base (nil: the
// transport of NewHTTPClient(o), or go-containerregistry's
// remote.DefaultTransport where a program replaced it) with bounded waits, below a guard that
// drops credentials from a request a redirect sent to another origin.
// A registry's token service may live on another host (Docker Hub's
// auth.docker.io), so credentials are not tied to one origin; what a
// redirect names, such as blob storage, never gets them.
func RegistryTransport(base http.RoundTripper, o HTTPOptions) http.RoundTripper {
	if g, ok := base.(*redirectGuard); ok {
		return g
	}
	if base == nil {
		if _, ok := remote.DefaultTransport.(*http.Transport); !ok {
			// go-containerregistry's default was replaced (an embedder's
			// or a test's router): keep it, with the waits around it.
			base = remote.DefaultTransport
		}
	}
	switch base.(type) {
	case nil:
		base = NewHTTPClient(o).Transport
	case *watchdog:
	default:
		base = Bounded(base, &http.Client{Transport: &watchdog{o: o}})
	}
	return &redirectGuard{next: base}
}

// redirectGuard strips credentials from a request http.Client made to follow
// a redirect to another origin. Go's client drops the Authorization header
// it copies on such a redirect, but a registry client's transport adds its
// own below the client, and URL userinfo or other headers may ride along.
type redirectGuard struct{ next http.RoundTripper }

func (g *redirectGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	// The first request of the chain is the one the caller meant to send
	// its credentials with.
	first := req
	for first.Response != nil && first.Response.Request != nil {
		first = first.Response.Request
	}
	if first == req || origin(first.URL) == origin(req.URL) {
		return g.next.RoundTrip(req)
	}
	return (&credentialGuard{next: g.next, trusted: map[string]bool{}}).RoundTrip(req)
}
