package pipeline

import (
	"fmt"
	"path/filepath"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/publish"
)

// next says what a maintainer does after the run, in Next: for a dry run,
// what a real run would publish where; after publishing, the clusterctl
// config of the first target clusterctl reads (written to ConfigOut,
// atomically, when set) and the clusterctl init line that tries the
// release with it.
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
		cfg := publish.ClusterctlConfig{Providers: ps.Providers}.YAML()
		file := "FILE"
		if r.o.ConfigOut != "" {
			abs, err := filepath.Abs(r.o.ConfigOut)
			if err != nil {
				return err
			}
			if err := fsafe.WriteFileAtomic(abs, []byte(cfg)); err != nil {
				return fmt.Errorf("--config-out: %w", err)
			}
			file = abs
			r.sum.Next = append(r.sum.Next, fmt.Sprintf("clusterctl config for %s written to %s", ps.URL, abs))
		} else {
			r.sum.Next = append(r.sum.Next, fmt.Sprintf("save the clusterctl config printed for %s as FILE (or pass --config-out FILE)", ps.URL))
		}
		var ivs []publish.InitVersion
		for _, p := range rel.Providers {
			ivs = append(ivs, publish.InitVersion{ID: p.ID, Version: rel.Version})
		}
		r.sum.Next = append(r.sum.Next, "try it: "+publish.InitCommand(ivs, file))
		return nil
	}
	return nil
}
