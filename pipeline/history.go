package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/diff"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

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
