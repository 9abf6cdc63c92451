package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/internal/markdown"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/configmap"
	"github.com/capirepo/capirepo/rehearse"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/verify"
)

// read says whether anything was read back to print: providers, or a
// clean run.
func (r *VerifyReport) read() bool {
	return r.Read != nil && (len(r.Read.Providers) > 0 || r.err == nil)
}

// Empty says the report has nothing to print: nothing was read and no
// install check or rehearsal ran.
func (r *VerifyReport) Empty() bool {
	return r == nil || !r.read() && r.Install == nil && r.Rehearsal == nil
}

// WriteText prints what was read back, the signatures, the install check
// and the upgrade rehearsal.
func (r *VerifyReport) WriteText(w io.Writer) error {
	if r.Empty() {
		return nil
	}
	var werr error
	if r.read() {
		werr = r.Read.WriteText(w)
	}
	if r.Signatures != nil {
		r.Signatures.WriteText(w)
	}
	if r.Install != nil {
		werr = errors.Join(werr, r.Install.WriteText(w))
	}
	if r.Rehearsal != nil {
		werr = errors.Join(werr, r.Rehearsal.WriteText(w))
	}
	return werr
}

// WriteJSON prints the report as one document, with the error when Verify
// failed.
func (r *VerifyReport) WriteJSON(w io.Writer) error {
	if r.Empty() {
		return nil
	}
	doc := struct {
		*verify.Report
		Signatures *SignatureReport `json:"signatures,omitempty"`
		Install    *install.Report  `json:"install,omitempty"`
		Rehearsal  *rehearse.Report `json:"rehearsal,omitempty"`
		Error      string           `json:"error,omitempty"`
	}{Report: r.Read, Signatures: r.Signatures, Install: r.Install, Rehearsal: r.Rehearsal}
	if doc.Report == nil {
		doc.Report = &verify.Report{}
	}
	if r.err != nil {
		doc.Error = r.err.Error()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// SignatureReport is what the signature check found.
type SignatureReport struct {
	Verifier string                       `json:"acceptedSigner"`
	Folders  []*sign.Checked              `json:"folders,omitempty"`
	Images   map[string][]*sign.Signature `json:"images,omitempty"`
}

// WriteText prints a line for each folder and each image signature.
func (r *SignatureReport) WriteText(w io.Writer) {
	for _, c := range r.Folders {
		// Files signed alike (one key, no log) are said together, the
		// signer once.
		var order []string
		names := map[string][]string{}
		for _, n := range sortedNames(c.Signatures) {
			how := c.Signatures[n].String()
			if names[how] == nil {
				order = append(order, how)
			}
			names[how] = append(names[how], n)
		}
		signed := make([]string, len(order))
		for i, how := range order {
			signed[i] = strings.Join(names[how], " and ") + " " + how
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

// verifyDirSignatures checks the bundles of every version folder in the
// DIR and, with Images, the signature of every image the components run.
func (o VerifyOptions) verifyDirSignatures(ctx context.Context, f *folder) (*SignatureReport, error) {
	v := o.Signatures
	rep := &SignatureReport{Verifier: v.String()}
	var errs []error
	if f.flat != nil {
		files, err := release.ReadFolder(f.path)
		if err == nil {
			var c *sign.Checked
			if c, err = sign.VerifyFiles(v, f.path, files, sign.VerifyFilesOptions{Version: o.Version}); c != nil {
				rep.Folders = append(rep.Folders, c)
			}
		}
		errs = append(errs, err)
	} else {
		checked, err := sign.VerifyDir(v, o.Path, o.Version)
		rep.Folders = checked
		errs = append(errs, err)
	}
	if o.Images {
		rel, err := f.Release(o.Version)
		if err != nil {
			return rep, errors.Join(append(errs, err)...)
		}
		uses, err := rel.Images()
		if err != nil {
			return rep, errors.Join(append(errs, err)...)
		}
		seen := map[string]bool{}
		for _, u := range uses {
			if seen[u.Image] || strings.Contains(u.Image, "${") {
				continue
			}
			seen[u.Image] = true
			sigs, err := o.verifyImageSignature(ctx, u.Image, o.Keychain, false)
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
func (o VerifyOptions) verifyImageSignature(ctx context.Context, raw string, kc authn.Keychain, insecure bool) ([]*sign.Signature, error) {
	ropts := publish.RegistryOptions(publish.Registry{Keychain: kc, Secrets: o.Secrets, Transport: o.Transport})
	var nameOpts []name.Option
	if insecure {
		nameOpts = append(nameOpts, name.Insecure)
	}
	ref, err := imageDigest(ctx, "image", raw, nameOpts, ropts)
	if err != nil {
		return nil, err
	}
	return sign.VerifyImage(ctx, o.Signatures, ref, ropts...)
}

// verifyConfigMaps reads a file of ConfigMaps and Provider resources back by
// the operator's rules and hands each provider's files to clusterctl's client.
func verifyConfigMaps(ctx context.Context, file string, opts verify.Options) (*verify.Report, error) {
	provs, err := configmap.ReadFile(file, opts.Version)
	if err != nil {
		return nil, err
	}
	opts.Version = ""
	return verify.Providers(ctx, provs, file, opts)
}

// WriteMarkdown prints the report for a CI job summary: what clusterctl's
// client read (each provider with its contract, components, flavors and
// ClusterClasses), the images checked, the signatures, the install check's
// accepted, refused and not checked objects (every refusal by file, object
// and field), the upgrade rehearsal's steps and what it found, and the
// error when Verify failed.
func (r *VerifyReport) WriteMarkdown(w io.Writer) error {
	if r == nil {
		return nil
	}
	verdict := "clusterctl reads it"
	if r.err != nil {
		verdict = "failed"
	}
	m := &markdown.Writer{W: w}
	m.Printf("## capirepo verify: %s\n\n", verdict)
	if r.read() {
		rows := [][]string{}
		for _, p := range r.Read.Providers {
			flavors := make([]string, len(p.Flavors))
			for i, f := range p.Flavors {
				flavors[i] = markdown.Code(cmp.Or(f.Name, "(default)"))
			}
			classes := make([]string, len(p.ClusterClasses))
			for i, c := range p.ClusterClasses {
				classes[i] = markdown.Code(c.Name)
			}
			if !p.TemplatesListed {
				flavors = []string{"not listed"}
			}
			rows = append(rows, []string{markdown.Code(p.Label), markdown.Text(p.Version), markdown.Text(p.Contract),
				fmt.Sprintf("%s: %d objects", markdown.Code(p.ComponentsFile), p.Objects), strings.Join(flavors, ", "), strings.Join(classes, ", ")})
		}
		m.Do(func(w io.Writer) error {
			return markdown.Table(w, []string{"provider", "version", "contract", "components", "flavors", "ClusterClasses"}, rows)
		})
		var warned bool
		for _, p := range r.Read.Providers {
			for _, w := range p.Waived {
				m.Printf("- %s: %s not read by clusterctl (%s)\n", markdown.Code(p.Label), markdown.Code(w.File), markdown.Text(w.Waiver))
				warned = true
			}
			if s := p.StandIns(); len(s) > 0 {
				codes := make([]string, len(s))
				for i, n := range s {
					codes[i] = markdown.Code(n)
				}
				m.Printf("- %s's templates read with stand-ins (no real value given) for %s\n", markdown.Code(p.Label), strings.Join(codes, ", "))
				warned = true
			}
			for _, f := range p.Flavors {
				for _, c := range f.After {
					m.Printf("- warning: %s\n", markdown.Text(c.Warning(f.Name, f.File)))
					warned = true
				}
			}
		}
		if warned {
			m.Printf("\n")
		}
	}
	if r.Images != nil {
		m.Printf("### Images\n\n%d in the registry for %s; %d missing, %d not readable without credentials, %d named by variables (not checked)\n\n",
			r.Images.Count(verify.ImageOK), markdown.Text(strings.Join(r.Images.Platforms, ", ")), r.Images.Count(verify.ImageMissing),
			r.Images.Count(verify.ImageUnreadable), r.Images.Count(verify.ImageSkipped))
		var rows [][]string
		for _, i := range r.Images.Images {
			if i.Status != verify.ImageOK {
				rows = append(rows, []string{markdown.Code(i.Image), markdown.Text(i.Status), markdown.Text(i.Detail)})
			}
		}
		if len(rows) > 0 {
			m.Do(func(w io.Writer) error { return markdown.Table(w, []string{"image", "status", "detail"}, rows) })
		}
	}
	if r.Signatures != nil {
		m.Printf("### Signatures\n\nAccepted signer: %s\n\n", markdown.Text(r.Signatures.Verifier))
		for _, c := range r.Signatures.Folders {
			m.Printf("- %s: %d files match the signed checksums.txt\n", markdown.Code(c.Dir), c.Files)
		}
		for _, ref := range sortedNames(r.Signatures.Images) {
			m.Printf("- %s: %d signatures\n", markdown.Code(ref), len(r.Signatures.Images[ref]))
		}
		m.Printf("\n")
	}
	if r.Install != nil {
		m.Do(r.Install.WriteMarkdown)
	}
	if r.Rehearsal != nil {
		m.Do(r.Rehearsal.WriteMarkdown)
	}
	if r.err != nil {
		m.Printf("```text\n%s\n```\n\n", strings.ReplaceAll(r.err.Error(), "```", "'''"))
	}
	return m.Err
}
