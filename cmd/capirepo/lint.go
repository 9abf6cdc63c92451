package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/pipeline"
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
				fmt.Fprintf(cmd.ErrOrStderr(), "lint: %s from %s\n", plural(len(opts.Waivers), "waiver", "waivers"), cfgPath)
			}
		}
		return contract.Lint(rel, opts), nil
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
	rep, err := pipeline.Lint(b, disabled, nil)
	var le *pipeline.LintError
	if errors.As(err, &le) { // printed by the caller, in its format
		err = nil
	}
	return rep, err
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
