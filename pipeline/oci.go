package pipeline

import (
	"bytes"
	"context"
	"fmt"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/verify"
)

// verifyReader reads every provider of the release back from a target
// through its publish.Source (an OCI registry: by the operator's rules),
// checks that the files are the ones built, and hands them to clusterctl's
// client as verify does for a local tree.
func (r *run) verifyReader(ctx context.Context, t Target, rd publish.Source) (string, error) {
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
	rep, err := verify.Providers(ctx, got, t.Raw, verify.Options{Variables: r.o.Variables})
	if rep != nil {
		_ = rep.WriteText(r.o.Log)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d providers read back from %s by the operator's rules, then through clusterctl", len(rep.Providers), t.Raw), nil
}

// SourceURL is the https URL of dir's git origin remote, without any
// credentials it may hold; "" if there is none.
func SourceURL(ctx context.Context, dir string) string { return gitSource(ctx, dir) }
