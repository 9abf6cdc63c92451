package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
)

// next says what a maintainer does after the run, in Next: for a dry run,
// what a real run would publish where; after publishing, the clusterctl
// config of the first target clusterctl reads (written to ConfigOut,
// atomically, when set) and the clusterctl init line that tries the
// release with it, as every publish command says it (Published.next).
func (r *run) next(ctx context.Context) error {
	if r.o.DryRun {
		r.sum.Next = r.wouldPublish(ctx)
		return nil
	}
	var first *Published
	for _, p := range r.sum.Targets {
		if p.Reader != "" || p.Overrides { // not read by a providers: entry
			continue
		}
		if p.target.Clusterctl().ProviderURL != nil {
			first = p
			break
		}
		if first == nil { // its URLs clusterctl refuses: said, unless one it reads follows
			first = p
		}
	}
	if first == nil {
		return nil
	}
	next, err := first.next(ctx, r.o.ConfigOut)
	r.sum.Next = append(r.sum.Next, next...)
	return err
}

// wouldPublish says, for each target, what a real run would publish there:
// the files the sign step would add (sign.Plan: the bundles and the
// provenance), and those the target adds itself (a publisher's provenance),
// as the target plans them (publish.Planner), counted as the real run's
// summary counts them.
func (r *run) wouldPublish(ctx context.Context) []string {
	rel := r.b.Result.Release
	planned := rel
	if o := r.o.Sign; o != nil {
		if p, err := sign.Plan(rel, sign.ReleaseOptions{Provenance: o.Provenance, Source: r.signSource(ctx)}); err == nil {
			planned = p
		}
	}
	sizes := assetSizes(planned)
	var out []string
	for _, loc := range r.o.Targets {
		names, exact := plannedFiles(ctx, loc, readOptions(r.o.TargetOptions), planned)
		size, bundles := 0, 0
		for _, n := range names {
			size += sizes[n]
			if strings.HasSuffix(n, release.BundleSuffix) && sizes[n] == 0 { // planned, not signed yet
				bundles++
			}
		}
		what := text.Bytes(int64(size))
		if bundles > 0 {
			what += fmt.Sprintf(" and %d Sigstore bundles, made when signing", bundles)
		}
		count := fmt.Sprintf("%d files", len(names))
		if !exact {
			count = "at least " + count
		}
		out = append(out, fmt.Sprintf("a real run would publish %s (%s) of %s to %s", count, what, rel.Version, loc.URL))
	}
	return out
}

// plannedFiles names the files publishing rel to loc writes: the target's
// own plan when it has one (publish.Planner), opened to read (a dry run
// holds no credentials); else every provider's files, and exact is false:
// the target may add files of its own.
func plannedFiles(ctx context.Context, loc targets.Location, o targets.Options, rel *release.Release) (names []string, exact bool) {
	if t, err := loc.Open(ctx, o); err == nil {
		if p, ok := t.(publish.Planner); ok {
			if names, err := p.Planned(rel); err == nil {
				return names, true
			}
		}
	}
	for _, p := range rel.Providers {
		for _, f := range p.Assets() {
			names = append(names, p.Label()+"/"+p.Version+"/"+f.Name)
		}
	}
	return names, false
}

// assetSizes are the sizes of rel's files by every name a summary gives a
// file: NAME (a flat set), LABEL/NAME (a package per provider),
// LABEL/VERSION/NAME (a folder tree).
func assetSizes(rel *release.Release) map[string]int {
	sizes := map[string]int{}
	for _, p := range rel.Providers {
		for _, f := range p.Assets() {
			for _, n := range []string{f.Name, p.Label() + "/" + f.Name, p.Label() + "/" + p.Version + "/" + f.Name} {
				sizes[n] = len(f.Data)
			}
		}
	}
	for _, f := range rel.Attached {
		sizes[f.Name] = len(f.Data)
	}
	return sizes
}
