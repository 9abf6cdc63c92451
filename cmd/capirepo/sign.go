package main

import (
	"context"
	"crypto"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
)

// The environment signing reads, as cosign reads it.
const (
	envPassword    = "COSIGN_PASSWORD"   // the private key's password
	envIDToken     = "SIGSTORE_ID_TOKEN" // an OIDC token (GitLab CI's id_tokens)
	envGitHubOIDC  = "ACTIONS_ID_TOKEN_REQUEST_URL"
	envGitHubToken = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
	keyEnvPrefix   = "env://"
)

// instanceFlags name the Sigstore instance: cosign v3's --signing-config
// and --trusted-root; without them, the public instance's (TUF).
type instanceFlags struct {
	signingConfig string
	trustedRoot   string
}

func (f *instanceFlags) bind(cmd *cobra.Command, signing bool) {
	if signing {
		cmd.Flags().StringVar(&f.signingConfig, "signing-config", "", "Sigstore signing config (cosign v3's): the Fulcio, Rekor and timestamp authorities to use (default: the public Sigstore instance's, from its TUF repository)")
	}
	cmd.Flags().StringVar(&f.trustedRoot, "trusted-root", "", "Sigstore trusted root (cosign v3's): what certificates, log entries and timestamps are checked against (default: the public Sigstore instance's, from its TUF repository)")
}

// load reads what the flags name, and fetches the public instance's
// signing config or trusted root where a flag is not given and want says
// it is needed.
func (f *instanceFlags) load(ctx context.Context, s streams, timeout time.Duration, wantConfig, wantRoot bool) (*root.SigningConfig, *root.TrustedRoot, error) {
	var sc *root.SigningConfig
	var tr *root.TrustedRoot
	var err error
	if f.signingConfig != "" {
		if sc, err = root.NewSigningConfigFromPath(f.signingConfig); err != nil {
			return nil, nil, usagef("--signing-config %s: %v", f.signingConfig, err)
		}
	}
	if f.trustedRoot != "" {
		if tr, err = root.NewTrustedRootFromPath(f.trustedRoot); err != nil {
			return nil, nil, usagef("--trusted-root %s: %v", f.trustedRoot, err)
		}
	}
	if (wantConfig && sc == nil) || (wantRoot && tr == nil) {
		fmt.Fprintln(s.errOut, "reading the public Sigstore instance's signing config and trusted root (TUF: tuf-repo-cdn.sigstore.dev)")
		psc, ptr, err := sign.PublicInstance(ctx, sigstoreCache(s.getenv), httpClient(s, timeout))
		if err != nil {
			return nil, nil, fmt.Errorf("%w (give --signing-config and --trusted-root for another instance, or where the public one cannot be reached)", err)
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

// sigstoreCache is where the public instance's TUF metadata is kept:
// $XDG_CACHE_HOME/capirepo/sigstore, else ~/.cache/capirepo/sigstore; ""
// (nothing kept) without either.
func sigstoreCache(getenv env) string {
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "capirepo", "sigstore")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "capirepo", "sigstore")
	}
	return ""
}

// signFlags are the flags of every command that signs.
type signFlags struct {
	instanceFlags
	key        string
	tlogUpload bool
}

func (f *signFlags) bind(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.key, "key", "", "sign with this cosign-format private key: a FILE, or env://VAR for a variable that holds it; its password in "+envPassword+
		" (default: keyless, with the CI's OIDC token: "+envIDToken+", or GitHub Actions' with id-token: write)")
	fl.BoolVar(&f.tlogUpload, "tlog-upload", false, "with --key, also record each signature in the transparency log (Rekor) of the signing config (keyless signing always does)")
	f.instanceFlags.bind(cmd, true)
}

// unused refuses signing flags given without the switch that signs.
func (f *signFlags) unused(sw string) error {
	if f.key != "" || f.tlogUpload || f.signingConfig != "" || f.trustedRoot != "" {
		return usagef("--key, --tlog-upload, --signing-config and --trusted-root go with --%s", sw)
	}
	return nil
}

// signer makes the signer the flags and the environment ask for. The key,
// its password and the OIDC tokens are masked in every output.
func (f *signFlags) signer(ctx context.Context, s streams, timeout time.Duration) (*sign.Signer, error) {
	if f.tlogUpload && f.key == "" {
		return nil, usagef("--tlog-upload goes with --key: keyless signing always records its signatures in the transparency log")
	}
	so := sign.ServiceOptions{Keyless: f.key == "", TransparencyLog: f.tlogUpload, Timeout: timeout, Transport: httpClient(s, timeout).Transport}
	if f.key != "" {
		priv, err := f.privateKey(s)
		if err != nil {
			return nil, err
		}
		var svc sign.Services
		if f.tlogUpload {
			sc, tr, err := f.load(ctx, s, timeout, true, f.trustedRoot != "")
			if err != nil {
				return nil, err
			}
			if svc, err = sign.ServicesFor(sc, so); err != nil {
				return nil, usagef("%v", err)
			}
			if tr != nil {
				svc.TrustedRoot = tr
			}
		}
		return sign.NewKeySigner(priv, svc)
	}
	tokens, err := oidcTokens(s, timeout)
	if err != nil {
		return nil, err
	}
	sc, tr, err := f.load(ctx, s, timeout, true, f.signingConfig == "" || f.trustedRoot != "")
	if err != nil {
		return nil, err
	}
	svc, err := sign.ServicesFor(sc, so)
	if err != nil {
		return nil, usagef("%v", err)
	}
	if tr != nil {
		svc.TrustedRoot = tr // each bundle is checked right after it is made
	}
	return sign.NewKeylessSigner(tokens, svc)
}

// privateKey reads --key: a file, or env://VAR.
func (f *signFlags) privateKey(s streams) (crypto.Signer, error) {
	var pem []byte
	if v, ok := strings.CutPrefix(f.key, keyEnvPrefix); ok {
		val := s.getenv(v)
		if val == "" {
			return nil, usagef("--key %s: $%s is empty or not set", f.key, v)
		}
		addKeySecret(s.secrets, val)
		pem = []byte(val)
	} else {
		data, err := os.ReadFile(f.key)
		if err != nil {
			return nil, usagef("--key: %v", err)
		}
		pem = data
	}
	pw := s.getenv(envPassword)
	s.secrets.Add(pw)
	priv, err := sign.LoadPrivateKey(pem, []byte(pw))
	if err != nil {
		return nil, usagef("--key %s: %v", f.key, err)
	}
	return priv, nil
}

// addKeySecret masks a private key: whole, and each line of it, since a
// line could be printed alone.
func addKeySecret(set *redact.Set, key string) {
	set.Add(key)
	for _, line := range strings.Split(key, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "-----") {
			set.Add(line)
		}
	}
}

// oidcTokens is where keyless signing gets its OIDC tokens: SIGSTORE_ID_TOKEN
// (GitLab CI's id_tokens, or any CI's), else GitHub Actions' token service
// (permissions: id-token: write). Every token is masked in the output.
func oidcTokens(s streams, timeout time.Duration) (sign.TokenSource, error) {
	var src sign.TokenSource
	switch {
	case s.getenv(envIDToken) != "":
		src = sign.StaticToken(s.getenv(envIDToken))
	case s.getenv(envGitHubOIDC) != "" && s.getenv(envGitHubToken) != "":
		src = sign.GitHubActionsToken(httpClient(s, timeout), s.getenv(envGitHubOIDC), s.getenv(envGitHubToken))
	default:
		return nil, usagef("keyless signing needs an OIDC token: set %s (GitLab CI: id_tokens with aud: sigstore), or run in GitHub Actions with permissions: id-token: write; or sign with --key", envIDToken)
	}
	return func(ctx context.Context) (string, error) {
		t, err := src(ctx)
		s.secrets.Add(t)
		return t, err
	}, nil
}

type signOptions struct {
	signFlags
	dir        string
	version    string
	images     []string
	provenance bool
	source     string
	plainHTTP  bool
	timeout    time.Duration
}

func newSignCmd(s streams, g *globalOptions) *cobra.Command {
	o := &signOptions{}
	cmd := &cobra.Command{
		Use:   "sign [DIST]",
		Short: "Sign a built release (Sigstore bundles for checksums.txt and provenance) and images, verifiable with cosign",
		Long: `sign signs each provider version in DIST (default dist) the way release --sign
does: checksums.txt, which names every file by sha256, and
provenance.intoto.json (written here, naming the same files) get Sigstore
bundles (v0.3) beside them, checksums.txt.sigstore.json and
provenance.intoto.json.sigstore.json, which every publish target then
publishes with the files. A release of several providers gets the same for
the flat set a GitHub release holds, in DIST/flat/<version>.

--image REF signs an image or OCI artifact (by digest; a tag is resolved) as
cosign sign does: a signature referrer of its digest (OCI 1.1).

Keyless (the default) signs with a short-lived certificate for the CI's
identity: the OIDC token comes from SIGSTORE_ID_TOKEN (GitLab CI: id_tokens
with aud: sigstore) or from GitHub Actions (permissions: id-token: write).
Each signature is recorded in the transparency log. --signing-config and
--trusted-root name another Sigstore instance than the public one.

--key signs with a cosign-format private key (cosign generate-key-pair), from
a file or env://VAR, its password in COSIGN_PASSWORD; nothing is logged
unless --tlog-upload.

Who signed (identity or key fingerprint) and each transparency-log entry are
printed; the key, its password and the tokens never are. Users check the
files with capirepo verify --signatures, or cosign verify-blob.`,
		Example: `  # In GitHub Actions (permissions: id-token: write), keyless
  capirepo sign dist

  # With a key in a CI variable, no transparency log
  COSIGN_PASSWORD=... capirepo sign --key env://COSIGN_PRIVATE_KEY dist

  # Also sign the pushed manager image
  capirepo sign dist --image ghcr.io/example/manager:v1.4.0`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.dir = args[0]
			}
			return runSign(cmd.Context(), s, g, o)
		},
	}
	o.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.version, "version", "", "version to sign (default: the only one in DIST)")
	f.StringArrayVar(&o.images, "image", nil, "also sign this image or OCI artifact, REPO@sha256:... or REPO:TAG (repeatable; credentials: docker config)")
	f.BoolVar(&o.provenance, "provenance", true, "write provenance.intoto.json (SLSA provenance v1, naming every file) and sign it too")
	f.StringVar(&o.source, "source", "", "repository the provenance names (default: the CI's repository, else the current folder's git origin)")
	f.BoolVar(&o.plainHTTP, "plain-http", false, "talk plain HTTP to the registry of --image")
	bindTimeout(cmd, &o.timeout)
	o.dir = "dist"
	return cmd
}

// signSummary is what sign prints with -o json.
type signSummary struct {
	Version string                     `json:"version"`
	Files   []sign.Signed              `json:"files"`
	Images  map[string]*sign.Signature `json:"images,omitempty"`
}

func runSign(ctx context.Context, s streams, g *globalOptions, o *signOptions) error {
	if err := checkWaits(map[string]time.Duration{"timeout": o.timeout}); err != nil {
		return err
	}
	if err := checkDirFlag("sign", o.dir); err != nil {
		return err
	}
	if err := checkVersionFlag(o.version); err != nil {
		return err
	}
	rel, err := release.Load(o.dir, o.version)
	if err != nil {
		return err
	}
	var nameOpts []name.Option
	if o.plainHTTP {
		nameOpts = append(nameOpts, name.Insecure)
	}
	kc := redact.Keychain(authn.DefaultKeychain, s.secrets)
	ropts := []remote.Option{remote.WithAuthFromKeychain(kc), remote.WithUserAgent("capirepo"), remote.WithTransport(httpClient(s, o.timeout).Transport)}
	var refs []name.Digest
	for _, raw := range o.images {
		ref, err := imageDigest(ctx, raw, nameOpts, ropts)
		if err != nil {
			return err
		}
		refs = append(refs, ref)
	}
	signer, err := o.signer(ctx, s, o.timeout)
	if err != nil {
		return err
	}
	source := o.source
	if source == "" {
		source = ociSource(ctx, s.getenv, ".")
	}
	sum := signSummary{Version: rel.Version}
	// What was signed goes to stdout, below.
	if sum.Files, err = sign.SignRelease(ctx, signer, rel, sign.ReleaseOptions{Provenance: o.provenance, Source: source}); err != nil {
		return err
	}
	if err := release.WriteContext(ctx, o.dir, rel, release.WriteOptions{Progress: s.errOut}); err != nil {
		return fmt.Errorf("write the bundles into %s: %w", o.dir, err)
	}
	created, err := sourceDateEpoch(s.getenv)
	if err != nil {
		return err
	}
	if sum.Images, err = pipeline.SignImages(ctx, signer, refs, created, io.Discard, ropts...); err != nil {
		return err
	}
	if g.output == "json" {
		return printJSON(s.out, sum)
	}
	for _, f := range sum.Files {
		fmt.Fprintf(s.out, "%s\t%s %s%s\n", f.File, f.Bundle, f.Signature, f.Note())
	}
	for _, ref := range refs {
		fmt.Fprintf(s.out, "%s\tsignature referrer %s\n", ref, sum.Images[ref.String()])
	}
	return nil
}

// imageDigest names an image by digest: as given, or the digest its tag
// points at now.
func imageDigest(ctx context.Context, raw string, nameOpts []name.Option, ropts []remote.Option) (name.Digest, error) {
	ref, err := name.ParseReference(raw, nameOpts...)
	if err != nil {
		return name.Digest{}, usagef("--image %q: %v", raw, err)
	}
	if d, ok := ref.(name.Digest); ok {
		return d, nil
	}
	desc, err := remote.Head(ref, append([]remote.Option{remote.WithContext(ctx)}, ropts...)...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("--image %s: %w", raw, err)
	}
	return ref.Context().Digest(desc.Digest.String()), nil
}
