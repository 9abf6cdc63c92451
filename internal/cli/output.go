package cli

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/internal/redact"
)

// Format is --output: how a command renders its report.
type Format string

// The formats of the reports.
const (
	Text        Format = "text"
	JSON        Format = "json"
	SARIF       Format = "sarif"
	Markdown    Format = "markdown"
	CodeQuality Format = "codequality"
)

func (f *Format) String() string { return string(*f) }
func (f *Format) Type() string   { return "string" }
func (f *Format) Set(v string) error {
	*f = Format(v)
	return nil
}

// Check says whether a command renders its report in f: text, JSON, or
// one of more.
func (f Format) Check(more ...Format) error {
	formats := append([]Format{Text, JSON}, more...)
	if slices.Contains(formats, f) {
		return nil
	}
	names := make([]string, len(formats))
	for i, x := range formats {
		names[i] = string(x)
	}
	return Usagef("--output must be %s or %s, not %q", strings.Join(names[:len(names)-1], ", "), names[len(names)-1], string(f))
}

// Report is what a command's report type renders: text for people, JSON,
// and Markdown for CI job summaries and pull-request comments; lint's and
// diff's render SARIF and GitLab Code Quality too.
type Report interface {
	WriteText(io.Writer) error
	WriteJSON(io.Writer) error
	WriteMarkdown(io.Writer) error
}

type sarifReport interface{ WriteSARIF(io.Writer) error }

type codeQualityReport interface{ WriteCodeQuality(io.Writer) error }

// Print prints rep in f: text on textOut, every other format on out.
func (f Format) Print(rep Report, out, textOut io.Writer) error {
	switch f {
	case JSON:
		return rep.WriteJSON(out)
	case Markdown:
		return rep.WriteMarkdown(out)
	case SARIF:
		r, ok := rep.(sarifReport)
		if !ok {
			return Usagef("--output sarif: this command's report has no SARIF form")
		}
		return r.WriteSARIF(out)
	case CodeQuality:
		r, ok := rep.(codeQualityReport)
		if !ok {
			return Usagef("--output codequality: this command's report has no Code Quality form")
		}
		return r.WriteCodeQuality(out)
	}
	return rep.WriteText(textOut)
}

// AppendMarkdown appends rep's Markdown, masked by secrets, to file (a CI
// job's summary page: GitHub Actions' GITHUB_STEP_SUMMARY); nothing when
// it renders none.
func AppendMarkdown(file string, rep Report, secrets *redact.Set) error {
	var b bytes.Buffer
	w := redact.NewWriter(&b, secrets)
	err := rep.WriteMarkdown(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil && b.Len() > 0 {
		err = fsafe.AppendFile(file, append(b.Bytes(), '\n'))
	}
	return err
}

// CountingWriter counts what was written through it, to tell whether a
// command printed anything.
type CountingWriter struct {
	W io.Writer
	N int64
}

func (c *CountingWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
