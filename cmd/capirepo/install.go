package main

import (
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/targets"
)

// installFlags are the install check's flags, the same on verify
// (--install) and release (--install-check).
type installFlags struct {
	name string // the flag that turns the check on
	on   bool
	// rehearse, when set, shares --kubeconfig, --clusterctl-config, --var
	// and --values with the check.
	rehearse         *rehearseFlags
	kubeconfig       string
	dryRunOnly       bool
	force            bool
	clusterctlConfig string
	vars             []string // NAME=VALUE
	values           []string // [FLAVOR=]FILE
	// readBack says the command's read-back takes --var and --values too
	// (verify), not only the check.
	readBack bool
}

func (f *installFlags) bind(cmd *cobra.Command, name, usage string) {
	f.name = name
	fl := cmd.Flags()
	fl.BoolVar(&f.on, name, false, usage)
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the API server for --"+f.users("and")+
		" (its current context): a scratch cluster such as kind, where CRDs and namespaces are created for real and removed at the end")
	fl.BoolVar(&f.dryRunOnly, "dry-run-only", false, "--"+name+" creates nothing and sends every object with dryRun=All; objects of the release's own kinds are then not checked")
	fl.BoolVar(&f.force, "force", false, "--"+name+" on a cluster that already has the release's CRDs: replace them for the check and put them back after")
	fl.StringVar(&f.clusterctlConfig, "clusterctl-config", "", "clusterctl config whose cert-manager: names the cert-manager --"+f.users("and")+
		" "+f.verb("takes", "take")+" CRDs from, and whose variables (as the environment's) are real values for the templates (default clusterctl's own)")
	what := "the templates --" + f.users("and") + " " + f.verb("applies", "apply")
	if f.readBack {
		what = "the templates, read back and, with --" + f.users("or") + ", applied"
	}
	fl.StringArrayVar(&f.vars, "var", nil, "NAME=VALUE: a real value for a variable of "+what+" (repeatable; wins over the environment and --values)")
	fl.StringArrayVar(&f.values, "values", nil, "[FLAVOR=]FILE: a YAML map of variable names to real values, for every flavor or for one (default=FILE for cluster-template.yaml); repeatable")
}

// users names the flags that use the shared flags: install, or install
// and (or or) upgrade-from.
func (f *installFlags) users(conjunction string) string {
	if f.rehearse == nil {
		return f.name
	}
	return f.name + " " + conjunction + " --" + f.rehearse.name
}

// verb is one or other, as users() names one flag or two.
func (f *installFlags) verb(one, other string) string {
	if f.rehearse == nil {
		return one
	}
	return other
}

// validate checks the flags go together: --kubeconfig and
// --clusterctl-config serve the check and the rehearsal, --var and --values
// also the read-back (readBack), --dry-run-only and --force only the check.
func (f *installFlags) validate() error {
	for _, v := range f.vars {
		if name, _, ok := strings.Cut(v, "="); !ok || name == "" {
			return usagef("--var %q: give NAME=VALUE", v)
		}
	}
	if !f.on {
		if f.dryRunOnly || f.force {
			return usagef("--dry-run-only and --force belong to --%s", f.name)
		}
		if f.rehearse == nil || !f.rehearse.enabled() {
			if f.kubeconfig != "" || f.clusterctlConfig != "" {
				return usagef("--kubeconfig and --clusterctl-config belong to --%s", f.users("and"))
			}
			if !f.readBack && (len(f.vars) > 0 || len(f.values) > 0) {
				return usagef("--var and --values belong to --%s", f.users("and"))
			}
			return nil
		}
	}
	if f.kubeconfig == "" && f.on {
		return usagef("--%s needs --kubeconfig FILE: the API server to apply the release to (a scratch cluster such as kind, or any cluster with --dry-run-only)", f.name)
	}
	if f.kubeconfig == "" {
		return usagef("--%s needs --kubeconfig FILE: a scratch cluster (kind create cluster) where clusterctl installs and upgrades the providers for real", f.rehearse.name)
	}
	if f.dryRunOnly && f.force {
		return usagef("--force replaces CRDs for the check; --dry-run-only creates nothing: give one of them")
	}
	if _, err := os.Stat(f.kubeconfig); err != nil {
		return usagef("--kubeconfig %v", err)
	}
	return nil
}

// options are the check's options; nil when it is off. Cert-manager's
// release is read with the environment's GitHub settings and tokens.
func (f *installFlags) options(s streams, githubAPI string, timeout time.Duration) *pipeline.InstallCheckOptions {
	if !f.on {
		return nil
	}
	o := f.shared(s, githubAPI, timeout)
	return &o
}

// shared are the options the check shares with the upgrade rehearsal.
func (f *installFlags) shared(s streams, githubAPI string, timeout time.Duration) pipeline.InstallCheckOptions {
	return pipeline.InstallCheckOptions{
		Kubeconfig: f.kubeconfig, DryRunOnly: f.dryRunOnly, Force: f.force, ClusterctlConfig: f.clusterctlConfig, Core: f.rehearse.coreSide(),
		Sources:     targets.Options{Getenv: s.getenv, HTTPClient: httpClient(s, timeout), GitHub: github.Options{APIURL: gitHubAPI(s, githubAPI)}},
		Variables:   f.variables(s.getenv),
		ValuesFiles: f.values,
		Log:         s.errOut,
	}
}

// variables are the tokens' variables and --var's, which win.
func (f *installFlags) variables(getenv env) map[string]string {
	vars := tokenVariables(getenv)
	if vars == nil {
		vars = map[string]string{}
	}
	for _, v := range f.vars {
		name, value, _ := strings.Cut(v, "=")
		vars[name] = value
	}
	return vars
}
