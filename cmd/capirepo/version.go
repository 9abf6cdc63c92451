package main

import (
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/buildinfo"
	"github.com/capirepo/capirepo/internal/cli"
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
			if g.output == cli.JSON {
				return readBuildInfo().WriteJSON(s.out)
			}
			return readBuildInfo().WriteText(s.out, s.errOut)
		},
	}
}
