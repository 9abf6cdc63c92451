package provider

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// ParseVersion parses a release version. Releases are tagged with a leading
// "v" (clusterctl resolves "latest" as "v"+semver), so one is required.
func ParseVersion(v string) (*semver.Version, error) {
	if v == "" {
		return nil, fmt.Errorf("no release version: pass --version vX.Y.Z or set version: in capirepo.yaml")
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
