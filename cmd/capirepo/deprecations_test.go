//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/types"

	"github.com/capirepo/capirepo/internal/testtree"
)

// runProcess runs the test binary as capirepo (TestMain) with args and
// returns its exit code, stdout and stderr: kustomize prints to the
// process's descriptor 2, which only a real process shows.
func runProcess(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if exit := (*exec.ExitError)(nil); err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// deprecationTexts are kustomize's notices for the fields the tree
// deprecates, without kustomize's "# Warning: " (capirepo's warning starts
// with "kustomize: " instead).
func deprecationTexts(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, field := range []string{"bases: []", "commonLabels: {}", "patchesStrategicMerge: []"} {
		var k types.Kustomization
		if err := k.Unmarshal([]byte(field)); err != nil {
			t.Fatal(err)
		}
		ns := *k.CheckDeprecatedFields()
		if len(ns) != 1 {
			t.Fatalf("%s: %q", field, ns)
		}
		out[field] = strings.TrimPrefix(ns[0], "# Warning: ")
	}
	return out
}

// TestProcess_KustomizeDeprecationsOnceOnStderr: build, lint, dev and
// release of a tree
// whose kustomizations use deprecated fields say each of kustomize's
// deprecation notices once on stderr (kustomize prints it at every load of
// the file, in every render), with the file and how many renders gave it;
// the rest of stderr is there, in its order.
func TestProcess_KustomizeDeprecationsOnceOnStderr(t *testing.T) {
	dir := testtree.Write(t, testtree.DeprecatedKustomize())
	texts := deprecationTexts(t)
	warnings := []string{"warning: kustomize: " + texts["bases: []"], "warning: kustomize: " + texts["commonLabels: {}"], "warning: kustomize: " + texts["patchesStrategicMerge: []"]}
	dev := filepath.Join(t.TempDir(), "dev")
	// The same tree without metadata.yaml: the lint refuses it.
	refused := testtree.Write(t, testtree.DeprecatedKustomize())
	if err := os.Remove(filepath.Join(refused, "metadata.yaml")); err != nil {
		t.Fatal(err)
	}
	// The same tree with a file its manager kustomization names missing:
	// the build fails, after every render ran.
	broken := testtree.Write(t, testtree.DeprecatedKustomize())
	if err := os.WriteFile(filepath.Join(broken, "config/manager/kustomization.yaml"), []byte("resources:\n- manager.yaml\n- missing.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		// in this order on stderr
		ordered []string
		code    int
	}{
		{"build", []string{"build", dir, "--version", "v1.2.3", "--out", filepath.Join(t.TempDir(), "dist")}, warnings, 0},
		// said before the lint's report, so a refused tree hears them too
		{"build refused by the lint", []string{"build", refused, "--version", "v1.2.3", "--out", filepath.Join(t.TempDir(), "dist")},
			slices.Concat(warnings, []string{"CAPI", "nothing was written"}), 1},
		// no --version: a line before the build, the report after it
		{"lint", []string{"lint", dir}, slices.Concat([]string{"lint: no --version: linting as v1.2.99"}, warnings, []string{"0 errors"}), 0},
		// a build that fails still says them (kustomize's own prints
		// were dropped), before the error
		{"build that fails", []string{"build", broken, "--version", "v1.2.3", "--out", filepath.Join(t.TempDir(), "dist")},
			slices.Concat(warnings, []string{"Error: ", "missing.yaml is missing"}), 1},
		{"dev that fails", []string{"dev", "--dir", broken, "--out", filepath.Join(t.TempDir(), "dev")},
			slices.Concat(warnings, []string{"Error: ", "missing.yaml is missing"}), 1},
		{"dev", []string{"dev", "--dir", dir, "--out", dev}, warnings, 0},
		// the folder is reused: the render's warnings are said again
		{"dev again", []string{"dev", "--dir", dir, "--out", dev}, warnings, 0},
		// the steps' progress around them
		{"release", []string{"release", dir, "--version", "v1.2.3", "--publish", "file://" + filepath.Join(t.TempDir(), "repo"), "--skip-image-check", "--out", filepath.Join(t.TempDir(), "dist")},
			slices.Concat([]string{"[1/8] build\n"}, warnings, []string{"[1/8] build: ok", "[2/8] lint\n", "[6/8] verify dist", "[8/8] verify"}), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runProcess(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			for field, text := range texts {
				if n := strings.Count(stderr, text); n != 1 {
					t.Errorf("%s: kustomize's notice is on stderr %d times, want once:\n%s", field, n, stderr)
				}
				if strings.Contains(stdout, text) {
					t.Errorf("%s: kustomize's notice is on stdout:\n%s", field, stdout)
				}
			}
			at := 0
			for _, want := range c.ordered {
				i := strings.Index(stderr[at:], want)
				if i < 0 {
					t.Fatalf("stderr has no %q after byte %d:\n%s", want, at, stderr)
				}
				at += i + len(want)
			}
			if c.name == "build" {
				// The warnings and the one edit the build made (the
				// manager image's version tag), each said once.
				if got, want := strings.Count(stderr, "\n"), len(warnings)+1; got != want || strings.Count(stderr, "edited: ") != 1 {
					t.Errorf("build's stderr has %d lines, want the %d warnings and the image edit:\n%s", got, want-1, stderr)
				}
			}
		})
	}
}
