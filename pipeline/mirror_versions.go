package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
)

// resolve turns a requested version (vX.Y.Z, latest, latest-N) into the
// published versions to mirror, oldest first.
func (m *mirror) resolve(ctx context.Context, p *MirroredProvider, want string) ([]string, error) {
	all, err := p.reader.Versions(ctx, p.id)
	if err != nil {
		return nil, fmt.Errorf("list versions at %s: %w", p.Source, err)
	}
	if want != "latest" && !isLatestN(want) {
		if !slices.Contains(all, want) {
			return nil, fmt.Errorf("%s is not a published release at %s (drafts and tags without a release are not mirrored)", want, p.Source)
		}
		return []string{want}, nil
	}
	latest, err := m.latest(ctx, p, all)
	if err != nil {
		return nil, err
	}
	n := 0
	if s, ok := strings.CutPrefix(want, "latest-"); ok {
		n, _ = strconv.Atoi(s)
	}
	lv := version.MustParseSemantic(latest)
	out := []string{latest}
	for _, sv := range sortedCandidates(all, nil, nil) {
		if len(out) > n {
			break
		}
		if !sv.LessThan(lv) || (sv.PreRelease() != "" && lv.PreRelease() == "") {
			continue
		}
		v := "v" + sv.String()
		if err := m.hasMetadata(ctx, p, v); errors.Is(err, publish.ErrNotFound) {
			m.logf("%s: skipping %s: %v", p.Label, v, err)
			continue
		} else if err != nil {
			return nil, fmt.Errorf("read %s: %w", v, err)
		}
		out = append(out, v)
	}
	slices.Reverse(out)
	return out, nil
}

// latest is the version clusterctl resolves for a latest URL
// (repository_versions.go latestContractRelease): the newest release (a
// release before any pre-release) whose metadata.yaml can be read; if its
// metadata maps the current contract to another series, the newest patch
// of that series.
func (m *mirror) latest(ctx context.Context, p *MirroredProvider, all []string) (string, error) {
	latest, err := m.latestPatch(ctx, p, all, nil, nil)
	if err != nil {
		return "", err
	}
	data, err := m.metadata(ctx, p, latest)
	if err != nil {
		return "", err
	}
	md, err := provider.ParseMetadata(provider.MetadataFile, data)
	if err != nil {
		return latest, nil //nolint:nilerr // clusterctl takes the latest when its metadata cannot be decoded
	}
	series := md.GetReleaseSeriesForContract(clusterv1.GroupVersion.Version)
	if series == nil {
		return latest, nil
	}
	sv := version.MustParseSemantic(latest)
	if sv.Major() != uint(series.Major) || sv.Minor() != uint(series.Minor) {
		return m.latestPatch(ctx, p, all, &series.Major, &series.Minor)
	}
	return latest, nil
}

// latestPatch is clusterctl's latestPatchRelease over the published
// versions: of the five newest candidates, the first whose metadata.yaml
// can be read.
func (m *mirror) latestPatch(ctx context.Context, p *MirroredProvider, all []string, major, minor *int32) (string, error) {
	cands := sortedCandidates(all, major, minor)
	cands = cands[:min(5, len(cands))]
	for _, sv := range cands {
		v := "v" + sv.String()
		err := m.hasMetadata(ctx, p, v)
		if errors.Is(err, publish.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("read %s: %w", v, err)
		}
		return v, nil
	}
	return "", fmt.Errorf("no published release at %s is tagged with a semantic version and holds a metadata.yaml", p.Source)
}

// sortedCandidates orders versions as clusterctl does: releases before
// pre-releases, newest first; tags that are no semantic version are dropped.
func sortedCandidates(all []string, major, minor *int32) []*version.Version {
	var out []*version.Version
	for _, v := range all {
		sv, err := version.ParseSemantic(v)
		if err != nil {
			continue
		}
		if (major != nil && sv.Major() != uint(*major)) || (minor != nil && sv.Minor() != uint(*minor)) {
			continue
		}
		out = append(out, sv)
	}
	slices.SortStableFunc(out, func(a, b *version.Version) int {
		ap, bp := a.PreRelease() != "", b.PreRelease() != ""
		switch {
		case ap && !bp:
			return 1
		case !ap && bp:
			return -1
		}
		switch {
		case b.LessThan(a):
			return -1
		case a.LessThan(b):
			return 1
		}
		return 0
	})
	return out
}

// metadata reads one version's metadata.yaml alone, so resolving latest
// downloads no components.
func (m *mirror) metadata(ctx context.Context, p *MirroredProvider, v string) ([]byte, error) {
	m.mu.Lock()
	data, ok := p.meta[v]
	m.mu.Unlock()
	if ok {
		return data, nil
	}
	fs, err := publish.ReadFiles(ctx, p.reader, p.ref(v), provider.MetadataFile)
	if err != nil {
		return nil, err
	}
	data = fs[0].Data
	m.mu.Lock()
	p.meta[v] = data
	m.mu.Unlock()
	return data, nil
}

// hasMetadata checks that a version holds a metadata.yaml, from the
// source's listing (no download).
func (m *mirror) hasMetadata(ctx context.Context, p *MirroredProvider, v string) error {
	_, _, err := publish.Files(ctx, p.reader, p.ref(v))
	return err
}
