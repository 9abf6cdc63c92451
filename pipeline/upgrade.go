package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/diff"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
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
	// skip is how the command skips the check (option.SkipUpgradeCheck).
	skip string
}

func (e *UpgradeError) Error() string {
	return fmt.Sprintf("%s against %s: what breaks clusterctl upgrade; fix them, waive a rule with a reason in capirepo.yaml lint.disable, or skip the check with %s REASON",
		lintCounts(e.Report), e.Against, cmp.Or(e.skip, option.SkipUpgradeCheck.String()))
}

// upgrade is the release's upgrade step: the releases of Against, or else
// the release published before this one at the first target that has one,
// against the one built. In a dry run a target that cannot be reached (no
// such host, no connection) is reported and the run goes on, as the image
// check does; a real run stops.
func (r *run) upgrade(ctx context.Context, opened []publish.Target) (string, bool, error) {
	if reason := strings.TrimSpace(r.o.SkipUpgradeCheck); reason != "" {
		fmt.Fprintf(r.o.Log, "  upgrade check skipped: %s\n", reason)
		return option.Flag(ctx, option.SkipUpgradeCheck) + ": not checked (" + reason + ")", true, nil
	}
	if len(r.o.Against) > 0 {
		return r.upgradeAgainst(ctx)
	}
	if len(r.o.Targets) == 0 {
		return "no " + option.Flag(ctx, option.Publish) + " target to read the previous release from: not checked", true, nil
	}
	newRel := r.b.Result.Release
	rd := &reader{o: readOptions(r.o.TargetOptions), log: r.o.Log}
	ids := releaseIDs(newRel)
	var unreachable []string
	for i, loc := range r.o.Targets {
		var src publish.Source
		if i < len(opened) && opened[i] != nil {
			src = opened[i]
		} else {
			t, err := rd.open(ctx, loc)
			if err != nil {
				if r.unreachable(loc.URL, err, &unreachable) {
					continue
				}
				return "", false, r.skipHint(ctx, err)
			}
			src = t
		}
		prev, err := previousVersion(ctx, src, ids, newRel.Version, loc.URL, r.o.Log)
		if err != nil {
			if r.unreachable(loc.URL, err, &unreachable) {
				continue
			}
			return "", false, r.skipHint(ctx, fmt.Errorf("%s: %w", loc.URL, err))
		}
		if prev == "" {
			continue
		}
		fmt.Fprintf(r.o.Log, "  comparing with %s, the release before %s at %s\n", prev, newRel.Version, loc.URL)
		old, err := rd.readTarget(ctx, src, loc.URL, ids, prev)
		if err != nil {
			if r.unreachable(loc.URL, err, &unreachable) {
				continue
			}
			return "", false, err
		}
		r.old = old
		rep, err := r.compare(ctx, old, rd.historyOrNote(ctx, src, ids, old, newRel), prev+" at "+loc.URL)
		if err != nil {
			return "", false, err
		}
		return "against " + prev + " at " + loc.URL + ": " + lintCounts(rep) + unreachableDetail(unreachable), false, nil
	}
	if len(unreachable) > 0 {
		return "not checked: " + strings.Join(unreachable, ", ") + " could not be reached (a dry run does not fail for it; a real run stops)", true, nil
	}
	urls := make([]string, len(r.o.Targets))
	for i, l := range r.o.Targets {
		urls[i] = l.URL
	}
	return fmt.Sprintf("no release below %s at %s: nothing to compare", newRel.Version, strings.Join(urls, ", ")), true, nil
}

// upgradeAgainst compares the release built with each release of Against
// (release --against OLD: a folder, or a target URL with an optional
// @VERSION), in one report.
func (r *run) upgradeAgainst(ctx context.Context) (string, bool, error) {
	newRel := r.b.Result.Release
	rd := &reader{o: readOptions(r.o.TargetOptions), log: r.o.Log}
	var unreachable, done []string
	var errs, warns int
	for _, s := range r.o.Against {
		old, from, hist, err := rd.readOld(ctx, s, newRel)
		if err != nil {
			if r.unreachable(s.String(), err, &unreachable) {
				continue
			}
			return "", false, r.skipHint(ctx, fmt.Errorf("%s %s: %w", option.Flag(ctx, option.Against), s, err))
		}
		if old == nil {
			fmt.Fprintf(r.o.Log, "  %s %s: no release below %s: nothing to compare\n", option.Flag(ctx, option.Against), s, newRel.Version)
			continue
		}
		against := old.Version + " at " + from
		if r.old == nil {
			r.old = old
		}
		fmt.Fprintf(r.o.Log, "  comparing with %s (%s)\n", against, option.Flag(ctx, option.Against))
		rep, err := r.compare(ctx, old, hist, against)
		if err != nil {
			return "", false, err
		}
		errs, warns = errs+rep.Count(contract.Error), warns+rep.Count(contract.Warning)
		done = append(done, against)
	}
	if len(done) == 0 {
		if len(unreachable) > 0 {
			return "not checked: " + strings.Join(unreachable, ", ") + " could not be reached (a dry run does not fail for it; a real run stops)", true, nil
		}
		return option.Flag(ctx, option.Against) + ": no release below " + newRel.Version + ": nothing to compare", true, nil
	}
	return fmt.Sprintf("against %s: %s, %s", strings.Join(done, "; "), text.Plural(errs, "error", "errors"), text.Plural(warns, "warning", "warnings")) + unreachableDetail(unreachable), false, nil
}

// compare checks the upgrade from old (with the history findings hist) to
// the release built, prints the findings, adds them to the summary and
// fails on an error.
func (r *run) compare(ctx context.Context, old *release.Release, hist []contract.Finding, against string) (contract.Report, error) {
	res := diff.Compare(old, r.b.Result.Release)
	r.sum.Upgrade = append(r.sum.Upgrade, res.Changes)
	for _, n := range res.Notes {
		fmt.Fprintf(r.o.Log, "  %s\n", n)
	}
	opts := lintOptions(r.b.Result, r.b.Config, r.o.Build.Disabled)
	opts.Findings, opts.Checks = slices.Concat(res.Findings, hist), contract.CheckUpgrade
	rep := contract.Collect(opts)
	if len(rep.Findings) > 0 || len(rep.Waived) > 0 || len(rep.Unmatched) > 0 {
		if err := rep.WriteText(r.o.Log); err != nil {
			return rep, err
		}
	}
	r.sum.Findings = append(r.sum.Findings, rep.Findings...)
	r.sum.Waived = append(r.sum.Waived, rep.Waived...)
	if rep.HasErrors() {
		return rep, &UpgradeError{Report: rep, Against: against, skip: option.Flag(ctx, option.SkipUpgradeCheck)}
	}
	return rep, nil
}

// unreachable says whether err, met reading the older release at name,
// is a target that could not be reached in a dry run: then it is printed
// and added to list, and the step goes on.
func (r *run) unreachable(name string, err error, list *[]string) bool {
	if !r.o.DryRun || !publish.IsUnreachable(err) {
		return false
	}
	fmt.Fprintf(r.o.Log, "  upgrade check: %s could not be reached, which is not the same as having no release: %v (a dry run goes on; a real run stops here)\n", name, err)
	*list = append(*list, name)
	return true
}

func unreachableDetail(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return "; not reached: " + strings.Join(list, ", ")
}

// skipHint adds how to go on without the upgrade check to err: a real run
// publishes without it; a dry run publishes nothing either way.
func (r *run) skipHint(ctx context.Context, err error) error {
	if r.o.DryRun {
		return fmt.Errorf("%w (to run without the check: %s REASON)", err, option.Flag(ctx, option.SkipUpgradeCheck))
	}
	return fmt.Errorf("%w (to publish without the check: %s REASON)", err, option.Flag(ctx, option.SkipUpgradeCheck))
}

func releaseIDs(rel *release.Release) []provider.ID {
	var ids []provider.ID
	for _, p := range rel.Providers {
		ids = append(ids, p.ID)
	}
	return ids
}
