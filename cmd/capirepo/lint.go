package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/pipeline"
)

// lintOptions are lint's flags, bound to what LintPath checks.
type lintOptions struct {
	pipeline.LintPathOptions
	disable []string
	read    readOptions
}

func newLintCmd(s streams, g *globalOptions) *cobra.Command {
	o := &lintOptions{}
	cmd := &cobra.Command{
		Use:   "lint [PATH]",
		Short: "Check a source tree, a dist folder or one components/template file against the provider contracts",
		Long: `Checks rendered release assets against the clusterctl contract and the
infrastructure provider contracts. PATH is a provider source tree (rendered
first, as build does; without --version, the nextVersion or newest release
series of metadata.yaml), any folder of release assets (a <label>/<version>/
tree such as a dist folder or a clusterctl overrides folder, one version
folder, a GitHub release download or a kustomize + cp out/ folder; no
checksums.txt needed), or a single components, metadata, cluster-template or
clusterclass file. capirepo.yaml's waivers apply (--config, or the tree's).
Rules are listed in docs/lint-rules.md. Exit 1 when an error-level finding
remains.

Findings print as text on stderr, or on stdout with -o json, sarif (GitHub
code scanning), codequality (GitLab's Code Quality report, whose
fingerprints stay the same from version to version) or markdown (errors
first, long lists folded); under GitHub Actions the Markdown also goes to
the job summary.

--against OLD also checks what breaks when a management cluster upgrades
from release OLD to this one (capirepo diff's rules, in the same report): OLD
is a folder or a published release (github://, gitlab://, oci://, file://,
with @VERSION; without, the release there before this one).`,
		Example: `  # The source tree in the current folder, rendered as build would
  capirepo lint

  # A built dist folder, as SARIF for GitHub code scanning
  capirepo lint dist --version v1.4.0 -o sarif > lint.sarif

  # As GitLab's Code Quality report, for the merge request widget
  capirepo lint -o codequality > gl-code-quality-report.json

  # The tree, and the upgrade from the release published before it
  capirepo lint --version v1.5.0 --against github://my-org/cluster-api-provider-example

  # One file, with a rule waived for this run
  capirepo lint infrastructure-components.yaml --version v1.4.0 --disable CAPI313="listed under our own category"`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Path = "."
			if len(args) == 1 {
				o.Path = args[0]
			}
			if _, err := os.Stat(o.Path); err != nil {
				return cli.Usagef("lint %s: no such file or folder", o.Path)
			}
			if err := pipeline.CheckConfigFile("--config", o.Config); err != nil {
				return err
			}
			var err error
			if o.Disabled, err = pipeline.ParseWaivers(o.disable); err != nil {
				return err
			}
			o.WorkDir, o.Targets, o.Log = ".", o.read.Options(s), s.errOut
			rep, err := pipeline.LintPath(cmd.Context(), o.LintPathOptions)
			if err != nil {
				return err
			}
			if err := printReport(s, g, rep, s.errOut); err != nil {
				return err
			}
			if rep.HasErrors() {
				return fmt.Errorf("lint: %w", &pipeline.LintError{Report: rep})
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Version, "version", "", "release version (source tree: default from the config; dist folder: the version to check)")
	f.StringVar(&o.Config, "config", "", "capirepo.yaml or clusterctl-settings.json: the source tree's config, or the waivers for a release folder (default: ./capirepo.yaml)")
	f.StringVar(&o.Provider, "provider", "", "provider label of a single file (default: inferred)")
	f.BoolVar(&o.AllowRemote, "allow-remote", false, "source tree: allow kustomizations to pull remote bases (git or http URLs)")
	f.StringArrayVar(&o.disable, "disable", nil, "waive a rule: RULE=reason (repeatable); the reason is printed with each waived finding")
	f.StringArrayVar(&o.Against, "against", nil, "also check the upgrade from this older release: a folder, or a target URL with an optional @VERSION (repeatable)")
	o.read.AddFlags(cmd)
	return cmd
}
