package provider

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/internal/option"
)

// ParseVersion parses a release version. Releases are tagged with a leading
// "v" (clusterctl resolves "latest" as "v"+semver), so one is required.
func ParseVersion(v string) (*semver.Version, error) {
	if v == "" {
		return nil, fmt.Errorf("no release version: pass %s vX.Y.Z or set version: in capirepo.yaml", option.Version)
	}
	if !strings.HasPrefix(v, "v") {
		return nil, fmt.Errorf("version %q must start with 'v'%s: clusterctl asks for tags as v<semver>", v, didYouMeanVersion(v))
	}
	sv, err := semver.StrictNewVersion(v[1:])
	if err != nil {
		return nil, fmt.Errorf("version %q is not semantic (vMAJOR.MINOR.PATCH[-pre][+build])%s: %w", v, didYouMeanVersion(v), err)
	}
	return sv, nil
}

// didYouMeanVersion suggests the full form of a short or v-less version
// (1.2 -> v1.2.0), when there is one.
func didYouMeanVersion(v string) string {
	sv, err := semver.NewVersion(v)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (did you mean v%s?)", sv)
}

// NextVersion is the version a tree is developing, for the builds and lints
// that name none (capirepo dev, capirepo lint of a source tree): the spec's
// nextVersion (clusterctl-settings.json's, or capirepo.yaml's), unless the
// tree's metadata.yaml already lists a newer release series, which makes
// that nextVersion stale; else vX.Y.99 of the newest release series of
// metadata.yaml, the convention cluster-api's own nextVersion follows (a
// patch number no release takes, so a dev build never passes for one).
// from says which, in words; a tree with neither is an error.
func NextVersion(dir string, s Spec) (version, from string, err error) {
	file := filepath.Join(dir, filepath.FromSlash(s.Metadata))
	var newest *clusterctlv1.ReleaseSeries
	data, rerr := fsafe.ReadFile(file)
	if rerr == nil {
		md, err := ParseMetadata(s.Metadata, data)
		if err != nil {
			return "", "", err
		}
		newest = NewestSeries(md)
	}
	if s.NextVersion != "" {
		sv, err := ParseVersion(s.NextVersion)
		if err != nil {
			return "", "", fmt.Errorf("nextVersion of %s: %w", s.Name, err)
		}
		if newest == nil || uint64(newest.Major) < sv.Major() || (uint64(newest.Major) == sv.Major() && uint64(newest.Minor) <= sv.Minor()) {
			return s.NextVersion, "nextVersion of " + s.Name, nil
		}
	}
	if newest == nil {
		return "", "", fmt.Errorf("provider %s has no nextVersion and no %s to derive one from: %w", s.Name, s.Metadata, rerr)
	}
	from = fmt.Sprintf("the newest release series of %s, %d.%d", s.Metadata, newest.Major, newest.Minor)
	if s.NextVersion != "" {
		from += fmt.Sprintf("; nextVersion %s of %s is older", s.NextVersion, s.Name)
	}
	return fmt.Sprintf("v%d.%d.99", newest.Major, newest.Minor), from, nil
}
