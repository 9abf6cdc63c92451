package pipeline

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
)

// isMirrorExtra says whether a mirror copies a file beside what clusterctl
// reads, when upstream has it: checksums.txt, the provenance, the Sigstore
// bundles that sign them, and the SBOMs, so the mirror can be checked as
// upstream can.
func isMirrorExtra(name string) bool {
	return name == release.ChecksumsFile || release.IsAttached(name) || strings.HasSuffix(name, sign.SBOMSuffix)
}

// extras lists the extras a source holds for a version: its SBOMs, and
// when its checksums.txt is signed, that and the signatures and provenance.
// An unsigned checksums.txt stays out: a mirror keeps no claim it cannot
// check (a stale one would make the mirror unreadable).
func extras(ctx context.Context, src publish.Source, ref publish.Ref) (map[string]publish.Remote, error) {
	all, err := src.List(ctx, ref)
	if err != nil {
		return nil, err
	}
	_, signed := all[sign.BundleName(release.ChecksumsFile)]
	maps.DeleteFunc(all, func(name string, _ publish.Remote) bool {
		return !isMirrorExtra(name) || !signed && !strings.HasSuffix(name, sign.SBOMSuffix)
	})
	return all, nil
}

// addExtras downloads the extras upstream holds for a version read from it
// (those rp does not hold yet: an SBOM its checksums.txt names was read
// with the release) and puts them into rp as they were published: SBOMs as
// files, the rest attached (a mirror writes no checksums.txt of its own).
func addExtras(ctx context.Context, src publish.Source, ref publish.Ref, rp *release.Provider) error {
	have, err := extras(ctx, src, ref)
	if err != nil {
		return err
	}
	maps.DeleteFunc(have, func(name string, _ publish.Remote) bool {
		_, read := rp.File(name)
		return read
	})
	if len(have) == 0 {
		return nil
	}
	files, err := publish.ReadFiles(ctx, src, ref, slices.Sorted(maps.Keys(have))...)
	if err != nil {
		return err
	}
	for _, f := range files {
		add := rp.Attach
		if strings.HasSuffix(f.Name, sign.SBOMSuffix) {
			add = rp.Add
		}
		if err := add(f.Name, f.Data); err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
	}
	return nil
}

// requireSignatures checks, before anything is copied, that every version
// of a provider to mirror is signed upstream for the verifier: its signed
// checksums.txt lists every file the mirror copies with its sha256, and its
// provenance is signed too (sign.VerifyFiles; the files clusterctl does not
// read may be left out).
func (m *mirror) requireSignatures(ctx context.Context, p *MirroredProvider) error {
	for _, v := range p.resolved {
		rp, err := m.read(ctx, p, v)
		if err != nil {
			return fmt.Errorf("read %s from %s: %w", v, p.Source, err)
		}
		c, err := sign.VerifyFiles(m.o.RequireSignatures, p.Label+"/"+v, slices.Concat(rp.Files, rp.Attached), sign.VerifyFilesOptions{Partial: true, Version: v})
		if err != nil {
			return fmt.Errorf("upstream signatures (%s): %w", p.Source, err)
		}
		m.logf("%s %s: %d files match the checksums.txt signed %s", p.Label, v, c.Files, c.Signatures[release.ChecksumsFile])
	}
	return nil
}
