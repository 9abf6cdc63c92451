package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/internal/markdown"
)

// TestStepSummary_EachCommandAppendsItsMarkdown: with GITHUB_STEP_SUMMARY
// set, lint, diff, verify and release append to the file (after what
// earlier steps wrote) exactly what -o markdown prints, whatever --output
// says and whether the command passed or not; the whole summary renders.
// Without the variable nothing is written.
func TestStepSummary_EachCommandAppendsItsMarkdown(t *testing.T) {
	example := exampleDir(t)
	reportFixtures(t, example)
	summary := filepath.Join(t.TempDir(), "step_summary.md")
	const earlier = "# An earlier step\n\nIts own summary.\n\n"
	if err := os.WriteFile(summary, []byte(earlier), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GITHUB_STEP_SUMMARY": summary}
	want := earlier
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"lint", "broken", "--version", "v0.1.0"}, 1},
		{[]string{"lint", "new", "--against", "old", "-o", "json"}, 0},
		{[]string{"diff", "old", "new", "-o", "sarif"}, 0},
		{[]string{"verify", "old"}, 0},
		{[]string{"release", example, "--version", "v0.1.1", "--dry-run", "--skip-image-check", "--out", "dist", "--against", "old"}, 0},
	} {
		code, _, stderr := runCmd(t, env, c.args...)
		if code != c.code {
			t.Fatalf("capirepo %s: exit %d, want %d: %s", strings.Join(c.args, " "), code, c.code, stderr)
		}
		md := markdownOf(t, c.args)
		want += md + "\n"
		got, err := os.ReadFile(summary)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("capirepo %s: the summary is\n%s\nwant\n%s", strings.Join(c.args, " "), got, want)
		}
	}
	if err := markdown.Check(want); err != nil {
		t.Errorf("the job summary does not render as written: %v", err)
	}
	runCmd(t, nil, "verify", "old")
	if got, _ := os.ReadFile(summary); string(got) != want {
		t.Error("a run without GITHUB_STEP_SUMMARY wrote the summary")
	}
}

// markdownOf is what the command prints with -o markdown in place of its
// --output.
func markdownOf(t *testing.T, args []string) string {
	t.Helper()
	var clean []string
	for i := 0; i < len(args); i++ {
		if args[i] == "-o" {
			i++
			continue
		}
		clean = append(clean, args[i])
	}
	_, stdout, _ := runCmd(t, nil, append(clean, "-o", "markdown")...)
	return stdout
}

// TestStepSummary_MasksSecretsAndNeverFailsTheCommand: a token in what the
// report names is masked in the summary as on stdout; a summary file that
// cannot be written (a folder) is a warning, and the command's exit code
// and output stand.
func TestStepSummary_MasksSecretsAndNeverFailsTheCommand(t *testing.T) {
	reportFixtures(t, exampleDir(t))
	const token = "ghp_summarysecret0123456789"
	if err := os.Rename("old", token); err != nil {
		t.Fatal(err)
	}
	summary := filepath.Join(t.TempDir(), "summary.md")
	code, _, stderr := runCmd(t, map[string]string{"GITHUB_STEP_SUMMARY": summary, "GITHUB_TOKEN": token}, "diff", token, "new")
	got, err := os.ReadFile(summary)
	if code != 0 || err != nil || strings.Contains(string(got), token) || !strings.Contains(string(got), "[REDACTED]") {
		t.Errorf("exit %d (%s), summary (%v):\n%s", code, stderr, err, got)
	}
	folder := t.TempDir()
	code, stdout, stderr := runCmd(t, map[string]string{"GITHUB_STEP_SUMMARY": folder}, "diff", token, "new", "-o", "json")
	if code != 0 || !strings.Contains(stdout, `"findings"`) || !strings.Contains(stderr, "warning: the job summary (GITHUB_STEP_SUMMARY "+folder+") was not written") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}
