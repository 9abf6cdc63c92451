package pipeline

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/markdown"
	"github.com/capirepo/capirepo/publish"
)

// The renderers of capirepo release's report (ReleaseSummary). JSON is the
// summary itself; the clusterctl config entries and Provider resources a
// run prints on stdout are results, printed by the command.

// WriteText prints the run's steps table, then what each target holds
// beyond the counts the table says. A failed step's error is the command's
// own, printed last ("Error: ..."): its row points there rather than saying
// it a second time.
func (s *ReleaseSummary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tSTATUS\tDETAIL")
	for _, r := range s.Steps {
		detail := r.Detail
		if r.Status == StatusFailed {
			detail = "the error below"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Step, r.Status, detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range s.Published {
		if err := p.WriteDetails(w); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON prints the summary as one JSON document.
func (s *ReleaseSummary) WriteJSON(w io.Writer) error { return writeJSON(w, s) }

var statusMarks = map[string]string{StatusOK: "✅ ok", StatusFailed: "❌ failed", StatusSkipped: "⏭️ skipped", StatusNotRun: "⬜ not run"}

// WriteMarkdown prints the run for a CI job summary: the verdict, the steps
// with their status and detail, the error, what the upgrade changes (the
// upgrade step's comparison), the lint's and the upgrade's findings (errors
// first), the upgrade rehearsal's steps and what it found, what was
// published where with the clusterctl config, and what to do next (the
// clusterctl init line).
func (s *ReleaseSummary) WriteMarkdown(w io.Writer) error {
	verdict := "published"
	switch {
	case s.Error != "":
		verdict = "failed"
		for _, st := range s.Steps {
			if st.Status == StatusFailed {
				verdict = "failed at " + st.Step
			}
		}
	case s.DryRun:
		verdict = "dry run passed, nothing published"
	}
	m := &markdown.Writer{W: w}
	m.Printf("## capirepo release %s: %s\n\n", markdown.Text(s.Version), markdown.Text(verdict))
	rows := make([][]string, len(s.Steps))
	for i, st := range s.Steps {
		rows[i] = []string{markdown.Text(st.Step), statusMarks[st.Status], markdown.Text(st.Detail)}
	}
	m.Do(func(w io.Writer) error { return markdown.Table(w, []string{"step", "status", "detail"}, rows) })
	if s.Error != "" {
		m.Printf("```text\n%s\n```\n\n", strings.ReplaceAll(s.Error, "```", "'''"))
	}
	for _, c := range s.Upgrade {
		m.Do(func(w io.Writer) error { return c.WriteMarkdown(w, 3) })
	}
	if len(s.Findings)+len(s.Waived) > 0 {
		m.Printf("### Findings\n\n")
		m.Do(func(w io.Writer) error {
			return contract.Report{Findings: s.Findings, Waived: s.Waived}.WriteMarkdownFindings(w, 4)
		})
	}
	if s.Install != nil {
		m.Do(s.Install.WriteMarkdown)
	}
	if s.Rehearsal != nil {
		m.Do(s.Rehearsal.WriteMarkdown)
	}
	if len(s.Published) > 0 {
		m.Printf("### Published\n\n")
		rows := make([][]string, len(s.Published))
		for i, p := range s.Published {
			state := fmt.Sprintf("%d %s, %d unchanged, %d replaced", len(p.Uploaded), p.Verb(), len(p.Skipped), len(p.Replaced))
			if p.Draft {
				state += "; a draft"
			}
			var urls []string
			for _, u := range p.Providers {
				urls = append(urls, markdown.Code(u.URL))
			}
			rows[i] = []string{markdown.Text(p.URL), markdown.Text(p.Version), markdown.Text(state), strings.Join(urls, ", ")}
		}
		m.Do(func(w io.Writer) error {
			return markdown.Table(w, []string{"target", "version", "files", "provider URLs"}, rows)
		})
		var providers []publish.ProviderURL
		for _, p := range s.Published {
			providers = append(providers, p.Providers...)
		}
		if len(providers) > 0 {
			m.Do(func(w io.Writer) error {
				return markdown.Details(w, "clusterctl config", false, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "```yaml\n%s```\n", publish.ClusterctlConfig{Providers: providers}.YAML())
					return err
				})
			})
		}
	}
	if len(s.Next) > 0 {
		m.Printf("### Next\n\n")
		for _, n := range s.Next {
			// The command as code, so it copies as it is.
			if i := strings.Index(n, "clusterctl init "); i >= 0 {
				m.Printf("- %s%s\n", markdown.Text(n[:i]), markdown.Code(n[i:]))
				continue
			}
			m.Printf("- %s\n", markdown.Text(n))
		}
		m.Printf("\n")
	}
	return m.Err
}
