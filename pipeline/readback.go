package pipeline

import (
	"bytes"
	"context"
	"fmt"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/verify"
)

// readBack reads every provider of the release back from a target through
// its Source (an OCI registry: by the operator's rules), checks that the
// files are the ones built, and hands them to clusterctl's client as verify
// does for a local tree.
func (r *run) readBack(ctx context.Context, loc targets.Location, rd publish.Source, reader string) (string, error) {
	rel := r.b.Result.Release
	var got []*release.Provider
	for _, p := range rel.Providers {
		rp, err := publish.Read(ctx, rd, publish.Ref{ID: p.ID, Version: p.Version, Components: p.ComponentsFile})
		if err != nil {
			return "", fmt.Errorf("read back %s %s: %w", p.Label(), p.Version, err)
		}
		for _, f := range rp.Files {
			want, ok := p.File(f.Name)
			if !ok || !bytes.Equal(want.Data, f.Data) {
				return "", fmt.Errorf("read back %s %s: %s is not the file that was built", p.Label(), p.Version, f.Name)
			}
		}
		got = append(got, rp)
	}
	rep, err := verify.Providers(ctx, got, loc.URL, verify.Options{Variables: r.o.Variables})
	if rep != nil {
		_ = rep.WriteText(r.o.Log)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d providers read back from %s by %s's rules, then through clusterctl", len(rep.Providers), loc.URL, reader), nil
}
