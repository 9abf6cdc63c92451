package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/testtree"
)

var update = flag.Bool("update", false, "rewrite the golden --help outputs under testdata/help")

// allCommands lists every command of the tree (not cobra's own help and
// completion), root first.
func allCommands() []*cobra.Command {
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		out = append(out, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(streams{out: io.Discard, errOut: io.Discard, getenv: func(string) string { return "" }}))
	return out
}

// TestHelp_Golden: every command's --help, as a user sees it, is kept under
// testdata/help (go test ./cmd/capirepo -run Help_Golden -update), so a
// change to a flag or text shows in review; each has examples, on stdout.
func TestHelp_Golden(t *testing.T) {
	for _, c := range allCommands() {
		path := c.CommandPath()
		t.Run(path, func(t *testing.T) {
			if c.Example == "" {
				t.Errorf("%s has no Example", path)
			}
			args := append(strings.Fields(path)[1:], "--help")
			code, stdout, stderr := runCmd(t, nil, args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			golden := filepath.Join("testdata", "help", strings.ReplaceAll(path, " ", "_")+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./cmd/capirepo -run Help_Golden -update)", err)
			}
			if diff := cmp.Diff(string(want), stdout); diff != "" {
				t.Errorf("%s --help changed (-golden +now; -update to accept):\n%s", path, diff)
			}
		})
	}
}

// TestHelp_AllowRemoteAdviceOnlyWhereTheFlagExists: every command that
// renders a source tree refuses a remote base with advice to pass
// --allow-remote, and has that flag.
func TestHelp_AllowRemoteAdviceOnlyWhereTheFlagExists(t *testing.T) {
	tree := testtree.Write(t, testtree.Minimal(map[string]string{
		"config/manager/kustomization.yaml": "resources:\n- manager.yaml\n- https://example.com/remote.yaml\n",
	}))
	for _, args := range [][]string{
		{"build", tree, "--version", "v1.2.0", "--out", t.TempDir()},
		{"release", tree, "--version", "v1.2.0", "--out", t.TempDir(), "--dry-run"},
		{"lint", tree, "--version", "v1.2.0"},
		{"dev", tree, "--version", "v1.2.99", "--out", t.TempDir()},
	} {
		code, _, stderr := runCmd(t, map[string]string{"HOME": t.TempDir()}, args...)
		if code != 1 || !strings.Contains(stderr, "remote base") {
			t.Errorf("%s: exit %d, want 1 and a remote base refused: %s", args[0], code, stderr)
		}
		if strings.Contains(stderr, "--allow-remote") {
			if _, help, _ := runCmd(t, nil, args[0], "--help"); !strings.Contains(help, "--allow-remote") {
				t.Errorf("%s advises --allow-remote, which it does not have", args[0])
			}
		}
	}
}
