package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/buildinfo"
	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/pipeline"
)

// devOptions are dev's flags, bound to what Dev builds.
type devOptions struct {
	pipeline.DevOptions
	// watch keeps the process running, building again on every change.
	watch     bool
	configOut configOut
}

// AddFlags binds the flags; w gets deprecation notices.
func (o *devOptions) AddFlags(cmd *cobra.Command, w io.Writer) {
	f := cmd.Flags()
	f.StringVar(&o.Dir, "dir", ".", "provider source tree (only read)")
	cli.DeprecatedFlag(w, f, "dir", "pass the provider tree as PATH")
	f.StringVar(&o.ConfigPath, "config", "", "capirepo.yaml or clusterctl-settings.json (default: looked up in PATH)")
	f.StringVar(&o.Root, "out", "", "dev repository folder to write (default: $XDG_CONFIG_HOME/cluster-api/dev-repository)")
	cli.DeprecatedAlias(w, f, "root", "out") // the name before every command wrote to --out
	f.StringVar(&o.Version, "version", "", "version to build for every provider (default: its nextVersion, else <newest metadata series>.99)")
	f.StringVar(&o.Image, "image", "", "repository of the manager image, tagged with the dev version (default: keep the image the kustomization names)")
	f.BoolVar(&o.AllowRemote, "allow-remote", false, "allow kustomizations to pull remote bases (git or http URLs); rendered on every run")
	f.BoolVar(&o.watch, "watch", false, "keep running: build and write the dev repository again each time a file of the tree changes, until interrupted")
	bindLockTimeout(cmd, &o.LockTimeout)
	o.configOut.AddFlags(cmd, "write the clusterctl config to this file too (atomically; with --watch only when it changed), for the clusterctl init line printed")
}

func newDevCmd(s streams, g *globalOptions) *cobra.Command {
	o := &devOptions{}
	cmd := &cobra.Command{
		Use:   "dev [PATH]",
		Short: "Build the providers with their next version into a local dev repository for clusterctl",
		Long: `Builds every provider of the tree PATH (default: the current folder) that
the configuration names with its nextVersion, writes them into the dev
repository (--out) with a clusterctl config.yaml pointing at them
(and an overrides folder beside), and prints the clusterctl init line that
installs them. It replaces cluster-api's create-local-repository.py and reads
the same clusterctl-settings.json: providers and provider_repos pull in other
provider trees. Dev versions are overwritten in place; a provider whose source
tree did not change since the last run is not rendered again.

With --watch it keeps running: it polls the trees (every 20 ms, less often
for a large tree) and builds and writes again each time a file changes,
printing the same summary after every run, until interrupted (Ctrl-C or
SIGTERM). A failed run is reported and the dev repository keeps the last
good build.

--config-out FILE writes the clusterctl config to FILE as well (atomically,
and with --watch only when it changed), and the init line names FILE.`,
		Example: `  # In a provider tree: build it, then install it into a kind cluster
  capirepo dev
  clusterctl init --infrastructure example:v1.4.99 --config ~/.config/cluster-api/dev-repository/config.yaml

  # Keep the dev repository up to date while you edit
  capirepo dev --watch

  # In a cluster-api checkout whose clusterctl-settings.json names other providers
  capirepo dev --config clusterctl-settings.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.Arg(cmd, args, "dir", "PATH", "the tree", &o.Dir); err != nil {
				return err
			}
			for _, err := range []error{pipeline.CheckFolder(cli.ArgName(cmd, "dir", "PATH"), o.Dir), pipeline.CheckConfigFile("--config", o.ConfigPath),
				o.Validate(cmd.Context()), o.configOut.check()} {
				if err != nil {
					return err
				}
			}
			o.Env, o.BuildID, o.Progress, o.ConfigOut = s.clusterctlEnv(), buildinfo.Read(version).ID(), s.errOut, string(o.configOut)
			if !o.watch {
				res, err := pipeline.Dev(cmd.Context(), o.DevOptions)
				if err != nil {
					return err
				}
				return printOutcome(s, g, res, nil)
			}
			fmt.Fprintf(s.errOut, "watching %s (stop with Ctrl-C)\n", o.Dir)
			return pipeline.DevWatch(cmd.Context(), o.DevOptions, pipeline.DevWatchOptions{
				OnRun: func(res *pipeline.DevResult, err error) {
					if err != nil {
						fmt.Fprintf(s.errOut, "error: %v\nwaiting for the next change\n", err)
						return
					}
					if err := printOutcome(s, g, res, nil); err != nil {
						fmt.Fprintf(s.errOut, "error: %v\n", err)
					}
				},
			})
		},
	}
	o.AddFlags(cmd, s.errOut)
	return cmd
}
