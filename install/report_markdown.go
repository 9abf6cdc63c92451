package install

import (
	"fmt"
	"io"
	"strings"

	"github.com/capirepo/capirepo/internal/markdown"
	"github.com/capirepo/capirepo/internal/text"
)

// WriteMarkdown prints the report for a CI job summary: the counts of
// objects accepted, refused and not checked, a row per file, and every
// refusal (by file, object and field, with the server's message) and object
// not checked, the latter folded.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	mode := "CRDs and namespaces created, everything else dry-run"
	if r.DryRunOnly {
		mode = "dry-run only: nothing created"
	}
	fmt.Fprintf(&b, "### Install check against %s\n\n%s. **%d accepted, %d refused, %d not checked**",
		markdown.Code(r.Server), mode, r.Accepted(), r.Refusals(), r.NotCheckedCount())
	if n := r.RefusedWithStandInsCount(); n > 0 {
		fmt.Fprintf(&b, "; %d refused by a CEL rule with stand-ins (not counted: give those variables real values)", n)
	}
	b.WriteString("\n\n")
	if len(r.Checks) > 1 {
		fmt.Fprintf(&b, "%d releases, each checked on its own, the CRDs of the one before removed: %s.\n\n", len(r.Checks), markdown.Text(strings.Join(r.Checks, "; ")))
	}
	if len(r.Base) > 0 {
		fmt.Fprintf(&b, "With the CRDs of %s, created first where the cluster lacked them (their own files are checked on their own).\n\n", markdown.Text(strings.Join(r.Base, ", ")))
	}
	if missing := r.Missing(); len(missing) > 0 {
		b.WriteString("Not checked for want of CRDs the cluster does not serve:\n\n")
		for _, m := range missing {
			fmt.Fprintf(&b, "- %s: %s, of group %s (%s)\n", markdown.Text(m.Whose()), text.Plural(m.Objects, "object", "objects"), markdown.Code(m.Group), markdown.Text(strings.Join(m.Kinds, ", ")))
		}
		b.WriteString("\n")
	}
	rows := make([][]string, len(r.Files))
	var refused, notChecked [][]string
	for i, f := range r.Files {
		rows[i] = []string{markdown.Code(f.Path()), fmt.Sprint(f.Accepted), fmt.Sprint(len(f.Refused)), fmt.Sprint(len(f.NotChecked))}
		for _, ref := range f.Refused {
			refused = append(refused, []string{markdown.Code(f.Path()), markdown.Code(ref.Object), markdown.Code(ref.Field), markdown.Text(ref.Message), markdown.Text(ref.Reason)})
		}
		for _, nc := range f.NotChecked {
			notChecked = append(notChecked, []string{markdown.Code(f.Path()), markdown.Code(nc.Object), markdown.Text(nc.Why)})
		}
	}
	if err := markdown.Fold(&b, len(rows), 10, text.Plural(len(rows), "file", "files"), false, func(w io.Writer) error {
		return markdown.Table(w, []string{"file", "accepted", "refused", "not checked"}, rows)
	}); err != nil {
		return err
	}
	if len(refused) > 0 {
		if err := markdown.Details(&b, text.Plural(len(refused), "refusal", "refusals"), true, func(w io.Writer) error {
			return markdown.Table(w, []string{"file", "object", "field", "message", "reason"}, refused)
		}); err != nil {
			return err
		}
	}
	if len(notChecked) > 0 {
		if err := markdown.Details(&b, text.Plural(len(notChecked), "object not checked", "objects not checked"), false, func(w io.Writer) error {
			return markdown.Table(w, []string{"file", "object", "why"}, notChecked)
		}); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
