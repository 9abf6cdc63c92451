package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

type lintOptions struct {
	version  string
	config   string
	provider string
	disable  []string
	against  []string
	read     readFlags
	// s reads the credentials --against targets are read with.
	s streams

	allowRemote bool
}

func newLintCmd(s streams, g *globalOptions) *cobra.Command {
	o := &lintOptions{s: s}
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

--against OLD also checks what breaks when a management cluster upgrades
from release OLD to this one (capirepo diff's rules, in the same report): OLD
is a folder or a published release (github://, gitlab://, oci://, file://,
with @VERSION; without, the release there before this one).`,
		Example: `  # The source tree in the current folder, rendered as build would
  capirepo lint

  # A built dist folder, as SARIF for GitHub code scanning
  capirepo lint dist --version v1.4.0 -o sarif > lint.sarif

  # The tree, and the upgrade from the release published before it
  capirepo lint --version v1.5.0 --against github://my-org/cluster-api-provider-example

  # One file, with a rule waived for this run
  capirepo lint infrastructure-components.yaml --version v1.4.0 --disable CAPI313="listed under our own category"`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "."
			if len(args) == 1 {
				path = args[0]
			}
			if _, err := os.Stat(path); err != nil {
				return usagef("lint %s: no such file or folder", path)
			}
			if err := checkConfigFlag(o.config); err != nil {
				return err
			}
			disabled, err := o.disabled()
			if err != nil {
				return err
			}
			rep, err := o.lint(cmd, path, disabled)
			if err != nil {
				return err
			}
			if err := writeReport(s, g, rep); err != nil {
				return err
			}
			if rep.HasErrors() {
				return fmt.Errorf("lint: %w", &pipeline.LintError{Report: rep})
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.version, "version", "", "release version (source tree: default from the config; dist folder: the version to check)")
	f.StringVar(&o.config, "config", "", "capirepo.yaml or clusterctl-settings.json: the source tree's config, or the waivers for a release folder (default: ./capirepo.yaml)")
	f.StringVar(&o.provider, "provider", "", "provider label of a single file (default: inferred)")
	f.BoolVar(&o.allowRemote, "allow-remote", false, "source tree: allow kustomizations to pull remote bases (git or http URLs)")
	f.StringArrayVar(&o.disable, "disable", nil, "waive a rule: RULE=reason (repeatable); the reason is printed with each waived finding")
	f.StringArrayVar(&o.against, "against", nil, "also check the upgrade from this older release: a folder, or a target URL with an optional @VERSION (repeatable)")
	o.read.bind(cmd)
	return cmd
}

func (o *lintOptions) disabled() (map[string]string, error) { return parseDisable(o.disable) }

// writeReport prints a report of findings in the --output format: text on
// stderr, JSON or SARIF on stdout (lint and diff).
func writeReport(s streams, g *globalOptions, rep contract.Report) error {
	switch g.output {
	case "json":
		return rep.WriteJSON(s.out)
	case "sarif":
		return rep.WriteSARIF(s.out)
	}
	return rep.WriteText(s.errOut)
}

// parseDisable turns --disable RULE=reason flags into Options.Disabled.
func parseDisable(flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, d := range flags {
		rule, reason, ok := strings.Cut(d, "=")
		if !ok || strings.TrimSpace(reason) == "" {
			reason = "disabled on the command line"
		}
		out[strings.TrimSpace(rule)] = reason
	}
	if err := (contract.Options{Disabled: out}).Validate(); err != nil {
		return nil, usageError{err}
	}
	return out, nil
}

// lint picks what PATH is: a file, a release folder or a source tree.
func (o *lintOptions) lint(cmd *cobra.Command, path string, disabled map[string]string) (contract.Report, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return contract.Report{}, err
	}
	if !fi.IsDir() {
		if len(o.against) > 0 {
			return contract.Report{}, usagef("--against compares releases: give a source tree or a release folder, not one file")
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return contract.Report{}, err
		}
		opts := contract.Options{Disabled: disabled, Version: o.version, Provider: o.provider}
		if err := opts.Validate(); err != nil {
			return contract.Report{}, usageError{err}
		}
		return contract.LintFiles([]release.File{{Name: filepath.Base(path), Data: data}}, opts), nil
	}
	if !isSourceTree(path) {
		rel, notes, err := contract.ReadRelease(path, o.version)
		if err != nil {
			return contract.Report{}, err
		}
		for _, n := range notes {
			fmt.Fprintf(cmd.ErrOrStderr(), "lint: %s\n", n)
		}
		opts := contract.Options{Disabled: disabled}
		// capirepo.yaml's waivers apply to a release folder too: --config,
		// or capirepo.yaml in the current folder.
		if opts.Waivers, err = configWaivers(cmd, o.config); err != nil {
			return contract.Report{}, err
		}
		return o.lintRelease(cmd, rel, opts)
	}
	version := o.version
	if version == "" {
		v, from, err := pipeline.NextVersion(path, o.config)
		if err != nil {
			return contract.Report{}, err
		}
		if v != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "lint: no --version: linting as %s (%s)\n", v, from)
		}
		version = v
	}
	b, err := pipeline.Build(cmd.Context(), pipeline.BuildOptions{Dir: path, ConfigPath: o.config, Version: version, AllowRemote: o.allowRemote}, nil)
	if err != nil {
		return contract.Report{}, err
	}
	if len(o.against) > 0 {
		return o.lintRelease(cmd, b.Result.Release, pipeline.LintOptions(b, disabled))
	}
	rep, err := pipeline.Lint(b, disabled, nil)
	var le *pipeline.LintError
	if errors.As(err, &le) { // printed by the caller, in its format
		err = nil
	}
	return rep, err
}

// lintRelease lints a release, with the upgrade from the --against releases
// checked in the same report.
func (o *lintOptions) lintRelease(cmd *cobra.Command, rel *release.Release, opts contract.Options) (contract.Report, error) {
	if len(o.against) > 0 {
		var sides []pipeline.Side
		for _, a := range o.against {
			side, err := pipeline.ParseSide(a, "")
			if err != nil {
				return contract.Report{}, usageError{fmt.Errorf("--against %w", err)}
			}
			sides = append(sides, side)
		}
		fs, notes, err := pipeline.Against(cmd.Context(), sides, rel, o.read.options(o.s), cmd.ErrOrStderr())
		if err != nil {
			return contract.Report{}, err
		}
		for _, n := range notes {
			fmt.Fprintf(cmd.ErrOrStderr(), "lint --against: %s\n", n)
		}
		opts.Findings = append(opts.Findings, fs...)
		opts.Checks = contract.CheckLint | contract.CheckUpgrade
	}
	return contract.Lint(rel, opts), nil
}

// configWaivers reads the waivers of capirepo.yaml's lint.disable for a
// release folder: --config, or capirepo.yaml in the current folder.
func configWaivers(cmd *cobra.Command, cfgPath string) ([]contract.Waiver, error) {
	if cfgPath == "" {
		if _, err := os.Stat(provider.ConfigFile); err == nil {
			cfgPath = provider.ConfigFile
		}
	}
	if cfgPath == "" {
		return nil, nil
	}
	cfg, err := provider.LoadConfig(filepath.Dir(cfgPath), cfgPath)
	if err != nil {
		return nil, err
	}
	ws := contract.Waivers(cfg.Lint)
	if len(ws) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s from %s\n", cmd.Name(), text.Plural(len(ws), "waiver", "waivers"), cfgPath)
	}
	return ws, nil
}

// isSourceTree tells a provider source tree (a capirepo.yaml, a
// clusterctl-settings.json or a kustomization under config/) from a folder
// of release assets.
func isSourceTree(path string) bool {
	for _, p := range []string{provider.ConfigFile, provider.SettingsFile, "config/default/kustomization.yaml", "core/config/default/kustomization.yaml"} {
		if _, err := os.Stat(filepath.Join(path, filepath.FromSlash(p))); err == nil {
			return true
		}
	}
	return false
}
