package contract

import (
	"fmt"
	"io"
	"strings"

	"github.com/capirepo/capirepo/internal/markdown"
	"github.com/capirepo/capirepo/internal/text"
)

// RulesURL is the rule catalogue as published: a rule's section is
// RulesURL#<id in lower case>.
const RulesURL = "https://github.com/capirepo/capirepo/blob/main/docs/lint-rules.md"

// URL is the rule's section of the published catalogue.
func (r Rule) URL() string { return RulesURL + "#" + strings.ToLower(r.ID) }

// foldOver is how many findings of one severity are listed open; a longer
// list is folded in a <details> block (errors unfolded at first).
const foldOver = 10

// WriteMarkdown prints the lint's report for a CI job summary or a
// pull-request comment: a heading with the counts, then the findings
// (WriteMarkdownFindings).
func (r Report) WriteMarkdown(w io.Writer) error {
	verdict := "no errors"
	if r.HasErrors() {
		verdict = "errors: the release fails for its users"
	}
	if _, err := fmt.Fprintf(w, "## capirepo lint: %s\n\n", verdict); err != nil {
		return err
	}
	return r.WriteMarkdownFindings(w, 3)
}

// Counts says the report's counts in words: "1 error, 2 warnings, 0 info"
// and the waived ones.
func (r Report) Counts() string {
	s := fmt.Sprintf("%s, %s, %s", text.Plural(r.Count(Error), "error", "errors"), text.Plural(r.Count(Warning), "warning", "warnings"), text.Plural(r.Count(Info), "info", "info"))
	if len(r.Waived) > 0 {
		s += fmt.Sprintf(", %d waived", len(r.Waived))
	}
	return s
}

// WriteMarkdownFindings prints the counts and the findings by severity,
// errors first, each severity under a heading of the level given (a table
// of rule, file, object, field and message; longer than ten folded), then
// the waived findings folded with their reasons and the waivers that
// matched nothing or cannot waive. Other reports (diff, release) embed it.
func (r Report) WriteMarkdownFindings(w io.Writer, level int) error {
	ew := &markdown.Writer{W: w}
	ew.Printf("%s\n\n", markdown.Text(r.Counts()))
	h := strings.Repeat("#", level)
	for _, sev := range []struct {
		s     Severity
		title string
	}{{Error, "Errors"}, {Warning, "Warnings"}, {Info, "Info"}} {
		var rows [][]string
		for _, f := range r.Findings {
			if f.Severity == sev.s {
				rows = append(rows, markdownRow(f, f.Message))
			}
		}
		if len(rows) == 0 {
			continue
		}
		ew.Printf("%s %s (%d)\n\n", h, sev.title, len(rows))
		ew.Do(func(w io.Writer) error {
			return markdown.Fold(w, len(rows), foldOver, text.Plural(len(rows), strings.ToLower(sev.title[:len(sev.title)-1]), strings.ToLower(sev.title)), sev.s == Error, func(w io.Writer) error {
				return markdown.Table(w, markdownHeader, rows)
			})
		})
	}
	if len(r.Waived) > 0 {
		var rows [][]string
		for _, f := range r.Waived {
			rows = append(rows, markdownRow(f.Finding, f.Message+" (waived: "+f.Reason+")"))
		}
		ew.Do(func(w io.Writer) error {
			return markdown.Details(w, text.Plural(len(rows), "waived finding", "waived findings"), false, func(w io.Writer) error {
				return markdown.Table(w, markdownHeader, rows)
			})
		})
	}
	for _, wv := range r.Unmatched {
		ew.Printf("- waiver %s matched no finding (stale, or misspelt?)\n", markdown.Text(describeWaiver(wv)))
	}
	for _, wv := range r.NotWaived {
		ew.Printf("- waiver %s cannot waive %s's errors: clusterctl refuses a release with them\n", markdown.Text(describeWaiver(wv)), wv.Rule)
	}
	if len(r.Unmatched)+len(r.NotWaived) > 0 {
		ew.Printf("\n")
	}
	return ew.Err
}

var markdownHeader = []string{"rule", "file", "object", "field", "finding"}

// markdownRow is a finding's row: the rule linked to its section of the
// catalogue, the release file and where it comes from in the tree.
func markdownRow(f Finding, message string) []string {
	rule := f.Rule
	if r, ok := LookupRule(f.Rule); ok {
		rule = fmt.Sprintf("[%s](%s)", f.Rule, r.URL())
	}
	file := markdown.Code(f.File)
	if f.Source != "" {
		file += " (from " + markdown.Code(sourceOf(f)) + ")"
	}
	return []string{rule, file, markdown.Code(f.Object), markdown.Code(f.Field), markdown.Text(message)}
}
