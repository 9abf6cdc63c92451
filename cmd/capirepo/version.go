package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set by the release build (-X main.version=...).
var version = ""

type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// develVersion is what Go records for a main module built without a
// version: go build or go install from a checkout with -buildvcs=false (or
// from a git worktree, or an archive with no .git).
const develVersion = "(devel)"

func readBuildInfo() buildInfo {
	info, _ := debug.ReadBuildInfo()
	return buildInfoFrom(version, info)
}

// buildInfoFrom says which capirepo this is: the release build's version
// (-X main.version); else the module version Go records, which go install
// module@v1.2.3 sets to the tag, go install module@COMMIT to a
// pseudo-version (v0.0.0-20250101120000-abcdef123456), and go build in a
// git checkout to the tag or pseudo-version of HEAD (+dirty with local
// changes); else, when Go recorded only the commit, that commit.
func buildInfoFrom(ldVersion string, info *debug.BuildInfo) buildInfo {
	bi := buildInfo{Version: ldVersion, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info != nil {
		if bi.Version == "" && info.Main.Version != develVersion {
			bi.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				bi.Commit = s.Value
			case "vcs.time":
				bi.Date = s.Value
			case "vcs.modified":
				bi.Modified = s.Value == "true"
			}
		}
	}
	if bi.Version == "" && bi.Commit != "" {
		bi.Version = develVersion + " " + shortCommit(bi.Commit)
		if bi.Modified {
			bi.Version += "+dirty"
		}
	}
	if bi.Version == "" {
		bi.Version = develVersion
	}
	return bi
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func newVersionCmd(s streams, g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print capirepo's version and build information",
		Example: `  capirepo version
  capirepo version -o json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			bi := readBuildInfo()
			if g.output == "json" {
				return printJSON(s.out, bi)
			}
			fmt.Fprintf(s.out, "capirepo %s\n", bi.Version)
			if bi.Commit != "" {
				fmt.Fprintf(s.out, "commit:   %s (modified: %v)\ndate:     %s\n", bi.Commit, bi.Modified, bi.Date)
			}
			fmt.Fprintf(s.out, "go:       %s %s\n", bi.GoVersion, bi.Platform)
			if bi.Version == develVersion {
				fmt.Fprintln(s.errOut, "capirepo version: built without version information (-buildvcs=false, a git worktree or a source archive);"+
					" go install github.com/capirepo/capirepo/cmd/capirepo@COMMIT (or @TAG) records the version")
			}
			return nil
		},
	}
}
