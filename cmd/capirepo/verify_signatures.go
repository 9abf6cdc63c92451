package main

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/sign"
)

// verifyFlags say whose signatures are accepted, with cosign's names.
type verifyFlags struct {
	instanceFlags
	key              string
	identity         string
	identityRegexp   string
	issuer           string
	issuerRegexp     string
	requireTlog      bool
	allowNoProv      bool
	checkSignatures  bool
	signaturesPrefix string
}

// bind binds the flags; what names the switch that turns the check on
// (--signatures, --require-signatures).
func (f *verifyFlags) bind(cmd *cobra.Command, what, usage string) {
	fl := cmd.Flags()
	fl.BoolVar(&f.checkSignatures, what, false, usage)
	fl.StringVar(&f.key, "key", "", "accept signatures made with this public key (cosign.pub), PEM")
	fl.StringVar(&f.identity, "certificate-identity", "", "accept keyless signatures of this identity: the certificate's subject (e-mail, or a workflow URI such as https://github.com/OWNER/REPO/.github/workflows/release.yaml@refs/tags/v1.4.0)")
	fl.StringVar(&f.identityRegexp, "certificate-identity-regexp", "", "as --certificate-identity, a regular expression")
	fl.StringVar(&f.issuer, "certificate-oidc-issuer", "", "the OIDC issuer of --certificate-identity: https://token.actions.githubusercontent.com (GitHub Actions), https://gitlab.com (GitLab.com)")
	fl.StringVar(&f.issuerRegexp, "certificate-oidc-issuer-regexp", "", "as --certificate-oidc-issuer, a regular expression")
	fl.BoolVar(&f.requireTlog, "require-tlog", false, "with --key, refuse signatures without a transparency-log entry (keyless ones always need one)")
	fl.BoolVar(&f.allowNoProv, "allow-missing-provenance", false, "accept a signed version without provenance.intoto.json: then nothing signed names its version, so an older signed release renamed to it passes (capirepo sign writes one unless --provenance=false)")
	f.instanceFlags.bind(cmd, false)
	f.signaturesPrefix = what
}

// set says whether any of the flags was given.
func (f *verifyFlags) set() bool {
	return f.key != "" || f.identity != "" || f.identityRegexp != "" || f.issuer != "" || f.issuerRegexp != "" || f.requireTlog || f.allowNoProv || f.trustedRoot != ""
}

// verifier makes the verifier the flags ask for: a key needs no network; an
// identity is checked against --trusted-root, else the public instance's.
func (f *verifyFlags) verifier(ctx context.Context, s streams, timeout time.Duration) (*sign.Verifier, error) {
	if !f.checkSignatures {
		if f.set() {
			return nil, usagef("--key, --certificate-identity, --certificate-oidc-issuer, --require-tlog, --allow-missing-provenance and --trusted-root go with --%s", f.signaturesPrefix)
		}
		return nil, nil
	}
	o := sign.VerifyOptions{Identity: f.identity, IdentityRegexp: f.identityRegexp, Issuer: f.issuer, IssuerRegexp: f.issuerRegexp, RequireLog: f.requireTlog, AllowMissingProvenance: f.allowNoProv}
	if f.key != "" {
		pem, err := os.ReadFile(f.key)
		if err != nil {
			return nil, usagef("--key: %v", err)
		}
		o.Key = pem
	} else if o.Identity == "" && o.IdentityRegexp == "" || o.Issuer == "" && o.IssuerRegexp == "" {
		return nil, usagef("--%s needs --key, or --certificate-identity with --certificate-oidc-issuer (or their -regexp forms)", f.signaturesPrefix)
	}
	needRoot := f.key == "" || f.requireTlog
	if needRoot || f.trustedRoot != "" {
		_, tr, err := sign.LoadInstance(ctx, f.instance(s, timeout), false, needRoot)
		if err != nil {
			return nil, err
		}
		if tr != nil {
			o.TrustedRoot = tr
		}
	}
	v, err := sign.NewVerifier(o)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return v, nil
}
