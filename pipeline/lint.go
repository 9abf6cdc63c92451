package pipeline

import (
	"fmt"
	"io"
	"slices"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/provider"
)

// LintError is a lint that found contract errors; its report holds every
// finding, for a machine-readable summary of the failure.
type LintError struct {
	Report contract.Report
}

func (e *LintError) Error() string {
	if !slices.ContainsFunc(e.Report.Findings, func(f contract.Finding) bool { return f.Severity == contract.Error && !contract.Unwaivable(f) }) {
		return fmt.Sprintf("%s: fix them; clusterctl refuses the release with them, no waiver clears them", lintCounts(e.Report))
	}
	return fmt.Sprintf("%s: fix them, or waive a rule with a reason in capirepo.yaml lint.disable", lintCounts(e.Report))
}

func lintCounts(rep contract.Report) string {
	return text.Plural(rep.Count(contract.Error), "error", "errors") + ", " + text.Plural(rep.Count(contract.Warning), "warning", "warnings")
}

// Lint checks a build's release against the provider contracts with the
// config's waivers, and prints the findings and the waived findings with
// their reasons to w. It is the one place build and release lint and print;
// a *LintError says error-level findings remain.
func Lint(b *Built, disabled map[string]string, w io.Writer) (contract.Report, error) {
	if w == nil {
		w = io.Discard
	}
	rep := contract.Lint(b.Result.Release, lintOptions(b.Result, b.Config, disabled))
	if len(rep.Findings) > 0 || len(rep.Waived) > 0 || len(rep.Unmatched) > 0 {
		if err := rep.WriteText(w); err != nil {
			return rep, err
		}
	}
	if rep.HasErrors() {
		return rep, &LintError{Report: rep}
	}
	return rep, nil
}

// lintOptions are the lint's options for a build: the command line's
// waivers (disabled) with the config's, and what the build found and where
// each file came from. Every lint of a build (build, release, lint of a
// tree, dev) takes them from here.
func lintOptions(res *builder.Result, cfg *provider.Config, disabled map[string]string) contract.Options {
	tags := map[string]string{}
	for _, p := range res.Providers {
		if p.ImageTag != "" {
			tags[p.Label] = p.ImageTag
		}
	}
	return contract.Options{Disabled: disabled, Waivers: contract.Waivers(cfg.Lint), Findings: res.Findings, Sources: res.Sources, ImageTags: tags}
}
