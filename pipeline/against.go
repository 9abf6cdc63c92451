package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/diff"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
)

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
	rel, notes, err := release.Read(s.Arg, release.ReadOptions{Version: s.Version, Choose: s.Arg + "@VERSION"})
	if err != nil {
		return nil, "", err
	}
	for _, n := range notes {
		// Two folder sides may say the same of themselves: say whose.
		fmt.Fprintf(rd.log, "%s: %s\n", s.Arg, n)
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
