package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/local"
	"github.com/capirepo/capirepo/publish/targets"
)

type publishLocalOptions struct {
	fromOptions
	root             string
	replace          bool
	overrides        bool
	clusterctlConfig string
	lockTimeout      time.Duration
	configOut        configOut
}

func (o *publishLocalOptions) validate() error {
	switch {
	case o.overrides && o.root != "":
		return usagef("--out and --overrides choose the folder both: pass one")
	case !o.overrides && o.root == "":
		return usagef("pass --out DIR (the repository tree to write) or --overrides (clusterctl's overrides folder)")
	case o.clusterctlConfig != "" && !o.overrides:
		return usagef("--clusterctl-config only says where --overrides writes")
	case o.configOut != "" && o.overrides:
		return usagef("--config-out writes a providers: entry, and --overrides has none: clusterctl finds each provider by its usual URL and reads the overrides folder's files instead; use your clusterctl config (--clusterctl-config) as it is")
	}
	return o.configOut.check()
}

// env returns what clusterctl reads from the process to find its folders.
func (s streams) clusterctlEnv() local.Env {
	return local.Env{XDGConfigHome: s.getenv("XDG_CONFIG_HOME"), Home: s.getenv("HOME"), Getenv: s.getenv}
}

func newPublishLocalCmd(s streams, g *globalOptions) *cobra.Command {
	o := &publishLocalOptions{}
	cmd := &cobra.Command{
		Use:   "local (--out DIR | --overrides) [DIST]",
		Short: "Copy a built release into a local repository tree or clusterctl's overrides folder",
		Long: `Copies every provider of the built release DIST (default dist) into
--out DIR, as DIR/<label>/<version>/, the
layout clusterctl reads through a file:// provider URL. Several versions live
side by side; each version folder is staged beside its target and renamed into
place, so clusterctl never sees half a folder. A version already there with
the same files is left alone; with different files it is an error unless
--replace.

--overrides writes into clusterctl's overrides folder instead, found as
clusterctl finds it: OVERRIDESFOLDER or overridesFolder in the clusterctl
config (--clusterctl-config, else clusterctl.yaml in $XDG_CONFIG_HOME/cluster-api
or ~/.cluster-api), else $XDG_CONFIG_HOME/cluster-api/overrides (~/.config when
XDG_CONFIG_HOME is unset), or ~/.cluster-api/overrides when only that exists.
Files there replace the same provider version's files from any URL.

The clusterctl config that reads --out goes to stdout, or with --config-out
FILE to FILE (atomically); the clusterctl init line that tries the version
follows on stderr, under next:.`,
		Example: `  # A repository tree clusterctl reads through file:// URLs, its clusterctl config in a file
  capirepo publish local --out /srv/capi-repo --config-out clusterctl.yaml
  clusterctl init --infrastructure example:v1.4.0 --config clusterctl.yaml

  # Try a build of a released version in place of its released files
  capirepo publish local --overrides --replace
  clusterctl init --infrastructure example:v1.4.0`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.fromArg(cmd, args); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			root := o.root
			if o.overrides {
				folder, source, err := local.OverridesFolder(s.clusterctlEnv(), o.clusterctlConfig)
				if err != nil {
					return err
				}
				root = folder
				fmt.Fprintf(s.errOut, "clusterctl overrides folder: %s (from %s)\n", folder, source)
			}
			return runPublish(cmd.Context(), s, g, pipeline.PublishOptions{Target: "file://" + root, Load: o.load, ConfigOut: string(o.configOut),
				TargetOptions: targets.Options{Replace: o.replace, LockTimeout: o.lockTimeout, Overrides: o.overrides}},
				publishOut{configHeader: "# clusterctl config entries (add to clusterctl.yaml, or pass it with --config):\n", clusterctlConfig: o.clusterctlConfig})
		},
	}
	o.bind(cmd, s.errOut)
	f := cmd.Flags()
	f.StringVar(&o.root, "out", "", "repository tree to write: DIR/<label>/<version>/")
	deprecatedAlias(s.errOut, f, "root", "out") // the name before every command wrote to --out
	f.BoolVar(&o.replace, "replace", false, "overwrite a version folder that holds different files")
	f.BoolVar(&o.overrides, "overrides", false, "write into clusterctl's overrides folder instead of --out")
	f.StringVar(&o.clusterctlConfig, "clusterctl-config", "", "clusterctl config whose overridesFolder --overrides uses")
	o.configOut.bind(cmd, configOutUsage+" (not with --overrides)")
	bindLockTimeout(cmd, &o.lockTimeout)
	return cmd
}

// printOverrides explains what the overrides folder does, since a
// providers: entry pointing into it would be wrong: clusterctl still finds
// the provider by its usual URL (built in or in clusterctl.yaml) and lists
// its versions there; for a version it has overrides of, it reads these
// files instead. The clusterctl init line that uses them goes to stdout.
func printOverrides(s streams, sum *publish.Summary, clusterctlConfig string) error {
	var inits []publish.InitVersion
	for _, p := range sum.Providers {
		inits = append(inits, publish.InitVersion{ID: provider.ID{Name: p.Name, Type: provider.Type(p.Type)}, Version: sum.Version})
	}
	fmt.Fprintf(s.errOut, `clusterctl now reads these files instead of the provider repository's for %[1]s,
whatever URL the provider has: it still finds each provider by its usual URL
(built into clusterctl, or in the providers: list of clusterctl.yaml) and
lists the versions there, so ask for %[1]s explicitly. Remove
%[2]s/<label>/%[1]s to go back to the repository's files.
`, sum.Version, strings.TrimPrefix(sum.URL, "file://"))
	line := publish.InitCommand(inits, clusterctlConfig)
	if clusterctlConfig == "" {
		line = strings.TrimSuffix(line, " --config ''") // clusterctl's own config
	}
	_, err := fmt.Fprintln(s.out, line)
	return err
}
