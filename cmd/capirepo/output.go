package main

import (
	"fmt"
	"io"

	"github.com/capirepo/capirepo/internal/cli"
)

// reportFormats are the formats a command's report renders in besides text
// and JSON, by command: each is a renderer of the command's one report type.
var reportFormats = map[string][]cli.Format{
	"lint":    {cli.SARIF, cli.Markdown, cli.CodeQuality},
	"diff":    {cli.SARIF, cli.Markdown, cli.CodeQuality},
	"verify":  {cli.Markdown},
	"release": {cli.Markdown},
}

// outputHelp is --output's help text.
const outputHelp = "output format: text or json; lint and diff: also sarif, markdown and codequality (GitLab Code Quality); verify and release: also markdown; all but text are printed on stdout"

// printReport prints rep in the --output format, text on textOut and every
// other format on stdout, then appends its Markdown to the job summary
// (stepSummary). It is the one place a command's report meets --output.
func printReport(s streams, g *globalOptions, rep cli.Report, textOut io.Writer) error {
	err := g.output.Print(rep, s.out, textOut)
	stepSummary(s, rep)
	return err
}

// stepSummary appends rep's Markdown to the file GitHub Actions names in
// GITHUB_STEP_SUMMARY (the job's summary page), masked as every output is.
// A summary that cannot be written is a warning: the command's own work is
// done, and its result stands.
func stepSummary(s streams, rep cli.Report) {
	file := s.getenv("GITHUB_STEP_SUMMARY")
	if file == "" {
		return
	}
	if err := cli.AppendMarkdown(file, rep, s.secrets); err != nil {
		fmt.Fprintf(s.errOut, "warning: the job summary (GITHUB_STEP_SUMMARY %s) was not written: %v\n", file, err)
	}
}

// printResult prints a command's result on stdout: JSON with -o json, else
// text (build's files, sign's signatures).
func printResult(s streams, g *globalOptions, rep interface {
	WriteText(io.Writer)
	WriteJSON(io.Writer) error
}) error {
	if g.output == cli.JSON {
		return rep.WriteJSON(s.out)
	}
	rep.WriteText(s.out)
	return nil
}

// printOutcome prints what a run that ended with err did (publish, mirror,
// dev, publish configmap): JSON with -o json, else text, each saying on
// stderr what it says beside its result; err comes first.
func printOutcome(s streams, g *globalOptions, rep interface {
	WriteText(out, errOut io.Writer) error
	WriteJSON(out, errOut io.Writer) error
}, err error) error {
	write := rep.WriteText
	if g.output == cli.JSON {
		write = rep.WriteJSON
	}
	if werr := write(s.out, s.errOut); err == nil {
		err = werr
	}
	return err
}
