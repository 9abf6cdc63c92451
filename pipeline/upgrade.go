package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/diff"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
)

// The upgrade check is three entry points, a file each: capirepo diff
// (Diff, diff.go), lint --against (Against, against.go) and the release's
// upgrade step (this file). Each reads the older release (a folder, or a
// published release through the targets, against.go; the release before
// the new one is found as clusterctl orders versions, history.go) and
// compares it with the new one through package diff; the findings are the
// lint's, reported through the lint's report.

// UpgradeError is an upgrade check that found errors; its report holds
// every finding.
type UpgradeError struct {
	Report contract.Report
	// Against names the release compared with.
	Against string
}

func (e *UpgradeError) Error() string {
	return fmt.Sprintf("%s against %s: what breaks clusterctl upgrade; fix them, waive a rule with a reason in capirepo.yaml lint.disable, or skip the check with --skip-upgrade-check REASON",
		lintCounts(e.Report), e.Against)
}

// upgrade is the release's upgrade step: the release published before this
// one, at the first target that has one, against the one built.
func (r *run) upgrade(ctx context.Context, opened []publish.Target) (string, bool, error) {
	if reason := strings.TrimSpace(r.o.SkipUpgradeCheck); reason != "" {
		fmt.Fprintf(r.o.Log, "  upgrade check skipped: %s\n", reason)
		return "--skip-upgrade-check: not checked (" + reason + ")", true, nil
	}
	if len(r.o.Targets) == 0 {
		return "no --publish target to read the previous release from: not checked", true, nil
	}
	newRel := r.b.Result.Release
	rd := &reader{o: readOptions(r.o.TargetOptions), log: r.o.Log}
	var ids []provider.ID
	for _, p := range newRel.Providers {
		ids = append(ids, p.ID)
	}
	for i, loc := range r.o.Targets {
		var src publish.Source
		if i < len(opened) && opened[i] != nil {
			src = opened[i]
		} else {
			t, err := rd.open(ctx, loc)
			if err != nil {
				return "", false, fmt.Errorf("%w (to publish without the check: --skip-upgrade-check REASON)", err)
			}
			src = t
		}
		prev, err := previousVersion(ctx, src, ids, newRel.Version, loc.URL, r.o.Log)
		if err != nil {
			return "", false, fmt.Errorf("%s: %w (to publish without the check: --skip-upgrade-check REASON)", loc.URL, err)
		}
		if prev == "" {
			continue
		}
		fmt.Fprintf(r.o.Log, "  comparing with %s, the release before %s at %s\n", prev, newRel.Version, loc.URL)
		old, err := rd.readTarget(ctx, src, loc.URL, ids, prev)
		if err != nil {
			return "", false, err
		}
		res := diff.Compare(old, newRel)
		hist := rd.historyOrNote(ctx, src, ids, old, newRel)
		for _, n := range res.Notes {
			fmt.Fprintf(r.o.Log, "  %s\n", n)
		}
		opts := lintOptions(r.b.Result, r.b.Config, r.o.Build.Disabled)
		opts.Findings, opts.Checks = slices.Concat(res.Findings, hist), contract.CheckUpgrade
		rep := contract.Collect(opts)
		if len(rep.Findings) > 0 || len(rep.Waived) > 0 || len(rep.Unmatched) > 0 {
			if err := rep.WriteText(r.o.Log); err != nil {
				return "", false, err
			}
		}
		r.sum.Findings = append(r.sum.Findings, rep.Findings...)
		r.sum.Waived = append(r.sum.Waived, rep.Waived...)
		against := prev + " at " + loc.URL
		if rep.HasErrors() {
			return "", false, &UpgradeError{Report: rep, Against: against}
		}
		return "against " + against + ": " + lintCounts(rep), false, nil
	}
	urls := make([]string, len(r.o.Targets))
	for i, l := range r.o.Targets {
		urls[i] = l.URL
	}
	return fmt.Sprintf("no release below %s at %s: nothing to compare", newRel.Version, strings.Join(urls, ", ")), true, nil
}
