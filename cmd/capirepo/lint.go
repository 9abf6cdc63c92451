package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/release"
)

type lintOptions struct {
	version  string
	config   string
	provider string
	disable  []string
}

func newLintCmd(s streams, g *globalOptions) *cobra.Command {
	o := &lintOptions{}
	cmd := &cobra.Command{
		Use:   "lint [PATH]",
		Short: "Check a source tree, a dist folder or one components/template file against the provider contracts",
		Long: `Checks rendered release assets against the clusterctl contract and the
infrastructure provider contracts. PATH is a provider source tree (rendered
first, as build does), a dist folder or provider repository tree, or a single
components, metadata, cluster-template or clusterclass file. Rules are listed
in docs/lint-rules.md. Exit 1 when an error-level finding remains.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "."
			if len(args) == 1 {
				path = args[0]
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
	f.StringVar(&o.config, "config", "", "capirepo.yaml or clusterctl-settings.json for a source tree")
	f.StringVar(&o.provider, "provider", "", "provider label of a single file (default: inferred)")
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
	if isReleaseFolder(path) {
		rel, err := release.Load(path, o.version)
		if err != nil {
			return contract.Report{}, err
		}
		return contract.Lint(rel, contract.Options{Disabled: disabled}), nil
	}
	res, err := builder.Build(cmd.Context(), builder.Options{Dir: path, ConfigPath: o.config, Version: o.version})
	if err != nil {
		return contract.Report{}, err
	}
	return contract.Lint(res.Release, contract.Options{Disabled: disabled, Waivers: contract.Waivers(res.Config.Lint), Findings: res.Findings}), nil
}

// isReleaseFolder tells a dist folder or repository tree (it holds
// <label>/<version> folders with checksums) from a source tree.
func isReleaseFolder(path string) bool {
	matches, _ := filepath.Glob(filepath.Join(path, "*", "v*", release.ChecksumsFile))
	if len(matches) > 0 {
		return true
	}
	_, err := os.Stat(filepath.Join(path, release.ChecksumsFile))
	return err == nil
}
