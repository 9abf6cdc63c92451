package pipeline_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/sign/signtest"
)

// TestRelease_NotesUpgradeAppendsWhatTheUpgradeStepFound: with NotesUpgrade
// a GitHub release and a GitLab Release get, after the maintainer's notes,
// the "Upgrading from" section of the release before (v0.1.0, read from the
// target by the upgrade step): that step's own comparison (the summary's
// Upgrade, rendered), then how to verify the signatures the run made, for
// its identity. Without it the notes are the maintainer's alone; a target
// without release notes says so.
func TestRelease_NotesUpgradeAppendsWhatTheUpgradeStepFound(t *testing.T) {
	srv := fakegh.New(t, fakegh.WithToken(ghToken))
	gl := fakegl.New(t)
	gl.AddProject(41, "infra/notes", false)
	gl.AddToken("glpat-notes", fakegl.AccessToken)
	ss := signtest.New(t)
	for _, tc := range []struct {
		name, target string
		notesUpgrade bool
		notes        func() string // the notes the target holds for v0.1.1
	}{
		{"github", "github://example/notes", true, func() string { return srv.Releases("example", "notes")[1].Body }},
		{"github without", "github://example/plain", false, func() string { return srv.Releases("example", "plain")[1].Body }},
		{"gitlab release", "gitlab://gitlab.example.com/infra/notes", true, func() string { return gl.Releases("41")[1].Description }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if owner, repo, ok := strings.Cut(strings.TrimPrefix(tc.target, "github://"), "/"); ok && strings.HasPrefix(tc.target, "github://") {
				srv.AddRepo(owner, repo, false)
			}
			release := func(version string) (*pipeline.ReleaseSummary, string) {
				var log bytes.Buffer
				o := exampleRun(t, &log)
				o.Build.Version, o.Targets, o.NotesUpgrade = version, locations(t, tc.target), tc.notesUpgrade
				o.TargetOptions = targets.Options{GitHub: github.Options{Token: ghToken, APIURL: srv.APIURL(), Notes: "Highlights.\n"},
					GitLab: gitlab.Options{URL: gl.URL, Token: "glpat-notes", Release: true, Ref: "main", Notes: "Highlights.\n"}}
				o.Sign = &pipeline.SignOptions{Provenance: true, Signer: keyless(t, ss)}
				sum, err := pipeline.Release(context.Background(), o)
				if err != nil {
					t.Fatalf("release %s: %v\n%s", version, err, log.String())
				}
				return sum, log.String()
			}
			release("v0.1.0")
			sum, log := release("v0.1.1")
			got := tc.notes()
			if !tc.notesUpgrade {
				if got != "Highlights.\n" || sum.UpgradeNotes != "" {
					t.Errorf("notes without --notes-upgrade:\n%s", got)
				}
				return
			}
			if len(sum.Upgrade) != 1 || sum.Upgrade[0].Old != "v0.1.0" {
				t.Fatalf("the upgrade step compared %+v", sum.Upgrade)
			}
			var fromStep bytes.Buffer
			if err := sum.Upgrade[0].WriteMarkdown(&fromStep, 2); err != nil {
				t.Fatal(err)
			}
			if got != "Highlights.\n\n"+sum.UpgradeNotes || !strings.HasPrefix(sum.UpgradeNotes, fromStep.String()) {
				t.Errorf("notes:\n%s\nwant Highlights, then the upgrade step's section:\n%s", got, fromStep.String())
			}
			for _, want := range []string{"## Upgrading from v0.1.0\n", "### Verifying the signatures\n",
				"cosign verify-blob checksums.txt --bundle checksums.txt.sigstore.json \\\n  --certificate-identity \"" + signIdentity + "\" \\\n  --certificate-oidc-issuer " + signtest.GitHubIssuer} {
				if !strings.Contains(got, want) {
					t.Errorf("notes lack %q:\n%s", want, got)
				}
			}
			if !strings.Contains(log, `--notes-upgrade: the release notes get the section "Upgrading from v0.1.0"`) {
				t.Errorf("the log does not say so:\n%s", log)
			}
		})
	}
}

// TestRelease_NotesUpgradeWithoutNotesOrWithoutAnOlderRelease: a folder
// tree has no release notes, and the first release compares with nothing:
// each is said, and nothing fails.
func TestRelease_NotesUpgradeWithoutNotesOrWithoutAnOlderRelease(t *testing.T) {
	target := "file://" + t.TempDir()
	for _, c := range []struct{ version, want string }{
		{"v0.1.0", "--notes-upgrade: the upgrade step compared no release (no release below v0.1.0 at " + target + ": nothing to compare)"},
		{"v0.1.1", "--notes-upgrade: this target has no release notes"},
	} {
		var log bytes.Buffer
		o := exampleRun(t, &log)
		o.Build.Version, o.Targets, o.Open, o.NotesUpgrade = c.version, locations(t, target), openLocal, true
		if _, err := pipeline.Release(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), c.want) {
			t.Errorf("%s: the log lacks %q:\n%s", c.version, c.want, log.String())
		}
	}
}
