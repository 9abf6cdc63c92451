package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/pipeline"
)

type publishLocalOptions struct {
	dist             distOptions
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
		return cli.Usagef("--out and --overrides choose the folder both: pass one")
	case !o.overrides && o.root == "":
		return cli.Usagef("pass --out DIR (the repository tree to write) or --overrides (clusterctl's overrides folder)")
	case o.clusterctlConfig != "" && !o.overrides:
		return cli.Usagef("--clusterctl-config only says where --overrides writes")
	case o.configOut != "" && o.overrides:
		return cli.Usagef("--config-out writes a providers: entry, and --overrides has none: clusterctl finds each provider by its usual URL and reads the overrides folder's files instead; use your clusterctl config (--clusterctl-config) as it is")
	}
	return o.configOut.check()
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
			if err := o.dist.arg(cmd, args); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			to, err := (&targetOptions{}).Options(s)
			if err != nil {
				return err
			}
			to.Replace, to.LockTimeout = o.replace, o.lockTimeout
			return runPublish(cmd.Context(), s, g, pipeline.PublishOptions{Target: "file://" + o.root, TargetOptions: to,
				Overrides: o.overrides, Env: s.clusterctlEnv(), ClusterctlConfig: o.clusterctlConfig,
				Dist: o.dist.dir, DistName: o.dist.what, Version: o.dist.version, ConfigOut: string(o.configOut),
				ConfigHeader: "# clusterctl config entries (add to clusterctl.yaml, or pass it with --config):\n"})
		},
	}
	o.dist.AddFlags(cmd, s.errOut, "version to publish when DIST holds several")
	f := cmd.Flags()
	f.StringVar(&o.root, "out", "", "repository tree to write: DIR/<label>/<version>/")
	cli.DeprecatedAlias(s.errOut, f, "root", "out") // the name before every command wrote to --out
	f.BoolVar(&o.replace, "replace", false, "overwrite a version folder that holds different files")
	f.BoolVar(&o.overrides, "overrides", false, "write into clusterctl's overrides folder instead of --out")
	f.StringVar(&o.clusterctlConfig, "clusterctl-config", "", "clusterctl config whose overridesFolder --overrides uses")
	o.configOut.AddFlags(cmd, configOutUsage+" (not with --overrides)")
	bindLockTimeout(cmd, &o.lockTimeout)
	return cmd
}
