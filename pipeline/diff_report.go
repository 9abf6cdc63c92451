package pipeline

import (
	"fmt"
	"io"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/markdown"
)

// The renderers of capirepo diff's report (DiffSummary): the findings are
// the lint's (contract.Report renders them), with what was compared and
// what the upgrade changes around them.

// Describe names what was compared: "the upgrade from OLD to NEW", or "the
// upgrade to NEW" from several old releases.
func (s *DiffSummary) Describe() string {
	if len(s.Old) == 1 {
		return fmt.Sprintf("the upgrade from %s to %s", s.Old[0].Version, s.New.Version)
	}
	return "the upgrade to " + s.New.Version
}

// WriteText prints the findings as lint prints them (the notes, what was
// not compared, are said as the releases are read).
func (s *DiffSummary) WriteText(w io.Writer) error { return s.Report.WriteText(w) }

// WriteJSON prints the findings as lint's JSON does.
func (s *DiffSummary) WriteJSON(w io.Writer) error { return s.Report.WriteJSON(w) }

// WriteSARIF prints the findings as a SARIF log, as lint's.
func (s *DiffSummary) WriteSARIF(w io.Writer) error { return s.Report.WriteSARIF(w) }

// WriteCodeQuality prints the findings as GitLab's Code Quality report.
func (s *DiffSummary) WriteCodeQuality(w io.Writer) error { return s.Report.WriteCodeQuality(w) }

// WriteMarkdown prints the verdict, the releases compared, what the upgrade
// changes for users (diff.Changes, as release notes say it) and the
// findings.
func (s *DiffSummary) WriteMarkdown(w io.Writer) error {
	verdict := "is safe"
	switch {
	case s.Report.HasErrors():
		verdict = "breaks"
	case s.Report.Count(contract.Warning) > 0:
		verdict = "is safe, with warnings"
	}
	ew := &markdown.Writer{W: w}
	ew.Printf("## capirepo diff: %s %s\n\n", markdown.Text(s.Describe()), verdict)
	rows := [][]string{}
	for _, o := range s.Old {
		rows = append(rows, []string{"old", markdown.Text(o.Version), markdown.Code(o.From)})
	}
	rows = append(rows, []string{"new", markdown.Text(s.New.Version), markdown.Code(s.New.From)})
	ew.Do(func(w io.Writer) error { return markdown.Table(w, []string{"", "version", "read from"}, rows) })
	for _, n := range s.Notes {
		ew.Printf("- %s\n", markdown.Text(n))
	}
	if len(s.Notes) > 0 {
		ew.Printf("\n")
	}
	for _, c := range s.Changes {
		ew.Do(func(w io.Writer) error { return c.WriteMarkdown(w, 3) })
	}
	ew.Printf("### Findings\n\n")
	ew.Do(func(w io.Writer) error { return s.Report.WriteMarkdownFindings(w, 4) })
	return ew.Err
}
