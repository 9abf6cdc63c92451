// Package markdown writes the pieces of GitHub-flavoured Markdown that
// capirepo's reports render into (a CI job summary, a pull-request comment,
// release notes): table cells and code spans that stay in their cell, tables,
// and <details> blocks that fold a long list. Every report that renders
// Markdown writes through it, so the escaping is decided once.
//
// It is not a report: what goes into a table is the business of the package
// whose report it is. Check is for tests: it says whether a document's
// tables, <details> blocks and code fences are well formed.
package markdown

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// cellEscaper escapes what would leave a table cell (|) or turn text into
// markup (emphasis, links, HTML, code spans, headings at a line start do not
// occur in a cell).
var cellEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", `\<`, ">", `\>`, "|", `\|`, "\r\n", " ", "\n", " ",
)

// Text escapes s for a table cell or a line of prose: rendered, it reads
// as s does.
func Text(s string) string { return cellEscaper.Replace(s) }

// Code is s as an inline code span that may sit in a table cell: a span
// holding a backtick is fenced with two, and a | is escaped, which GitHub's
// tables require even inside code. "" is "".
func Code(s string) string {
	if s == "" {
		return ""
	}
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "|", `\|`).Replace(s)
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}

// Table writes a table with the header and rows; each cell is written as
// given (escape it with Text or Code). A row with fewer cells than the
// header is filled with empty ones. A blank line follows, so what comes
// next is not read as a row.
func Table(w io.Writer, header []string, rows [][]string) error {
	var b strings.Builder
	row := func(cells []string) {
		b.WriteString("|")
		for i := range header {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	row(header)
	b.WriteString("|" + strings.Repeat("---|", len(header)) + "\n")
	for _, r := range rows {
		row(r)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Details writes body folded under summary in a <details> block (open: shown
// unfolded until the reader folds it). summary is plain text (HTML-escaped:
// the block is HTML, where Markdown's escapes do not apply). GitHub renders
// Markdown inside the block only after a blank line, which Details writes.
func Details(w io.Writer, summary string, open bool, body func(io.Writer) error) error {
	tag := "<details>"
	if open {
		tag = "<details open>"
	}
	if _, err := fmt.Fprintf(w, "%s\n<summary>%s</summary>\n\n", tag, html.EscapeString(summary)); err != nil {
		return err
	}
	if err := body(w); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n</details>\n\n")
	return err
}

// Fold writes body open when it holds at most limit items, else folded in a
// <details> block that says summary; open unfolds it at first.
func Fold(w io.Writer, items, limit int, summary string, open bool, body func(io.Writer) error) error {
	if items <= limit {
		return body(w)
	}
	return Details(w, summary, open, body)
}

// Writer writes a report's pieces until the first error, which it keeps:
// a renderer writes on, and returns Err once.
type Writer struct {
	W   io.Writer
	Err error
}

// Printf writes formatted text.
func (m *Writer) Printf(format string, args ...any) {
	if m.Err == nil {
		_, m.Err = fmt.Fprintf(m.W, format, args...)
	}
}

// Do runs a writer of a piece (Table, Details, a report's own).
func (m *Writer) Do(f func(io.Writer) error) {
	if m.Err == nil {
		m.Err = f(m.W)
	}
}
