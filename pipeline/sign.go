package pipeline

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/image"
	"github.com/capirepo/capirepo/internal/epoch"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
)

// SignOptions say how a release run signs what it publishes (Options.Sign).
type SignOptions struct {
	// Signer signs: keyless or with a key; nil in a dry run, which signs
	// nothing (a keyless signature records a permanent entry in a public
	// transparency log, and a pull request's run has no OIDC token).
	Signer *sign.Signer
	// Provenance writes provenance.intoto.json for each provider and signs
	// it with checksums.txt.
	Provenance bool
	// Source is the repository the provenance names; "" means the build's
	// source (the first target's repository, else Dir's origin remote).
	Source string
}

// SignSummary is what the sign step signed.
type SignSummary struct {
	Files []sign.Signed `json:"files"`
	// Images are the image and artifact signatures, by reference.
	Images map[string]*sign.Signature `json:"images,omitempty"`
}

// sign signs each provider's checksums.txt and provenance into bundles the
// targets publish with the files, writes them into the dist folder beside
// the files, and signs the manager image the build pushed.
func (r *run) sign(ctx context.Context) (string, bool, error) {
	o := r.o.Sign
	if r.o.DryRun {
		return "dry run: nothing signed (a signature is recorded in the transparency log for good)", true, nil
	}
	rel := r.b.Result.Release
	source := r.signSource(ctx)
	fmt.Fprintf(r.o.Log, "  signing as %s\n", signerName(o.Signer))
	signed, err := sign.SignRelease(ctx, o.Signer, rel, sign.ReleaseOptions{Provenance: o.Provenance, Source: source, Log: r.o.Log})
	if err != nil {
		return "", false, err
	}
	r.sum.Signed = &SignSummary{Files: signed}
	if err := release.WriteContext(ctx, r.o.Build.Out, rel, release.WriteOptions{LockTimeout: r.o.Build.LockTimeout, Progress: r.o.Log}); err != nil {
		return "", false, fmt.Errorf("write the bundles into %s: %w", r.o.Build.Out, err)
	}
	d := fmt.Sprintf("%s as %s", text.Plural(len(signed), "bundle", "bundles"), o.Signer.Identity())
	if img := r.b.Artifacts.Image; img != nil && img.Pushed {
		ref, err := name.NewDigest(img.Repository() + "@" + img.Digest)
		if err != nil {
			return "", false, err
		}
		if err := r.signImages(ctx, []name.Digest{ref}, r.imageRemote()); err != nil {
			return "", false, err
		}
		d += "; image " + ref.String()
	}
	return d, false, nil
}

func (r *run) signImages(ctx context.Context, refs []name.Digest, opts []remote.Option) error {
	sigs, err := SignImages(ctx, r.o.Sign.Signer, refs, r.created(), r.o.Log, opts...)
	r.addSigned(sigs)
	return err
}

// addSigned records image signatures in the summary.
func (r *run) addSigned(sigs map[string]*sign.Signature) {
	if sigs == nil {
		return
	}
	if r.sum.Signed == nil {
		r.sum.Signed = &SignSummary{}
	}
	if r.sum.Signed.Images == nil {
		r.sum.Signed.Images = map[string]*sign.Signature{}
	}
	for k, v := range sigs {
		r.sum.Signed.Images[k] = v
	}
}

// SignImages signs each image or artifact (a signature referrer of its
// digest, as cosign sign writes it) and says so in log.
func SignImages(ctx context.Context, s *sign.Signer, refs []name.Digest, created time.Time, log io.Writer, opts ...remote.Option) (map[string]*sign.Signature, error) {
	out := map[string]*sign.Signature{}
	for _, ref := range refs {
		sig, err := sign.SignImage(ctx, s, ref, created, opts...)
		if err != nil {
			return out, err
		}
		out[ref.String()] = sig
		fmt.Fprintf(log, "  signed %s %s\n", ref, sig)
	}
	return out, nil
}

func signerName(s *sign.Signer) string {
	if id := s.Identity(); id != (sign.Identity{}) {
		return id.String()
	}
	return "the identity of the OIDC token (keyless)"
}

// signSource is the repository the provenance the sign step makes names:
// SignOptions.Source, else the build's source (buildSource).
func (r *run) signSource(ctx context.Context) string {
	if s := r.o.Sign.Source; s != "" {
		return s
	}
	return r.buildSource(ctx)
}

// buildSource is the repository a run's release comes from: the build's
// source, the first target's repository, or Dir's origin remote.
func (r *run) buildSource(ctx context.Context) string {
	if s := r.o.Build.Source; s != "" {
		return s
	}
	for _, loc := range r.o.Targets {
		if loc.Source != "" {
			return loc.Source
		}
	}
	return builder.SourceURL(ctx, r.o.Build.Dir)
}

// imageRemote are the registry options of the build's image push.
func (r *run) imageRemote() []remote.Option {
	return publish.RegistryOptions(publish.Registry{Keychain: r.o.Build.Keychain})
}

// created stamps the referrers: $SOURCE_DATE_EPOCH, else now.
func (r *run) created() time.Time {
	t, _ := epoch.Parse(r.o.Build.SourceDateEpoch) // a wrong one failed the build
	return t
}

// imageDigest names an image by digest: as given, or the digest its tag
// points at now (image.Resolve); what says where the image was named (the
// option it was given with, or "image").
func imageDigest(ctx context.Context, what, raw string, nameOpts []name.Option, ropts []remote.Option) (name.Digest, error) {
	ref, err := name.ParseReference(raw, nameOpts...)
	if err != nil {
		return name.Digest{}, publish.Usagef("%s %q: %v", what, raw, err)
	}
	d, err := image.Resolve(ctx, ref, ropts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("%s %s: %w", what, raw, err)
	}
	return d, nil
}

// SignDistOptions say what Sign signs: the release in a dist folder, and
// images or artifacts in their registries.
type SignDistOptions struct {
	// Dir is the dist folder, Version the version in it ("" when it holds
	// one).
	Dir, Version string
	// Images are images or OCI artifacts to sign, REPO@sha256:... or
	// REPO:TAG (resolved to its digest first); PlainHTTP talks plain HTTP
	// to their registries.
	Images    []string
	PlainHTTP bool
	// Signer makes the signer once the release is read and the images are
	// resolved, so a wrong dist or image fails before a token is asked for.
	Signer sign.SignerOptions
	// Provenance and Source are as for SignOptions; SourceHint says how a
	// user names Source (sign.ReleaseOptions.SourceHint); without Source,
	// the provenance names SourceDir's git origin.
	Provenance                    bool
	Source, SourceHint, SourceDir string
	// SourceDateEpoch ($SOURCE_DATE_EPOCH) stamps the image signatures; ""
	// means now.
	SourceDateEpoch string
	// Keychain gives the registries' credentials (nil: anonymous);
	// Transport is what they are talked to through (nil: the default).
	Keychain  authn.Keychain
	Transport http.RoundTripper
	// Log hears of the files written; nil discards it.
	Log io.Writer
}

// SignReport is what Sign signed; it prints itself.
type SignReport struct {
	Version string `json:"version"`
	SignSummary
	refs []name.Digest
}

// WriteText prints each signed file with its bundle, then each image's
// signature referrer.
func (r *SignReport) WriteText(w io.Writer) {
	for _, f := range r.Files {
		fmt.Fprintf(w, "%s\t%s %s%s\n", f.File, f.Bundle, f.Signature, f.Note())
	}
	for _, ref := range r.refs {
		fmt.Fprintf(w, "%s\tsignature referrer %s\n", ref, r.Images[ref.String()])
	}
}

// WriteJSON prints the report as one JSON document.
func (r *SignReport) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// Sign signs a built release as the release pipeline's sign step does:
// checksums.txt and provenance get Sigstore bundles, written into the dist
// folder beside the files; then each image gets a signature referrer.
func Sign(ctx context.Context, o SignDistOptions) (*SignReport, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	created, err := epochTime(o.SourceDateEpoch)
	if err != nil {
		return nil, err
	}
	if o.Source == "" && o.SourceDir != "" {
		o.Source = builder.SourceURL(ctx, o.SourceDir)
	}
	rel, err := release.Load(o.Dir, o.Version)
	if err != nil {
		return nil, err
	}
	var nameOpts []name.Option
	if o.PlainHTTP {
		nameOpts = append(nameOpts, name.Insecure)
	}
	ropts := publish.RegistryOptions(publish.Registry{Keychain: o.Keychain, Transport: o.Transport})
	rep := &SignReport{Version: rel.Version}
	for _, raw := range o.Images {
		ref, err := imageDigest(ctx, option.Flag(ctx, option.Image), raw, nameOpts, ropts)
		if err != nil {
			return nil, err
		}
		rep.refs = append(rep.refs, ref)
	}
	signer, err := sign.NewSigner(ctx, o.Signer)
	if err != nil {
		return nil, err
	}
	if rep.Files, err = sign.SignRelease(ctx, signer, rel, sign.ReleaseOptions{Provenance: o.Provenance, Source: o.Source, SourceHint: o.SourceHint}); err != nil {
		return nil, err
	}
	for _, f := range rep.Files {
		if f.Warning != "" {
			fmt.Fprintf(o.Log, "warning: %s\n", f.Warning)
		}
	}
	if err := release.WriteContext(ctx, o.Dir, rel, release.WriteOptions{Progress: o.Log}); err != nil {
		return nil, fmt.Errorf("write the bundles into %s: %w", o.Dir, err)
	}
	if rep.Images, err = SignImages(ctx, signer, rep.refs, created, io.Discard, ropts...); err != nil {
		return nil, err
	}
	return rep, nil
}
