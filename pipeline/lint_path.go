package pipeline

import (
	"context"
	"errors"
	"fmt"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/internal/text"
	"io"
	"os"
	"path/filepath"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
)

// LintPathOptions say what LintPath checks and how.
type LintPathOptions struct {
	// Path is a provider source tree (rendered first, as Build does), a
	// folder of release assets (a dist folder, one version folder, ...) or
	// one components, metadata, cluster-template or clusterclass file.
	Path string
	// Version is the release version; "" means the tree's next version, or
	// the only one in a folder.
	Version string
	// Config is the tree's config, or the waivers of a release folder; ""
	// means the tree's, or WorkDir's capirepo.yaml for a folder.
	Config string
	// WorkDir is the folder the command runs in: its capirepo.yaml waives
	// findings of a release folder when Config is empty. "" looks in none.
	WorkDir string
	// Provider is the label of a single file; "" infers it.
	Provider string
	// Disabled are the command line's waivers, rule to reason.
	Disabled map[string]string
	// AllowRemote lets a tree's kustomizations pull remote bases.
	AllowRemote bool
	// Against are older releases (a folder, or a target URL with an
	// optional @VERSION) whose upgrade to this one is checked in the same
	// report; Targets opens them.
	Against []string
	Targets targets.Options
	// Log hears what was read and which waivers apply; nil discards it.
	Log io.Writer
}

// LintPath checks what Path is (a file, a release folder or a source
// tree) against the provider contracts, and with Against the upgrades to
// it. The report's error-level findings are not an error: the caller
// prints the report in its format first.
func LintPath(ctx context.Context, o LintPathOptions) (contract.Report, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	fi, err := os.Stat(o.Path)
	if err != nil {
		return contract.Report{}, err
	}
	if !fi.IsDir() {
		if len(o.Against) > 0 {
			return contract.Report{}, publish.Usagef("%s compares releases: give a source tree or a release folder, not one file", option.Flag(ctx, option.Against))
		}
		data, err := os.ReadFile(o.Path)
		if err != nil {
			return contract.Report{}, err
		}
		opts := contract.Options{Disabled: o.Disabled, Version: o.Version, Provider: o.Provider}
		if err := opts.Validate(); err != nil {
			return contract.Report{}, publish.UsageError{Err: err}
		}
		return contract.LintFiles([]release.File{{Name: filepath.Base(o.Path), Data: data}}, opts), nil
	}
	if !provider.IsSourceTree(o.Path) {
		rel, notes, err := release.Read(o.Path, release.ReadOptions{Version: o.Version, Doing: "linting"})
		if err != nil {
			return contract.Report{}, err
		}
		for _, n := range notes {
			fmt.Fprintf(o.Log, "lint: %s\n", n)
		}
		opts := contract.Options{Disabled: o.Disabled}
		// capirepo.yaml's waivers apply to a release folder too: Config,
		// or capirepo.yaml in the folder the command runs in.
		if opts.Waivers, err = configWaivers(o.Config, o.WorkDir, "lint", o.Log); err != nil {
			return contract.Report{}, err
		}
		return o.lintRelease(ctx, rel, opts)
	}
	version := o.Version
	if version == "" {
		v, from, err := NextVersion(o.Path, o.Config)
		if err != nil {
			return contract.Report{}, err
		}
		if v != "" {
			fmt.Fprintf(o.Log, "lint: no %s: linting as %s (%s)\n", option.Flag(ctx, option.Version), v, from)
			if w := nextVersionTagged(ctx, o.Path, v, from); w != "" {
				sayWarnings(o.Log, "", []string{w})
			}
		}
		version = v
	}
	b, err := Build(ctx, BuildOptions{Dir: o.Path, ConfigPath: o.Config, Version: version, AllowRemote: o.AllowRemote}, nil)
	if err != nil {
		return contract.Report{}, err
	}
	// What the render found (kustomize's deprecation notices, once each,
	// among them) is said as build says it.
	sayBuild(o.Log, "", b.Result)
	if len(o.Against) > 0 {
		return o.lintRelease(ctx, b.Result.Release, LintOptions(b, o.Disabled))
	}
	rep, err := Lint(b, o.Disabled, nil)
	var le *LintError
	if errors.As(err, &le) { // printed by the caller, in its format
		err = nil
	}
	return rep, err
}

// lintRelease lints a release, with the upgrade from the Against releases
// checked in the same report.
func (o LintPathOptions) lintRelease(ctx context.Context, rel *release.Release, opts contract.Options) (contract.Report, error) {
	if len(o.Against) > 0 {
		sides, err := ParseSides(option.Flag(ctx, option.Against), o.Against)
		if err != nil {
			return contract.Report{}, err
		}
		fs, notes, err := Against(ctx, sides, rel, o.Targets, o.Log)
		if err != nil {
			return contract.Report{}, err
		}
		for _, n := range notes {
			fmt.Fprintf(o.Log, "lint %s: %s\n", option.Flag(ctx, option.Against), n)
		}
		opts.Findings = append(opts.Findings, fs...)
		opts.Checks = contract.CheckLint | contract.CheckUpgrade
	}
	return contract.Lint(rel, opts), nil
}

// configWaivers reads the waivers of capirepo.yaml's lint.disable for a
// release folder: cfgPath, or capirepo.yaml in workDir (the folder the
// command runs in; "" for none). who (the command) says on log how many
// apply.
func configWaivers(cfgPath, workDir, who string, log io.Writer) ([]contract.Waiver, error) {
	if cfgPath == "" && workDir != "" {
		if p := filepath.Join(workDir, provider.ConfigFile); fileExists(p) {
			cfgPath = p
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
		fmt.Fprintf(log, "%s: %s from %s\n", who, text.Plural(len(ws), "waiver", "waivers"), cfgPath)
	}
	return ws, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
