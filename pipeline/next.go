package pipeline

import (
	"fmt"

	"github.com/capirepo/capirepo/publish"
)

// next says what a maintainer does after the run, in Next: for a dry run,
// what a real run would publish where; after publishing, the clusterctl
// config of the first target clusterctl reads (written to ConfigOut,
// atomically, when set) and the clusterctl init line that tries the
// release with it, as every publish command says it (publish.NextSteps).
func (r *run) next() error {
	rel := r.b.Result.Release
	if r.o.DryRun {
		files, size := 0, 0
		for _, p := range rel.Providers {
			for _, f := range p.Assets() {
				files++
				size += len(f.Data)
			}
		}
		for _, loc := range r.o.Targets {
			r.sum.Next = append(r.sum.Next, fmt.Sprintf("a real run would publish %d files (%s) of %s to %s", files, humanBytes(int64(size)), rel.Version, loc.URL))
		}
		return nil
	}
	for i, ps := range r.sum.Published {
		if r.sum.Targets[i].Reader != "" { // the operator reads it, not clusterctl
			continue
		}
		next, err := publish.NextSteps(ps, r.o.ConfigOut)
		if err != nil {
			return err
		}
		r.sum.Next = append(r.sum.Next, next...)
		return nil
	}
	return nil
}
