package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/buildinfo"
)

// version is set by the release build (-X main.version=...).
var version = ""

// develVersion is what a build that recorded no version says it is.
const develVersion = buildinfo.Devel

func readBuildInfo() buildinfo.Info { return buildinfo.Read(version) }

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
