package main

import (
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/pipeline"
)

type signCmdOptions struct {
	pipeline.SignDistOptions
	signing signOptions
	oci     ociOptions
	targets targetOptions
}

func newSignCmd(s streams, g *globalOptions) *cobra.Command {
	o := &signCmdOptions{}
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
				o.Dir = args[0]
			}
			if err := pipeline.CheckFolder("sign", o.Dir); err != nil {
				return err
			}
			if err := checkVersionFlag("--version", o.Version); err != nil {
				return err
			}
			var err error
			if o.Signer, err = o.signing.Options(s, o.targets.timeout); err != nil {
				return err
			}
			if o.Source == "" {
				o.Source, o.SourceDir = ciRepository(s.getenv), "."
			}
			o.PlainHTTP, o.SourceHint, o.SourceDateEpoch = o.oci.plainHTTP, "pass --source URL", s.getenv("SOURCE_DATE_EPOCH")
			o.Keychain, o.Transport, o.Log = s.keychain(), o.targets.httpClient(s).Transport, s.errOut
			rep, err := pipeline.Sign(cmd.Context(), o.SignDistOptions)
			if err != nil {
				return err
			}
			return printResult(s, g, rep)
		},
	}
	o.signing.AddFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.Version, "version", "", "version to sign (default: the only one in DIST)")
	f.StringArrayVar(&o.Images, "image", nil, "also sign this image or OCI artifact, REPO@sha256:... or REPO:TAG (repeatable; credentials: docker config)")
	f.BoolVar(&o.Provenance, "provenance", true, "write provenance.intoto.json (SLSA provenance v1, naming every file and the version) and sign it too; without it verify --signatures needs --allow-missing-provenance")
	f.StringVar(&o.Source, "source", "", "repository the provenance names (default: the CI's repository, else the current folder's git origin)")
	o.oci.AddFlags(cmd, "", "talk plain HTTP to the registry of --image", false)
	o.targets.AddFlags(cmd, targetUsage{})
	o.Dir = "dist"
	return cmd
}
