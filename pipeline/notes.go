package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/sign"
)

// upgradeNotes, with NotesUpgrade, adds the "Upgrading from ..." section
// to t's release notes when t has them (publish.Noted). t is nil in a dry
// run, which only makes the section, for the summary (UpgradeNotes). The section is made
// once per run, before the first publish step, from what the upgrade step
// compared (ReleaseSummary.Upgrade): never from a comparison of its own.
func (r *run) upgradeNotes(ctx context.Context, t publish.Target) {
	if !r.o.NotesUpgrade {
		return
	}
	flag := option.Flag(ctx, option.NotesUpgrade)
	if !r.notesMade {
		r.notesMade = true
		r.sum.UpgradeNotes = r.notesSection()
		if r.sum.UpgradeNotes == "" {
			fmt.Fprintf(r.o.Log, "  %s: the upgrade step compared no release (%s): the release notes get no upgrade section\n", flag, r.upgradeDetail())
		}
	}
	if r.sum.UpgradeNotes == "" || t == nil {
		return
	}
	if n, ok := t.(publish.Noted); !ok || !n.AddNotes(r.sum.UpgradeNotes) {
		fmt.Fprintf(r.o.Log, "  %s: this target has no release notes (a GitLab target needs %s)\n", flag, option.Flag(ctx, option.GitLabRelease))
		return
	}
	fmt.Fprintf(r.o.Log, "  %s: the release notes get the section \"Upgrading from %s\"\n", flag, r.sum.Upgrade[0].Old)
}

// upgradeDetail is the upgrade step's detail, which says why nothing was
// compared.
func (r *run) upgradeDetail() string {
	for _, st := range r.sum.Steps {
		if st.Step == "upgrade" {
			return st.Detail
		}
	}
	return "not run"
}

// notesSection is the section: for each release the upgrade step compared
// with, what the upgrade changes for users (diff.Changes), then how to
// check the signatures the run made. "" when nothing was compared.
func (r *run) notesSection() string {
	if len(r.sum.Upgrade) == 0 {
		return ""
	}
	var b strings.Builder
	for _, c := range r.sum.Upgrade {
		_ = c.WriteMarkdown(&b, 2) // a strings.Builder does not fail
	}
	if r.sum.Signed != nil && len(r.sum.Signed.Files) > 0 && r.o.Sign != nil && r.o.Sign.Signer != nil {
		writeVerifyNotes(&b, r.sum.Signed.Files, r.o.Sign.Signer.Identity())
	}
	return b.String()
}

// writeVerifyNotes says how users check what the run signed: cosign
// verify-blob on each signed file with its bundle, for the identity that
// signed (a certificate's subject and issuer, or the project's key), as
// docs/signing.md says it.
func writeVerifyNotes(b *strings.Builder, files []sign.Signed, id sign.Identity) {
	var names []string
	for _, f := range files {
		name := f.File[strings.LastIndex(f.File, "/")+1:]
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	who := fmt.Sprintf("--certificate-identity %q \\\n  --certificate-oidc-issuer %s", id.Subject, id.Issuer)
	if id.Key != "" {
		who = "--key cosign.pub # the project's public key, fingerprint " + id.Key
	}
	b.WriteString("### Verifying the signatures\n\n")
	fmt.Fprintf(b, "%s of each provider are signed; download them with their `.sigstore.json` bundles, then:\n\n```sh\n", strings.Join(names, " and "))
	for _, n := range names {
		fmt.Fprintf(b, "cosign verify-blob %s --bundle %s.sigstore.json \\\n  %s\n", n, n, who)
	}
	b.WriteString("sha256sum --ignore-missing -c checksums.txt\n```\n\n")
}
