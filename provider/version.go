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
		return nil, fmt.Errorf("version %q must start with 'v' (e.g. v%s): clusterctl asks for tags as v<semver>", v, v)
	}
	sv, err := semver.StrictNewVersion(v[1:])
	if err != nil {
		return nil, fmt.Errorf("version %q is not semantic (vMAJOR.MINOR.PATCH[-pre][+build]): %w", v, err)
	}
	return sv, nil
}
