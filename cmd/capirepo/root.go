package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/pipeline"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// env reads the environment; only cmd/ does, and tests inject it.
type env func(string) string

// streams are the writers and environment a command is given.
type streams struct {
	out    io.Writer // results (--output json goes here)
	errOut io.Writer // progress and findings
	getenv env
	// secrets are masked in out and errOut; add any secret learnt later.
	secrets *redact.Set
}

// usageError marks an error as the caller's: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// globalOptions are flags every command has.
type globalOptions struct {
	output string
}

func (g *globalOptions) validate(sarif bool) error {
	switch {
	case g.output == "text", g.output == "json", g.output == "sarif" && sarif:
		return nil
	case sarif:
		return usagef("--output must be text, json or sarif, not %q", g.output)
	}
	return usagef("--output must be text or json, not %q", g.output)
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newRootCmd(s streams) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:           "capirepo",
		Short:         "Build, check and publish a Cluster API provider repository for clusterctl",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return g.validate(cmd.Name() == "lint")
		},
	}
	root.SetOut(s.out)
	root.SetErr(s.errOut)
	root.PersistentFlags().StringVarP(&g.output, "output", "o", "text", "output format: text or json (lint: also sarif); json and sarif are printed on stdout")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		newVersionCmd(s, g),
		newBuildCmd(s, g),
		newLintCmd(s, g),
		newVerifyCmd(s, g),
		newPublishCmd(s, g),
		newReleaseCmd(s, g),
		newDevCmd(s, g),
	)
	return root
}

// run executes the command line and returns the exit code.
func run(ctx context.Context, args []string, out, errOut io.Writer, getenv env) int {
	// Every byte printed goes through the run's secrets mask (secrets.go).
	p := protect(args, out, errOut, getenv)
	defer p.flush()
	s := streams{out: p.out, errOut: p.errOut, getenv: p.getenv, secrets: p.secrets}
	root := newRootCmd(s)
	root.SetArgs(args)
	err := root.ExecuteContext(redact.NewContext(ctx, p.secrets))
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(s.errOut, "Error: %v\n", err)
	var ue usageError
	var mismatch *pipeline.ManagerMismatchError
	if errors.As(err, &ue) || errors.As(err, &mismatch) || errors.Is(err, builder.ErrNoVersion) || isCobraUsage(err) {
		return exitUsage
	}
	return exitFailure
}

// isCobraUsage recognises cobra's own argument errors (unknown command,
// wrong number of args), which it returns as plain errors.
func isCobraUsage(err error) bool {
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand"} {
		if strings.Contains(err.Error(), p) {
			return true
		}
	}
	return false
}
