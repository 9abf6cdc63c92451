package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/localrepo"
	"github.com/capirepo/capirepo/publish"
)

type publishLocalOptions struct {
	fromOptions
	root             string
	replace          bool
	overrides        bool
	clusterctlConfig string
	lockTimeout      time.Duration
}

func (o *publishLocalOptions) validate() error {
	switch {
	case o.overrides && o.root != "":
		return usagef("--root and --overrides choose the folder both: pass one")
	case !o.overrides && o.root == "":
		return usagef("pass --root DIR (the repository tree) or --overrides (clusterctl's overrides folder)")
	case o.clusterctlConfig != "" && !o.overrides:
		return usagef("--clusterctl-config only says where --overrides writes")
	}
	return nil
}

// env returns what clusterctl reads from the process to find its folders.
func (s streams) clusterctlEnv() localrepo.Env {
	return localrepo.Env{XDGConfigHome: s.getenv("XDG_CONFIG_HOME"), Home: s.getenv("HOME"), Getenv: s.getenv}
}

func newPublishLocalCmd(s streams, g *globalOptions) *cobra.Command {
	o := &publishLocalOptions{}
	cmd := &cobra.Command{
		Use:   "local --root DIR | --overrides",
		Short: "Copy a built release into a local repository tree or clusterctl's overrides folder",
		Long: `Copies every provider of a built release into DIR/<label>/<version>/, the
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
Files there replace the same provider version's files from any URL.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if err := checkWaits(map[string]time.Duration{"lock-timeout": o.lockTimeout}); err != nil {
				return err
			}
			root, target := o.root, "local"
			if o.overrides {
				folder, source, err := localrepo.OverridesFolder(s.clusterctlEnv(), o.clusterctlConfig)
				if err != nil {
					return err
				}
				root, target = folder, "overrides"
				fmt.Fprintf(s.errOut, "clusterctl overrides folder: %s (from %s)\n", folder, source)
			}
			rel, err := o.load()
			if err != nil {
				return err
			}
			sum, err := (&localrepo.Publisher{Root: root, Replace: o.replace, Target: target,
				LockTimeout: o.lockTimeout, Progress: s.errOut}).Publish(cmd.Context(), rel)
			if err != nil {
				return err
			}
			return printLocalSummary(s, g, sum, o.overrides)
		},
	}
	o.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.root, "root", "", "repository tree to write: DIR/<label>/<version>/")
	f.BoolVar(&o.replace, "replace", false, "overwrite a version folder that holds different files")
	f.BoolVar(&o.overrides, "overrides", false, "write into clusterctl's overrides folder instead of --root")
	f.StringVar(&o.clusterctlConfig, "clusterctl-config", "", "clusterctl config whose overridesFolder --overrides uses")
	bindLockTimeout(cmd, &o.lockTimeout)
	return cmd
}

func printLocalSummary(s streams, g *globalOptions, sum *publish.Summary, overrides bool) error {
	if g.output == "json" {
		return printJSON(s.out, sum)
	}
	if err := sum.WriteText(s.errOut); err != nil {
		return err
	}
	if len(sum.Uploaded)+len(sum.Replaced) == 0 {
		fmt.Fprintf(s.errOut, "nothing to do: %s already holds %s with identical files\n", sum.URL, sum.Version)
	}
	if overrides {
		fmt.Fprintf(s.out, "# clusterctl now reads these files for %s of the providers below, whatever their URL\n", sum.Version)
	} else {
		fmt.Fprintf(s.out, "# clusterctl config entries (add to clusterctl.yaml, or pass it with --config):\n")
	}
	data, err := localrepo.ClusterctlConfig{Providers: localrepo.ConfigFor(sum.Providers)}.YAML()
	if err != nil {
		return err
	}
	_, err = s.out.Write(data)
	return err
}
