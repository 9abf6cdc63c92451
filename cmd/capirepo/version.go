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

func readBuildInfo() buildInfo {
	bi := buildInfo{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		if bi.Version == "" {
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
	if bi.Version == "" {
		bi.Version = "(devel)"
	}
	return bi
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
			return nil
		},
	}
}
