package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/pipeline"
)

// diffOptions are diff's flags, bound to what Diff compares.
type diffOptions struct {
	pipeline.DiffOptions
	version, oldVersion string
	disable             []string
	read                readOptions
}

func newDiffCmd(s streams, g *globalOptions) *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff OLD... NEW",
		Short: "Say what breaks when a management cluster upgrades from release OLD to NEW",
		Long: `diff compares a release with an older one and reports what breaks when a
management cluster moves from OLD to NEW with clusterctl upgrade: release
series metadata.yaml no longer covers, contract changes, CRD storage versions
and served versions dropped, CRD identity changes, schema changes that stored
objects no longer pass, contract labels, and what users must change (the
provider's label, namespace, new variables, ClusterClasses). The rules are
CAPI701 ... CAPI717 in docs/lint-rules.md; docs/upgrade.md explains them.

OLD and NEW are each a folder (a <label>/<version> folder, a dist folder or
repository tree, with --version or @VERSION to pick a version) or a published
release read as clusterctl reads it: github://OWNER/NAME, gitlab://HOST/PROJECT,
oci://REGISTRY/PATH or file://DIR, with @VERSION. A published OLD without a
version is the newest release there below NEW (clusterctl's order); then, and
when several OLDs are given, the oldest release that can upgrade straight to
NEW is named too. Tokens are read as mirror reads them, and only used if set.

Users of clusterctl generate cluster are checked too: a flavor removed or
renamed, a variable a flavor newly needs without a default, a default that
changed (CAPI715 ... CAPI717, warnings naming the flavor and variable).

Findings print as lint prints them (text on stderr; -o json, sarif,
codequality or markdown on stdout; -o markdown also says what the upgrade
changes: contract, CRD versions, variables, flavors, ClusterClass
variables, images); capirepo.yaml's lint.disable and --disable waive them.
Exit 0 when the upgrade is safe (warnings allowed), 1 when it is not, 2 for
usage errors.`,
		Example: `  # The release being built against the one published before it
  capirepo build --version v2.9.0
  capirepo diff github://kubernetes-sigs/cluster-api-provider-aws dist --version v2.9.0

  # Two published releases
  capirepo diff github://my-org/provider@v1.3.2 github://my-org/provider@v1.4.0 --provider infrastructure-example

  # Several old releases, as SARIF for code scanning
  capirepo diff file:///srv/capi@v1.2.0 file:///srv/capi@v1.3.0 dist -o sarif > upgrade.sarif`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Old, o.New, err = pipeline.DiffSides(cmd.Context(), args, o.version, o.oldVersion); err != nil {
				return err
			}
			if err := pipeline.CheckConfigFile("--config", o.Config); err != nil {
				return err
			}
			if o.Disabled, err = pipeline.ParseWaivers(o.disable); err != nil {
				return err
			}
			o.WorkDir, o.Targets, o.Log = ".", o.read.Options(s), s.errOut
			sum, err := pipeline.Diff(cmd.Context(), o.DiffOptions)
			if err != nil {
				return err
			}
			for _, n := range sum.Notes {
				fmt.Fprintf(s.errOut, "diff: %s\n", n)
			}
			if err := printReport(s, g, sum, s.errOut); err != nil {
				return err
			}
			if n := sum.Report.Count(contract.Error); n > 0 {
				return fmt.Errorf("diff: %d %s: %s breaks", n, map[bool]string{true: "error", false: "errors"}[n == 1], sum.Describe())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.version, "version", "", "NEW's version (a folder: which version it holds; a target: which release to read)")
	f.StringVar(&o.oldVersion, "old-version", "", "OLD's version, for OLD without @VERSION (default: a folder's only or newest release; a target's release before NEW)")
	f.StringArrayVar(&o.Providers, "provider", nil, "provider label to compare when OLD and NEW are both targets (repeatable)")
	f.StringVar(&o.Config, "config", "", "capirepo.yaml whose lint.disable waives findings (default: ./capirepo.yaml when there is one)")
	f.StringArrayVar(&o.disable, "disable", nil, "waive a rule: RULE=reason (repeatable)")
	o.read.AddFlags(cmd)
	return cmd
}
