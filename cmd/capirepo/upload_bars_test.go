package main

import (
	"strings"
	"testing"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
)

// barMarks are what a drawn bar holds: its counters and the terminal's
// escape sequences that redraw it.
var barMarks = []string{"KiB", "\x1b["}

func TestUploadBars_NothingIsDrawnWhenStderrIsNoTerminal(t *testing.T) {
	const token = "ghp_cli-bars-token"
	srv := fakegh.New(t, fakegh.WithToken(token))
	srv.AddRepo("acme", "example", false)
	dist := buildExample(t)
	env := map[string]string{"GITHUB_TOKEN": token, "GITHUB_API_URL": srv.APIURL()}
	code, _, stderr := runCmd(t, env, "publish", "github", "--repo", "acme/example", dist)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "uploaded") {
		t.Errorf("stderr lacks the upload lines:\n%s", stderr)
	}
	for _, m := range barMarks {
		if strings.Contains(stderr, m) {
			t.Errorf("stderr (a bytes.Buffer) holds %q of a progress bar:\n%q", m, stderr)
		}
	}
}
