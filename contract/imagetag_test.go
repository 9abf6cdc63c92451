package contract

import "testing"

func TestOtherReleaseTag(t *testing.T) {
	cases := []struct {
		tag, version string
		want         bool
	}{
		{"v0.15.0", "v0.15.1", true}, // kamaji #233
		{"0.15.0", "v0.15.1", true},
		{"v0.15.1", "v0.15.1", false},
		{"0.15.1", "v0.15.1", false},
		{"v0.15.1-ubi", "v0.15.1", false},    // a build of this release
		{"v1.2.0", "v1.2.0-rc.1", true},      // the final release, not the candidate
		{"v1.2.0-rc.0", "v1.2.0-rc.1", true}, // another candidate
		{"v1.2.0-rc.1", "v1.2.0-rc.1", false},
		{"sha-1a2b3c4", "v0.15.1", false}, // no version
		{"20250101", "v0.15.1", false},
		{"v1.2", "v1.2.3", false}, // not a whole version: no release's
		{"v0.15.0", "", false},
	}
	for _, c := range cases {
		if got := otherReleaseTag(c.tag, c.version); got != c.want {
			t.Errorf("otherReleaseTag(%q, %q) = %v, want %v", c.tag, c.version, got, c.want)
		}
	}
}
