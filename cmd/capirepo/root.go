package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/pipeline"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// streams are the writers and environment a command is given.
type streams struct {
	out    io.Writer // results (--output json goes here)
	errOut io.Writer // progress and findings
	getenv env
	// secrets are masked in out and errOut; add any secret learnt later.
	secrets *redact.Set
}

// globalOptions are flags every command has.
type globalOptions struct {
	output cli.Format
}

func newRootCmd(s streams) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "capirepo",
		Short: "Build, check and publish a Cluster API provider repository for clusterctl",
		Long: `capirepo turns a Cluster API provider's source tree into the provider
repository clusterctl installs from, checks it against the clusterctl and
provider contracts, and publishes it.

What a command reads is its argument: PATH, a provider source tree (build,
release, dev, and lint, which also takes a dist folder or one file; default:
the current folder); DIST, a built release folder (publish; default: dist);
DIR, a dist folder or repository tree (verify). What it writes on disk is
--out (build and release: the dist folder; dev: the dev repository; publish
local: the repository tree; publish configmap: a file). Remote targets are
URLs: release --publish, mirror --to.

Results go to stdout, progress and findings to stderr (on a terminal, with
a progress bar per upload); --output json prints a JSON document on stdout,
also when the command fails. lint, diff, verify and release render their
report in more formats (--output markdown; lint and diff also sarif and
codequality, GitLab's Code Quality report) and, when GITHUB_STEP_SUMMARY is
set (GitHub Actions), append it as Markdown to the job's summary. Exit
codes: 0 ok, 1 failure, 2 usage error.`,
		Example: `  capirepo build --version v1.4.0 && capirepo verify dist
  capirepo release --version v1.4.0 --publish github://my-org/cluster-api-provider-example`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.output.Check(reportFormats[cmd.Name()]...); err != nil {
				return err
			}
			// What the steps say names this command's flags.
			cmd.SetContext(option.WithWords(cmd.Context(), cli.Words(cmd)))
			return cli.CheckWaits(cmd)
		},
	}
	root.SetOut(s.out)
	root.SetErr(s.errOut)
	g.output = cli.Text
	root.PersistentFlags().VarP(&g.output, "output", "o", outputHelp)
	root.SetFlagErrorFunc(cli.FlagError)
	root.AddCommand(
		newVersionCmd(s, g),
		newBuildCmd(s, g),
		newLintCmd(s, g),
		newVerifyCmd(s, g),
		newPublishCmd(s, g),
		newReleaseCmd(s, g),
		newDevCmd(s, g),
		newMirrorCmd(s, g),
		newDiffCmd(s, g),
		newSignCmd(s, g),
	)
	root.SetHelpCommand(cli.NewHelpCmd("  capirepo help publish github"))
	cli.CheckUsage(root)
	return root
}

// run executes the command line and returns the exit code. A failed
// command asked for -o json that printed nothing on stdout prints a
// failure document there, so a script always gets JSON.
func run(ctx context.Context, args []string, out, errOut io.Writer, getenv env) int {
	// Every byte printed goes through the run's secrets mask (env.go).
	p := protect(args, out, errOut, getenv)
	defer p.flush()
	stdout := &cli.CountingWriter{W: p.out}
	s := streams{out: stdout, errOut: p.errOut, getenv: p.getenv, secrets: p.secrets}
	root := newRootCmd(s)
	root.SetArgs(args)
	err := root.ExecuteContext(redact.NewContext(ctx, p.secrets))
	if err == nil && ctx.Err() != nil {
		// Stopping begins at the next step; a run whose every step was done
		// by then finished whole, and says so instead of leaving the user to
		// wonder what "stopping" cut short.
		fmt.Fprintf(s.errOut, "capirepo: %v after the run had done its work: it finished, nothing was cut short\n", context.Cause(ctx))
	}
	code := exitCode(err)
	if err != nil {
		fmt.Fprintf(s.errOut, "Error: %v\n", err)
		if f := root.PersistentFlags().Lookup("output"); f != nil && f.Value.String() == "json" && stdout.N == 0 {
			_ = pipeline.NewFailure(err, code).WriteJSON(p.out)
		}
	}
	return code
}
