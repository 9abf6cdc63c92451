package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/verify"
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
	f.instanceFlags.bind(cmd, false)
	f.signaturesPrefix = what
}

// set says whether any of the flags was given.
func (f *verifyFlags) set() bool {
	return f.key != "" || f.identity != "" || f.identityRegexp != "" || f.issuer != "" || f.issuerRegexp != "" || f.requireTlog || f.trustedRoot != ""
}

// verifier makes the verifier the flags ask for: a key needs no network; an
// identity is checked against --trusted-root, else the public instance's.
func (f *verifyFlags) verifier(ctx context.Context, s streams, timeout time.Duration) (*sign.Verifier, error) {
	if !f.checkSignatures {
		if f.set() {
			return nil, usagef("--key, --certificate-identity, --certificate-oidc-issuer, --require-tlog and --trusted-root go with --%s", f.signaturesPrefix)
		}
		return nil, nil
	}
	o := sign.VerifyOptions{Identity: f.identity, IdentityRegexp: f.identityRegexp, Issuer: f.issuer, IssuerRegexp: f.issuerRegexp, RequireLog: f.requireTlog}
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
		_, tr, err := f.load(ctx, s, timeout, false, needRoot)
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

// signatureReport is what verify --signatures found.
type signatureReport struct {
	Verifier string                       `json:"acceptedSigner"`
	Folders  []*sign.Checked              `json:"folders,omitempty"`
	Images   map[string][]*sign.Signature `json:"images,omitempty"`
}

func (r *signatureReport) writeText(w io.Writer) {
	for _, c := range r.Folders {
		var signed []string
		for _, n := range sortedNames(c.Signatures) {
			signed = append(signed, n+" "+c.Signatures[n].String())
		}
		fmt.Fprintf(w, "%s: %d files match the signed checksums.txt; signed: %s\n", c.Dir, c.Files, strings.Join(signed, "; "))
	}
	for _, ref := range sortedNames(r.Images) {
		for _, sig := range r.Images[ref] {
			fmt.Fprintf(w, "%s: signed %s\n", ref, sig)
		}
	}
}

func sortedNames[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// verifyDirSignatures checks the bundles of every version folder in dir
// and, with images, the signature of every image the components run.
func verifyDirSignatures(ctx context.Context, s streams, v *sign.Verifier, dir, version string, images bool, timeout time.Duration) (*signatureReport, error) {
	rep := &signatureReport{Verifier: v.String()}
	var errs []error
	checked, err := sign.VerifyDir(v, dir, version)
	rep.Folders = checked
	errs = append(errs, err)
	if images {
		rel, err := release.Load(dir, version)
		if err != nil {
			return rep, errors.Join(append(errs, err)...)
		}
		uses, err := verify.ReleaseImages(rel)
		if err != nil {
			return rep, errors.Join(append(errs, err)...)
		}
		seen := map[string]bool{}
		for _, u := range uses {
			if seen[u.Image] || strings.Contains(u.Image, "${") {
				continue
			}
			seen[u.Image] = true
			sigs, err := verifyImageSignature(ctx, s, v, u.Image, authn.DefaultKeychain, nil, timeout)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", u, err))
				continue
			}
			if rep.Images == nil {
				rep.Images = map[string][]*sign.Signature{}
			}
			rep.Images[u.Image] = sigs
		}
	}
	return rep, errors.Join(errs...)
}

// verifyImageSignature finds the signatures of an image or artifact (by
// digest; a tag is resolved) and checks them.
func verifyImageSignature(ctx context.Context, s streams, v *sign.Verifier, raw string, kc authn.Keychain, nameOpts []name.Option, timeout time.Duration) ([]*sign.Signature, error) {
	ropts := []remote.Option{remote.WithAuthFromKeychain(redact.Keychain(kc, s.secrets)), remote.WithUserAgent("capirepo"),
		remote.WithTransport(httpClient(s, timeout).Transport)}
	ref, err := imageDigest(ctx, raw, nameOpts, ropts)
	if err != nil {
		return nil, err
	}
	return sign.VerifyImage(ctx, v, ref, ropts...)
}
