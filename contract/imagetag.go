package contract

import (
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/capirepo/capirepo/provider"
)

// otherReleaseTag says whether an image tag names a release other than
// version: a semantic version (with or without its v) of another
// major.minor.patch, or, for a pre-release, of another pre-release or the
// final release. A suffix the tag adds to the release's own version
// (v1.2.3-ubi, v1.2.3-amd64) names a build of this release, and a tag that is
// no version (sha-1a2b3c, 20250101) names none: neither is another release's.
func otherReleaseTag(tag, version string) bool {
	rv, err := provider.ParseVersion(version)
	if err != nil {
		return false
	}
	tv, err := semver.StrictNewVersion(strings.TrimPrefix(tag, "v"))
	if err != nil {
		return false
	}
	if tv.Major() != rv.Major() || tv.Minor() != rv.Minor() || tv.Patch() != rv.Patch() {
		return true
	}
	return rv.Prerelease() != "" && tv.Prerelease() != rv.Prerelease()
}
