package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/diff"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
)

// This file is the upgrade check: capirepo diff (Diff), lint --against
// (Against) and the release's upgrade step. Each reads the older release
// (a folder, or a published release through the targets, where the release
// before the new one is found as clusterctl orders versions) and compares
// it with the new one through package diff; the findings are the lint's,
// reported through the lint's report.

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

// Side names one release of a comparison, as capirepo diff takes it: a
// folder (a <label>/<version> folder, a dist or repository tree, a flat
// folder of release assets) or a target URL (github://, gitlab://, oci://,
// file://), and the version to read ("" for a folder: its only or newest
// version; for a target: the newest published version below the other
// side's, as clusterctl orders them).
type Side struct {
	// Arg is the folder or URL as given, without the version.
	Arg     string
	Version string
	// Location is the parsed target URL; nil for a folder.
	Location *targets.Location
}

func (s Side) String() string {
	if s.Version == "" {
		return s.Arg
	}
	return s.Arg + "@" + s.Version
}

// ParseSide reads an argument of capirepo diff: PATH or URL, with an
// optional @vX.Y.Z. A URL that does not parse, or a folder that does not
// exist, is a publish.UsageError.
func ParseSide(arg, defaultVersion string) (Side, error) {
	s := Side{Arg: arg, Version: defaultVersion}
	if i := strings.LastIndex(arg, "@"); i > 0 {
		if _, err := provider.ParseVersion(arg[i+1:]); err == nil {
			s.Arg, s.Version = arg[:i], arg[i+1:]
		}
	}
	if s.Version != "" {
		if _, err := provider.ParseVersion(s.Version); err != nil {
			return Side{}, publish.UsageError{Err: fmt.Errorf("%s: %w", arg, err)}
		}
	}
	if strings.Contains(s.Arg, "://") {
		loc, err := targets.Parse(s.Arg)
		if err != nil {
			return Side{}, err
		}
		s.Location = &loc
		return s, nil
	}
	if _, err := os.Stat(s.Arg); err != nil {
		return Side{}, publish.Usagef("%s: no such folder, and not a target URL (github://OWNER/NAME, gitlab://HOST/PROJECT, oci://REGISTRY/PATH, file://DIR)", s.Arg)
	}
	return s, nil
}

// DiffOptions say what capirepo diff compares.
type DiffOptions struct {
	// Old are the older releases, New the newer one.
	Old []Side
	New Side
	// Providers are the provider labels to read when both sides are
	// targets; otherwise those of the folder side.
	Providers []string
	// Targets opens the targets to read (Publish is ignored: they are
	// read, never written).
	Targets targets.Options
	// Disabled and Waivers waive rules (--disable, capirepo.yaml
	// lint.disable).
	Disabled map[string]string
	Waivers  []contract.Waiver
	// Log hears what was read and compared; nil discards it.
	Log io.Writer
}

// Compared names a release a comparison read.
type Compared struct {
	Version   string   `json:"version"`
	Providers []string `json:"providers"`
	From      string   `json:"from"`
}

// DiffSummary is what Diff compared and found.
type DiffSummary struct {
	Old    []Compared      `json:"old"`
	New    Compared        `json:"new"`
	Report contract.Report `json:"report"`
	Notes  []string        `json:"notes,omitempty"`
}

// Diff reads the releases o names and says what breaks when a management
// cluster moves from each old one to the new one. The error is a
// publish.UsageError for sides that cannot be told apart, a read error, or
// nil: findings are in the report (HasErrors).
func Diff(ctx context.Context, o DiffOptions) (*DiffSummary, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	rd := &reader{o: readOptions(o.Targets), log: o.Log}
	newRel, newFrom, err := rd.readFolderSide(o.New)
	if err != nil {
		return nil, err
	}
	ids, err := providerIDs(o.Providers)
	if err != nil {
		return nil, err
	}
	if newRel == nil {
		// The new release is published: its providers come from the old
		// folder, or --provider.
		for _, s := range o.Old {
			if len(ids) > 0 || s.Location != nil {
				continue
			}
			old, _, err := rd.readFolderSide(s)
			if err != nil {
				return nil, err
			}
			for _, p := range old.Providers {
				ids = append(ids, p.ID)
			}
		}
		if len(ids) == 0 {
			return nil, publish.Usagef("%s is a target URL and no old side is a folder: name the providers to compare with --provider LABEL", o.New.Arg)
		}
		if o.New.Version == "" {
			return nil, publish.Usagef("%s: give the new release's version (%s@vX.Y.Z or --version)", o.New.Arg, o.New.Arg)
		}
		src, err := rd.open(ctx, *o.New.Location)
		if err != nil {
			return nil, err
		}
		if newRel, err = rd.readTarget(ctx, src, o.New.Location.URL, ids, o.New.Version); err != nil {
			return nil, err
		}
		newFrom = o.New.Location.URL
	}
	sum := &DiffSummary{New: compared(newRel, newFrom)}
	var fs []contract.Finding
	type oldRel struct {
		rel     *release.Release
		blocked bool
	}
	var olds []oldRel
	for _, s := range o.Old {
		old, from, hist, err := rd.readOld(ctx, s, newRel)
		if err != nil {
			return nil, err
		}
		if old == nil {
			sum.Notes = append(sum.Notes, fmt.Sprintf("%s holds no release below %s: nothing to compare", s.Arg, newRel.Version))
			continue
		}
		sum.Old = append(sum.Old, compared(old, from))
		fmt.Fprintf(o.Log, "comparing %s (%s) with %s (%s)\n", old.Version, from, newRel.Version, newFrom)
		res := diff.Compare(old, newRel)
		fs = append(fs, res.Findings...)
		fs = append(fs, hist...)
		sum.Notes = append(sum.Notes, res.Notes...)
		olds = append(olds, oldRel{old, len(diff.StorageBlocks(old, newRel)) > 0})
	}
	// Several old releases: which of them can upgrade straight to new.
	slices.SortFunc(olds, func(a, b oldRel) int { return compareVersions(a.rel.Version, b.rel.Version) })
	for i := len(olds) - 1; i > 0; i-- {
		if olds[i-1].blocked && !olds[i].blocked {
			fs = append(fs, diff.Straight(newRel, olds[i-1].rel.Version, diff.StorageBlocks(olds[i-1].rel, newRel), olds[i].rel.Version)...)
			break
		}
	}
	sum.Report = contract.Collect(contract.Options{Disabled: o.Disabled, Waivers: o.Waivers, Findings: fs, Checks: contract.CheckUpgrade})
	return sum, nil
}

func compared(rel *release.Release, from string) Compared {
	c := Compared{Version: rel.Version, From: from, Providers: []string{}}
	for _, p := range rel.Providers {
		c.Providers = append(c.Providers, p.Label())
	}
	return c
}

func providerIDs(labels []string) ([]provider.ID, error) {
	var out []provider.ID
	for _, l := range labels {
		id, err := provider.ParseLabel(l)
		if err != nil {
			return nil, publish.UsageError{Err: err}
		}
		out = append(out, id)
	}
	return out, nil
}

// Against compares rel with the older releases olds name, for lint
// --against: the upgrade findings (with, for a target, the oldest release
// that can upgrade straight to rel) and notes.
func Against(ctx context.Context, olds []Side, rel *release.Release, o targets.Options, log io.Writer) ([]contract.Finding, []string, error) {
	if log == nil {
		log = io.Discard
	}
	rd := &reader{o: readOptions(o), log: log}
	var fs []contract.Finding
	var notes []string
	for _, s := range olds {
		old, from, hist, err := rd.readOld(ctx, s, rel)
		if err != nil {
			return nil, nil, err
		}
		if old == nil {
			notes = append(notes, fmt.Sprintf("%s holds no release below %s: nothing to compare", s.Arg, rel.Version))
			continue
		}
		notes = append(notes, fmt.Sprintf("compared with %s (%s)", old.Version, from))
		res := diff.Compare(old, rel)
		fs = append(fs, res.Findings...)
		fs = append(fs, hist...)
		notes = append(notes, res.Notes...)
	}
	return fs, notes, nil
}

// LintOptions are the lint's options for a build (its waivers, what the
// build found, where each file came from), for a caller that adds findings
// of its own, such as lint --against.
func LintOptions(b *Built, disabled map[string]string) contract.Options {
	return lintOptions(b.Result, b.Config, disabled)
}

// readOptions are the targets' options for reading: no credentials are
// required, none are refused; nothing is replaced.
func readOptions(o targets.Options) targets.Options {
	o.Publish, o.Replace = false, false
	return o
}

// reader reads the sides of a comparison.
type reader struct {
	o   targets.Options
	log io.Writer
}

func (rd *reader) open(ctx context.Context, loc targets.Location) (publish.Source, error) {
	return loc.Open(ctx, rd.o)
}

// readFolderSide reads a folder side; nil for a target.
func (rd *reader) readFolderSide(s Side) (*release.Release, string, error) {
	if s.Location != nil {
		return nil, "", nil
	}
	rel, notes, err := contract.ReadRelease(s.Arg, s.Version)
	if err != nil {
		return nil, "", err
	}
	for _, n := range notes {
		// The lint's words for a tree's newest version, said of a side.
		n = strings.Replace(n, ": linting ", ": reading ", 1)
		n = strings.Replace(n, "(choose one with --version)", "(choose one with "+s.Arg+"@VERSION)", 1)
		fmt.Fprintf(rd.log, "%s\n", n)
	}
	return rel, s.Arg, nil
}

// readOld reads an older side for the providers of newRel: a folder as it
// is; a target at its version, or at the newest published version below
// newRel's, with the oldest published release that can upgrade straight to
// newRel (CAPI703 info findings). old is nil when the target holds no
// release below newRel.
func (rd *reader) readOld(ctx context.Context, s Side, newRel *release.Release) (old *release.Release, from string, hist []contract.Finding, err error) {
	if s.Location == nil {
		old, from, err := rd.readFolderSide(s)
		return old, from, nil, err
	}
	src, err := rd.open(ctx, *s.Location)
	if err != nil {
		return nil, "", nil, err
	}
	var ids []provider.ID
	for _, p := range newRel.Providers {
		ids = append(ids, p.ID)
	}
	v := s.Version
	if v == "" {
		if v, err = previousVersion(ctx, src, ids, newRel.Version, s.Location.URL, rd.log); err != nil || v == "" {
			return nil, "", nil, err
		}
		fmt.Fprintf(rd.log, "%s: the release before %s is %s\n", s.Location.URL, newRel.Version, v)
	}
	if old, err = rd.readTarget(ctx, src, s.Location.URL, ids, v); err != nil {
		return nil, "", nil, err
	}
	return old, s.Location.URL, rd.historyOrNote(ctx, src, ids, old, newRel), nil
}

// historyOrNote is history, whose failure to read an older release is
// said on the log and not an error: the history is advice, and the
// comparison with old stands on its own.
func (rd *reader) historyOrNote(ctx context.Context, src publish.Source, ids []provider.ID, old, newRel *release.Release) []contract.Finding {
	hist, err := rd.history(ctx, src, ids, old, newRel)
	if err != nil {
		fmt.Fprintf(rd.log, "the releases before %s were not checked for the oldest that upgrades straight to %s: %v\n", old.Version, newRel.Version, err)
		return nil
	}
	return hist
}

// readTarget reads the providers ids at version v from a target, as
// clusterctl reads them; a provider the target does not hold at v is left
// out, and none is an error.
func (rd *reader) readTarget(ctx context.Context, src publish.Source, url string, ids []provider.ID, v string) (*release.Release, error) {
	rel := &release.Release{Version: v}
	for _, id := range ids {
		p, err := publish.Read(ctx, src, publish.Ref{ID: id, Version: v})
		if errors.Is(err, publish.ErrNotFound) {
			fmt.Fprintf(rd.log, "%s: no %s %s\n", url, id.Label(), v)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s %s from %s: %w", id.Label(), v, url, err)
		}
		rel.Providers = append(rel.Providers, p)
	}
	if len(rel.Providers) == 0 {
		return nil, fmt.Errorf("%s holds none of %s at %s", url, labels(ids), v)
	}
	return rel, nil
}

func labels(ids []provider.ID) string {
	var out []string
	for _, id := range ids {
		out = append(out, id.Label())
	}
	return strings.Join(out, ", ")
}

// previousVersion is the release before below at a target, as clusterctl
// orders versions (releases before pre-releases, newest first): the newest
// release below it, or the newest pre-release when no release is below it;
// "" when there is none. A version the target holds no readable release of
// (no metadata.yaml or components file for any of the providers) is
// skipped, as clusterctl's latestPatchRelease skips them; like it, at most
// five are looked at.
func previousVersion(ctx context.Context, src publish.Source, ids []provider.ID, below, url string, log io.Writer) (string, error) {
	bv, err := version.ParseSemantic(below)
	if err != nil {
		return "", fmt.Errorf("version %q: %w", below, err)
	}
	all, err := allVersions(ctx, src, ids)
	if err != nil {
		return "", err
	}
	tried := 0
	for _, sv := range sortedCandidates(all, nil, nil) {
		if !sv.LessThan(bv) {
			continue
		}
		v := "v" + sv.String()
		ok, err := readable(ctx, src, ids, v)
		if err != nil {
			return "", err
		}
		if ok {
			return v, nil
		}
		fmt.Fprintf(log, "%s: skipping %s: no metadata.yaml and components file clusterctl could read\n", url, v)
		if tried++; tried == 5 {
			break
		}
	}
	return "", nil
}

// allVersions lists the published versions of the providers, each once.
func allVersions(ctx context.Context, src publish.Source, ids []provider.ID) ([]string, error) {
	var all []string
	for _, id := range ids {
		vs, err := src.Versions(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("list the versions of %s: %w", id.Label(), err)
		}
		all = append(all, vs...)
	}
	slices.Sort(all)
	return slices.Compact(all), nil
}

// readable says whether a target holds version v of one of the providers as
// clusterctl reads it.
func readable(ctx context.Context, src publish.Source, ids []provider.ID, v string) (bool, error) {
	for _, id := range ids {
		_, _, err := publish.Files(ctx, src, publish.Ref{ID: id, Version: v})
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, publish.ErrNotFound) {
			return false, fmt.Errorf("read %s %s: %w", id.Label(), v, err)
		}
	}
	return false, nil
}

// history finds, among the releases a target published before old, the
// newest that cannot upgrade straight to newRel and the oldest that can
// (storage versions only move forward, so a binary search over the
// releases, reading only their components). Nothing is read when old itself
// cannot upgrade straight (CAPI703 says so), and one release (the oldest)
// when every release can.
func (rd *reader) history(ctx context.Context, src publish.Source, ids []provider.ID, old, newRel *release.Release) ([]contract.Finding, error) {
	if len(diff.StorageBlocks(old, newRel)) > 0 {
		return nil, nil
	}
	ov, err := version.ParseSemantic(old.Version)
	if err != nil {
		return nil, nil //nolint:nilerr // a folder's version that is not semantic has no history
	}
	all, err := allVersions(ctx, src, ids)
	if err != nil {
		return nil, err
	}
	var older []string
	for _, sv := range sortedCandidates(all, nil, nil) {
		if sv.PreRelease() == "" && sv.LessThan(ov) {
			older = append(older, "v"+sv.String())
		}
	}
	slices.Reverse(older) // oldest first
	if len(older) == 0 {
		return nil, nil
	}
	blocks := map[string][]diff.Block{}
	blocked := func(v string) (bool, error) {
		rel, err := rd.readComponents(ctx, src, ids, v)
		if err != nil {
			return false, err
		}
		blocks[v] = diff.StorageBlocks(rel, newRel)
		return len(blocks[v]) > 0, nil
	}
	fmt.Fprintf(rd.log, "checking which of the %d releases before %s can upgrade straight to %s\n", len(older), old.Version, newRel.Version)
	b, err := blocked(older[0])
	if err != nil || !b {
		return nil, err
	}
	lo, hi := 0, len(older) // older[lo] is blocked; older[hi] (or old) is not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		b, err := blocked(older[mid])
		if err != nil {
			return nil, err
		}
		if b {
			lo = mid
		} else {
			hi = mid
		}
	}
	oldest := old.Version
	if hi < len(older) {
		oldest = older[hi]
	}
	return diff.Straight(newRel, older[lo], blocks[older[lo]], oldest), nil
}

// readComponents reads only the components files of the providers at v: all
// a storage version check needs. A version the target holds no readable
// release of reads as a release without CRDs, which nothing blocks: nobody
// runs it.
func (rd *reader) readComponents(ctx context.Context, src publish.Source, ids []provider.ID, v string) (*release.Release, error) {
	rel := &release.Release{Version: v}
	for _, id := range ids {
		ref := publish.Ref{ID: id, Version: v}
		name, _, err := publish.Files(ctx, src, ref)
		if errors.Is(err, publish.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s %s: %w", id.Label(), v, err)
		}
		fs, err := publish.ReadFiles(ctx, src, ref, name)
		if err != nil {
			return nil, fmt.Errorf("read %s %s: %w", id.Label(), v, err)
		}
		rel.Providers = append(rel.Providers, &release.Provider{ID: id, Version: v, ComponentsFile: name, Files: fs})
	}
	return rel, nil
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
