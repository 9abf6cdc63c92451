package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestVersion_FromWhatGoRecords: capirepo version reports what the build
// recorded, for each way capirepo is installed.
func TestVersion_FromWhatGoRecords(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "3930a57b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f"
	for _, c := range []struct {
		name     string
		ld       string
		info     *debug.BuildInfo
		want     string
		commit   string
		modified bool
	}{
		{name: "release build (goreleaser -X main.version)", ld: "v0.2.0", info: &debug.BuildInfo{Main: debug.Module{Version: Devel}}, want: "v0.2.0"},
		{name: "go install module@tag", info: &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, want: "v0.2.0"},
		{name: "go install module@commit", info: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260102030405-3930a57b1c2d"}}, want: "v0.0.0-20260102030405-3930a57b1c2d"},
		{name: "go build in a git checkout with changes", info: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260102030405-3930a57b1c2d+dirty"}, Settings: vcs(rev, "true")},
			want: "v0.0.0-20260102030405-3930a57b1c2d+dirty", commit: rev, modified: true},
		{name: "only the commit recorded", info: &debug.BuildInfo{Main: debug.Module{Version: Devel}, Settings: vcs(rev, "false")}, want: "(devel) 3930a57b1c2d", commit: rev},
		{name: "only the commit, modified", info: &debug.BuildInfo{Main: debug.Module{Version: Devel}, Settings: vcs(rev, "true")}, want: "(devel) 3930a57b1c2d+dirty", commit: rev, modified: true},
		{name: "nothing recorded (-buildvcs=false)", info: &debug.BuildInfo{Main: debug.Module{Version: Devel}}, want: Devel},
		{name: "no build info", want: Devel},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := From(c.ld, c.info)
			if diff := cmp.Diff([3]any{c.want, c.commit, c.modified}, [3]any{got.Version, got.Commit, got.Modified}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
