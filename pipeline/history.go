package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/diff"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/versions"
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
// orders versions (versions.Before): the newest release below it, or the
// newest pre-release when no release is below it; "" when there is none. A
// version the target holds no readable release of (no metadata.yaml or
// components file for any of the providers) is passed over and said on
// log.
func previousVersion(ctx context.Context, src publish.Source, ids []provider.ID, below, url string, log io.Writer) (string, error) {
	return versions.Before(ctx, sourceVersions(src, ids, url, log), below)
}

// sourceVersions is the providers ids of src as the version choice reads
// them; each version passed over is said on log.
func sourceVersions(src publish.Source, ids []provider.ID, url string, log io.Writer) *publish.Repository {
	return &publish.Repository{Source: src, IDs: ids, Skipped: func(tag string, _ error) {
		fmt.Fprintf(log, "%s: skipping %s: no metadata.yaml and components file clusterctl could read\n", url, tag)
	}}
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
	if _, ok := versions.Parse(old.Version); !ok {
		return nil, nil // a folder's version that is not semantic has no history
	}
	all, err := (&publish.Repository{Source: src, IDs: ids}).Versions(ctx)
	if err != nil {
		return nil, err
	}
	older, err := versions.Releases(all, old.Version) // oldest first
	if err != nil || len(older) == 0 {
		return nil, err
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
