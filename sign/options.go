package sign

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/publish"
)

// InstanceOptions name the Sigstore instance: cosign v3's signing config
// and trusted root files; where one is not given and wanted, the public
// instance's (TUF).
type InstanceOptions struct {
	// SigningConfig and TrustedRoot are the files of --signing-config and
	// --trusted-root; "" means the public instance's, when wanted.
	SigningConfig, TrustedRoot string
	// CacheDir keeps the public instance's TUF metadata; "" keeps nothing.
	CacheDir string
	// HTTPClient reads the public instance's TUF repository.
	HTTPClient *http.Client
	// Log hears that the public instance is read; nil discards it.
	Log io.Writer
}

// LoadInstance reads the files the options name, and fetches the public
// instance's signing config or trusted root where a file is not given and
// wantConfig or wantRoot says it is needed. Errors in the files are usage
// errors (publish.IsUsage).
func LoadInstance(ctx context.Context, o InstanceOptions, wantConfig, wantRoot bool) (*root.SigningConfig, *root.TrustedRoot, error) {
	var sc *root.SigningConfig
	var tr *root.TrustedRoot
	var err error
	if o.SigningConfig != "" {
		if sc, err = root.NewSigningConfigFromPath(o.SigningConfig); err != nil {
			return nil, nil, publish.Usagef("%s %s: %v", option.Flag(ctx, option.SigningConfig), o.SigningConfig, err)
		}
	}
	if o.TrustedRoot != "" {
		if tr, err = root.NewTrustedRootFromPath(o.TrustedRoot); err != nil {
			return nil, nil, publish.Usagef("%s %s: %v", option.Flag(ctx, option.TrustedRoot), o.TrustedRoot, err)
		}
	}
	if (wantConfig && sc == nil) || (wantRoot && tr == nil) {
		if o.Log != nil {
			fmt.Fprintln(o.Log, "reading the public Sigstore instance's signing config and trusted root (TUF: tuf-repo-cdn.sigstore.dev)")
		}
		psc, ptr, err := PublicInstance(ctx, o.CacheDir, o.HTTPClient)
		if err != nil {
			return nil, nil, fmt.Errorf("%w (give %s and %s for another instance, or where the public one cannot be reached)", err, option.Flag(ctx, option.SigningConfig), option.Flag(ctx, option.TrustedRoot))
		}
		if sc == nil {
			sc = psc
		}
		if tr == nil {
			tr = ptr
		}
	}
	return sc, tr, nil
}

// SignerOptions say how to sign: with a key, or keyless with an OIDC
// token. The caller reads the key, its password and the tokens (from
// files and the environment); nothing here does.
type SignerOptions struct {
	InstanceOptions
	// Key is a cosign-format private key (PEM); nil means keyless.
	Key []byte
	// KeyName names the key in errors (--key's value).
	KeyName string
	// Password decrypts Key.
	Password []byte
	// TransparencyLog records each signature made with Key in the signing
	// config's transparency log (keyless signing always does).
	TransparencyLog bool
	// IDToken is an OIDC token for keyless signing (SIGSTORE_ID_TOKEN:
	// GitLab CI's id_tokens, or any CI's); without it, GitHub Actions'
	// token service at GitHubTokenURL with GitHubToken
	// (ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN) gives one.
	IDToken                     string
	GitHubTokenURL, GitHubToken string
	// Secrets learns every token, to mask it.
	Secrets *redact.Set
	// Timeout bounds each wait for a Sigstore service.
	Timeout time.Duration
}

// NewSigner makes the signer the options ask for: with Key (and, with
// TransparencyLog, the signing config's log), else keyless with Tokens
// and the signing config's certificate authority and log. Errors in the
// options are usage errors (publish.IsUsage).
func NewSigner(ctx context.Context, o SignerOptions) (*Signer, error) {
	if o.TransparencyLog && o.Key == nil {
		return nil, publish.Usagef("%s goes with %s: keyless signing always records its signatures in the transparency log", option.Flag(ctx, option.TlogUpload), option.Flag(ctx, option.Key))
	}
	var transport http.RoundTripper
	if o.HTTPClient != nil {
		transport = o.HTTPClient.Transport
	}
	so := ServiceOptions{Keyless: o.Key == nil, TransparencyLog: o.TransparencyLog, Timeout: o.Timeout, Transport: transport}
	if o.Key != nil {
		priv, err := LoadPrivateKey(o.Key, o.Password)
		if err != nil {
			return nil, publish.Usagef("%s %s: %v", option.Flag(ctx, option.Key), o.KeyName, err)
		}
		var svc Services
		if o.TransparencyLog {
			sc, tr, err := LoadInstance(ctx, o.InstanceOptions, true, o.TrustedRoot != "")
			if err != nil {
				return nil, err
			}
			if svc, err = ServicesFor(sc, so); err != nil {
				return nil, publish.Usagef("%v", err)
			}
			if tr != nil {
				svc.TrustedRoot = tr
			}
		}
		return NewKeySigner(priv, svc)
	}
	tokens, err := o.tokens(ctx)
	if err != nil {
		return nil, err
	}
	sc, tr, err := LoadInstance(ctx, o.InstanceOptions, true, o.SigningConfig == "" || o.TrustedRoot != "")
	if err != nil {
		return nil, err
	}
	svc, err := ServicesFor(sc, so)
	if err != nil {
		return nil, publish.Usagef("%v", err)
	}
	if tr != nil {
		svc.TrustedRoot = tr // each bundle is checked right after it is made
	}
	return NewKeylessSigner(tokens, svc)
}

// tokens is where keyless signing gets its OIDC tokens: IDToken, else
// GitHub Actions' token service. Every token joins Secrets.
func (o SignerOptions) tokens(ctx context.Context) (TokenSource, error) {
	var src TokenSource
	switch {
	case o.IDToken != "":
		src = StaticToken(o.IDToken)
	case o.GitHubTokenURL != "" && o.GitHubToken != "":
		src = GitHubActionsToken(o.HTTPClient, o.GitHubTokenURL, o.GitHubToken)
	default:
		return nil, publish.Usagef("keyless signing needs an OIDC token: set SIGSTORE_ID_TOKEN (GitLab CI: id_tokens with aud: sigstore), or run in GitHub Actions with permissions: id-token: write; or sign with %s", option.Flag(ctx, option.Key))
	}
	return func(ctx context.Context) (string, error) {
		t, err := src(ctx)
		o.Secrets.Add(t)
		return t, err
	}, nil
}
