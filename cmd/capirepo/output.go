package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

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
	return usagef("--output must be %s or %s, not %q", strings.Join(names[:len(names)-1], ", "), names[len(names)-1], string(f))
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
			return usagef("--output sarif: this command's report has no SARIF form")
		}
		err = r.WriteSARIF(s.out)
	case outputCodeQuality:
		r, ok := rep.(codeQualityReport)
		if !ok {
			return usagef("--output codequality: this command's report has no Code Quality form")
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
	err := rep.WriteMarkdown(&b)
	if err == nil && b.Len() > 0 {
		err = appendFile(file, s.secrets, b.Bytes())
	}
	if err != nil {
		fmt.Fprintf(s.errOut, "warning: the job summary (GITHUB_STEP_SUMMARY %s) was not written: %v\n", file, err)
	}
}

// appendFile appends data to file in one write, creating it; a file that is
// there and no regular file (a FIFO that would block, a device) is refused
// before it is opened.
func appendFile(file string, secrets *redact.Set, data []byte) error {
	if fi, err := os.Stat(file); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is no regular file (%s)", file, fi.Mode().Type())
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	var masked bytes.Buffer
	w := redact.NewWriter(&masked, secrets)
	_, err = w.Write(append(data, '\n'))
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		_, err = f.Write(masked.Bytes())
	}
	return errors.Join(err, f.Close())
}
