package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/pipeline"
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

// instance is where the Sigstore instance is read from.
func (f *instanceFlags) instance(s streams, timeout time.Duration) sign.InstanceOptions {
	return sign.InstanceOptions{SigningConfig: f.signingConfig, TrustedRoot: f.trustedRoot,
		CacheDir: sigstoreCache(s.getenv), HTTPClient: httpClient(s, timeout), Log: s.errOut}
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
	o, err := f.options(s, timeout)
	if err != nil {
		return nil, err
	}
	return sign.NewSigner(ctx, o)
}

// options read what the flags name from files and the environment: the
// key (a file, or env://VAR) and its password, or the OIDC tokens.
func (f *signFlags) options(s streams, timeout time.Duration) (sign.SignerOptions, error) {
	o := sign.SignerOptions{InstanceOptions: f.instance(s, timeout), TransparencyLog: f.tlogUpload, Timeout: timeout, KeyName: f.key,
		IDToken: s.getenv(envIDToken), GitHubTokenURL: s.getenv(envGitHubOIDC), GitHubToken: s.getenv(envGitHubToken), Secrets: s.secrets}
	if f.key == "" {
		return o, nil
	}
	if v, ok := strings.CutPrefix(f.key, keyEnvPrefix); ok {
		val := s.getenv(v)
		if val == "" {
			return o, usagef("--key %s: $%s is empty or not set", f.key, v)
		}
		addKeySecret(s.secrets, val)
		o.Key = []byte(val)
	} else {
		data, err := os.ReadFile(f.key)
		if err != nil {
			return o, usagef("--key: %v", err)
		}
		o.Key = data
	}
	pw := s.getenv(envPassword)
	s.secrets.Add(pw)
	o.Password = []byte(pw)
	return o, nil
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
	f.BoolVar(&o.provenance, "provenance", true, "write provenance.intoto.json (SLSA provenance v1, naming every file and the version) and sign it too; without it verify --signatures needs --allow-missing-provenance")
	f.StringVar(&o.source, "source", "", "repository the provenance names (default: the CI's repository, else the current folder's git origin)")
	f.BoolVar(&o.plainHTTP, "plain-http", false, "talk plain HTTP to the registry of --image")
	bindTimeout(cmd, &o.timeout)
	o.dir = "dist"
	return cmd
}

func runSign(ctx context.Context, s streams, g *globalOptions, o *signOptions) error {
	if err := checkDirFlag("sign", o.dir); err != nil {
		return err
	}
	if err := checkVersionFlag(o.version); err != nil {
		return err
	}
	so, err := o.options(s, o.timeout)
	if err != nil {
		return err
	}
	created, err := sourceDateEpoch(s.getenv)
	if err != nil {
		return err
	}
	source := o.source
	if source == "" {
		source = ociSource(ctx, s.getenv, ".")
	}
	rep, err := pipeline.Sign(ctx, pipeline.SignDistOptions{Dir: o.dir, Version: o.version, Images: o.images, PlainHTTP: o.plainHTTP,
		Signer: so, Provenance: o.provenance, Source: source, SourceHint: "pass --source URL", Created: created,
		Keychain: redact.Keychain(authn.DefaultKeychain, s.secrets), Transport: httpClient(s, o.timeout).Transport, Log: s.errOut})
	if err != nil {
		return err
	}
	if g.output == "json" {
		return rep.WriteJSON(s.out)
	}
	rep.WriteText(s.out)
	return nil
}
