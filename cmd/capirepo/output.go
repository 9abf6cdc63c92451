package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/internal/redact"
)

// outputFormat is --output: how a command renders its report.
type outputFormat string

const (
	outputText        outputFormat = "text"
	outputJSON        outputFormat = "json"
	outputSARIF       outputFormat = "sarif"
	outputMarkdown    outputFormat = "markdown"
	outputCodeQuality outputFormat = "codequality"
)

// reportFormats are the formats a command's report renders in besides text
// and JSON, by command: each is a renderer of the command's one report type.
var reportFormats = map[string][]outputFormat{
	"lint":    {outputSARIF, outputMarkdown, outputCodeQuality},
	"diff":    {outputSARIF, outputMarkdown, outputCodeQuality},
	"verify":  {outputMarkdown},
	"release": {outputMarkdown},
}

// outputHelp is --output's help text.
const outputHelp = "output format: text or json; lint and diff: also sarif, markdown and codequality (GitLab Code Quality); verify and release: also markdown; all but text are printed on stdout"

func (f *outputFormat) String() string { return string(*f) }
func (f *outputFormat) Type() string   { return "string" }
func (f *outputFormat) Set(v string) error {
	*f = outputFormat(v)
	return nil
}

// check says whether the command renders its report in the format.
func (f outputFormat) check(command string) error {
	formats := append([]outputFormat{outputText, outputJSON}, reportFormats[command]...)
	if slices.Contains(formats, f) {
		return nil
	}
	names := make([]string, len(formats))
	for i, x := range formats {
		names[i] = string(x)
	}
	return cli.Usagef("--output must be %s or %s, not %q", strings.Join(names[:len(names)-1], ", "), names[len(names)-1], string(f))
}

// report is what a command's report type renders: text for people, JSON,
// and Markdown for CI job summaries and pull-request comments; lint's and
// diff's render SARIF and GitLab Code Quality too.
type report interface {
	WriteText(io.Writer) error
	WriteJSON(io.Writer) error
	WriteMarkdown(io.Writer) error
}

type sarifReport interface{ WriteSARIF(io.Writer) error }

type codeQualityReport interface{ WriteCodeQuality(io.Writer) error }

// printReport prints rep in the --output format, text on textOut and every
// other format on stdout, then appends its Markdown to the job summary
// (stepSummary). It is the one place a command's report meets --output.
func printReport(s streams, g *globalOptions, rep report, textOut io.Writer) error {
	var err error
	switch g.output {
	case outputJSON:
		err = rep.WriteJSON(s.out)
	case outputMarkdown:
		err = rep.WriteMarkdown(s.out)
	case outputSARIF:
		r, ok := rep.(sarifReport)
		if !ok {
			return cli.Usagef("--output sarif: this command's report has no SARIF form")
		}
		err = r.WriteSARIF(s.out)
	case outputCodeQuality:
		r, ok := rep.(codeQualityReport)
		if !ok {
			return cli.Usagef("--output codequality: this command's report has no Code Quality form")
		}
		err = r.WriteCodeQuality(s.out)
	default:
		err = rep.WriteText(textOut)
	}
	stepSummary(s, rep)
	return err
}

// stepSummary appends rep's Markdown to the file GitHub Actions names in
// GITHUB_STEP_SUMMARY (the job's summary page), masked as every output is.
// A summary that cannot be written is a warning: the command's own work is
// done, and its result stands.
func stepSummary(s streams, rep report) {
	file := s.getenv("GITHUB_STEP_SUMMARY")
	if file == "" {
		return
	}
	var b bytes.Buffer
	w := redact.NewWriter(&b, s.secrets)
	err := rep.WriteMarkdown(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil && b.Len() > 0 {
		err = fsafe.AppendFile(file, append(b.Bytes(), '\n'))
	}
	if err != nil {
		fmt.Fprintf(s.errOut, "warning: the job summary (GITHUB_STEP_SUMMARY %s) was not written: %v\n", file, err)
	}
}
