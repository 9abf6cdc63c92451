// Package buildinfo says which capirepo is running: the version the
// release build sets, else what Go recorded of the module and the commit
// (capirepo version), and an ID of the build for caches of what it made.
package buildinfo

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
)

// Info says which capirepo this is.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Devel is what Go records for a main module built without a
// version: go build or go install from a checkout with -buildvcs=false (or
// from a git worktree, or an archive with no .git).
const Devel = "(devel)"

// Read says which capirepo this is: ldVersion is the version the release
// build sets (-X main.version), "" for any other build.
func Read(ldVersion string) Info {
	info, _ := debug.ReadBuildInfo()
	return From(ldVersion, info)
}

// From says which capirepo this is: the release build's version
// (-X main.version); else the module version Go records, which go install
// module@v1.2.3 sets to the tag, go install module@COMMIT to a
// pseudo-version (v0.0.0-20250101120000-abcdef123456), and go build in a
// git checkout to the tag or pseudo-version of HEAD (+dirty with local
// changes); else, when Go recorded only the commit, that commit.
func From(ldVersion string, info *debug.BuildInfo) Info {
	bi := Info{Version: ldVersion, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info != nil {
		if bi.Version == "" && info.Main.Version != Devel {
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
		bi.Version = Devel + " " + shortCommit(bi.Commit)
		if bi.Modified {
			bi.Version += "+dirty"
		}
	}
	if bi.Version == "" {
		bi.Version = Devel
	}
	return bi
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// ID identifies this capirepo build for a cache of what it made (dev's): a
// tagged build by its version, a development build also by its
// executable's size and time, since its source may have changed without a
// new version.
func (bi Info) ID() string {
	id := fmt.Sprintf("%s %s %v %s", bi.Version, bi.Commit, bi.Modified, bi.GoVersion)
	if bi.Version == Devel || bi.Modified || bi.Commit == "" {
		if exe, err := os.Executable(); err == nil {
			if fi, err := os.Stat(exe); err == nil {
				id += fmt.Sprintf(" %s %d %d", exe, fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	return id
}

// WriteText prints the build for people: the version, the commit and its
// date, Go and the platform on out; on errOut, for a build that recorded no
// version, how to install one that does.
func (bi Info) WriteText(out, errOut io.Writer) error {
	fmt.Fprintf(out, "capirepo %s\n", bi.Version)
	if bi.Commit != "" {
		fmt.Fprintf(out, "commit:   %s (modified: %v)\ndate:     %s\n", bi.Commit, bi.Modified, bi.Date)
	}
	_, err := fmt.Fprintf(out, "go:       %s %s\n", bi.GoVersion, bi.Platform)
	if bi.Version == Devel {
		fmt.Fprintln(errOut, "capirepo version: built without version information (-buildvcs=false, a git worktree or a source archive);"+
			" go install github.com/capirepo/capirepo/cmd/capirepo@COMMIT (or @TAG) records the version")
	}
	return err
}

// WriteJSON prints the build as one JSON document.
func (bi Info) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(bi)
}
