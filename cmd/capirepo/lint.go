package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

type lintOptions struct {
	version  string
	config   string
	provider string
	disable  []string

	allowRemote bool
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
remains.`,
		Example: `  # The source tree in the current folder, rendered as build would
  capirepo lint

  # A built dist folder, as SARIF for GitHub code scanning
  capirepo lint dist --version v1.4.0 -o sarif > lint.sarif

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
			switch g.output {
			case "json":
				err = rep.WriteJSON(s.out)
			case "sarif":
				err = rep.WriteSARIF(s.out)
			default:
				err = rep.WriteText(s.errOut)
			}
			if err != nil {
				return err
			}
			if rep.HasErrors() {
				return fmt.Errorf("lint: %d errors", rep.Count(contract.Error))
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
	return cmd
}

func (o *lintOptions) disabled() (map[string]string, error) { return parseDisable(o.disable) }

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
		cfgPath := o.config
		if cfgPath == "" {
			if _, err := os.Stat(provider.ConfigFile); err == nil {
				cfgPath = provider.ConfigFile
			}
		}
		if cfgPath != "" {
			cfg, err := provider.LoadConfig(filepath.Dir(cfgPath), cfgPath)
			if err != nil {
				return contract.Report{}, err
			}
			opts.Waivers = contract.Waivers(cfg.Lint)
			if len(opts.Waivers) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "lint: %d waivers from %s\n", len(opts.Waivers), cfgPath)
			}
		}
		return contract.Lint(rel, opts), nil
	}
	version := o.version
	if version == "" {
		v, from, err := nextVersion(path, o.config)
		if err != nil {
			return contract.Report{}, err
		}
		if v != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "lint: no --version: linting as %s (%s)\n", v, from)
		}
		version = v
	}
	res, err := builder.Build(cmd.Context(), builder.Options{Dir: path, ConfigPath: o.config, Version: version, AllowRemote: o.allowRemote})
	if err != nil {
		return contract.Report{}, err
	}
	return contract.Lint(res.Release, contract.Options{Disabled: disabled, Waivers: contract.Waivers(res.Config.Lint), Findings: res.Findings, Sources: res.Sources}), nil
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

// nextVersion is the version a pull request's lint checks when none is
// given: the config's version (the build takes it), the first provider's
// nextVersion when its metadata.yaml has a series for it, else the newest
// release series of its metadata.yaml (vX.Y.0). from says which.
func nextVersion(dir, configPath string) (version, from string, err error) {
	cfg, err := provider.LoadConfig(dir, configPath)
	if err != nil {
		return "", "", err
	}
	if cfg.Version != "" {
		return "", "", nil
	}
	for _, s := range cfg.Providers {
		var m provider.Metadata
		if data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(s.Metadata))); err == nil {
			_ = yaml.Unmarshal(data, &m)
		}
		// nextVersion, when metadata.yaml has its series and none newer
		// (a stale nextVersion is older than the newest series).
		if sv, err := provider.ParseVersion(s.NextVersion); err == nil && len(m.ReleaseSeries) > 0 &&
			slices.ContainsFunc(m.ReleaseSeries, func(rs clusterctlv1.ReleaseSeries) bool {
				return uint64(rs.Major) == sv.Major() && uint64(rs.Minor) == sv.Minor()
			}) && !slices.ContainsFunc(m.ReleaseSeries, func(rs clusterctlv1.ReleaseSeries) bool {
			return uint64(rs.Major) > sv.Major() || (uint64(rs.Major) == sv.Major() && uint64(rs.Minor) > sv.Minor())
		}) {
			return s.NextVersion, "nextVersion of " + s.Name, nil
		}
		if len(m.ReleaseSeries) == 0 {
			if s.NextVersion != "" {
				return s.NextVersion, "nextVersion of " + s.Name, nil
			}
			continue
		}
		newest := m.ReleaseSeries[0]
		for _, rs := range m.ReleaseSeries[1:] {
			if rs.Major > newest.Major || (rs.Major == newest.Major && rs.Minor > newest.Minor) {
				newest = rs
			}
		}
		from = fmt.Sprintf("the newest release series of %s, %d.%d", s.Metadata, newest.Major, newest.Minor)
		if s.NextVersion != "" {
			from += fmt.Sprintf("; nextVersion %s of %s is not its newest series", s.NextVersion, s.Name)
		}
		return fmt.Sprintf("v%d.%d.0", newest.Major, newest.Minor), from, nil
	}
	return "", "", nil
}
