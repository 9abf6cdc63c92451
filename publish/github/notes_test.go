package github_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
)

func TestPublishGitHub_NewReleaseGetsTitleNotesAndGeneratedNotes(t *testing.T) {
	e := newEnv(t, false)
	e.srv.AddRelease(e.owner, e.repo, fakegh.Release{Tag: "v0.9.0", TargetCommitish: "old"})
	rel := fixture(t, "v1.0.0")
	sum, err := e.publisher(t, 0, func(o *github.Options) {
		o.Title, o.Notes, o.GenerateNotes = "Example v1.0.0", "Highlights: CA certificates in the image.\n", true
	}).Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	r := e.srv.Releases(e.owner, e.repo)[1]
	// The notes file first, then GitHub's notes for the range from the
	// latest release to the new tag, made for --target.
	want := "Highlights: CA certificates in the image.\n\n## What's Changed\n* Changes from v0.9.0 to v1.0.0 (0123abc)\n\n" +
		"**Full Changelog**: " + e.srv.URL + "/capi/example/compare/v0.9.0...v1.0.0"
	if r.Body != want || r.Name != "Example v1.0.0" || r.Draft || r.Prerelease {
		t.Errorf("release = name %q draft %v prerelease %v body:\n%s\nwant body:\n%s", r.Name, r.Draft, r.Prerelease, r.Body, want)
	}
	if got := e.srv.Tags(e.owner, e.repo)["v1.0.0"]; got != "0123abc" {
		t.Errorf("tag v1.0.0 made from %q, want the --target 0123abc", got)
	}
	if n := e.srv.Calls(fakegh.RouteGenerateNotes); n != 1 {
		t.Errorf("generate-notes called %d times, want 1", n)
	}
	if len(sum.Warnings) != 0 {
		t.Errorf("warnings: %q", sum.Warnings)
	}
}

func TestPublishGitHub_GeneratedNotesForANewTagNeedTheTarget(t *testing.T) {
	e := newEnv(t, false)
	e.srv.AddRelease(e.owner, e.repo, fakegh.Release{Tag: "v0.8.0", TargetCommitish: "a"})
	e.srv.AddRelease(e.owner, e.repo, fakegh.Release{Tag: "v0.9.0", TargetCommitish: "b"})
	before := e.state()
	_, err := e.publisher(t, 0, func(o *github.Options) { o.Commitish, o.GenerateNotes = "", true }).
		Publish(context.Background(), fixture(t, "v1.0.0"))
	if err == nil || !strings.Contains(err.Error(), "--target") {
		t.Fatalf("err = %v, want a hint to pass --target", err)
	}
	if diff := cmp.Diff(before, e.state()); diff != "" {
		t.Errorf("a failed notes generation changed the server (-before +after):\n%s", diff)
	}
	// --previous-tag picks the start of the range.
	if _, err := e.publisher(t, 0, func(o *github.Options) { o.GenerateNotes, o.PreviousTag = true, "v0.8.0" }).
		Publish(context.Background(), fixture(t, "v1.0.0")); err != nil {
		t.Fatal(err)
	}
	if b := e.srv.Releases(e.owner, e.repo)[2].Body; !strings.Contains(b, "compare/v0.8.0...v1.0.0") {
		t.Errorf("body = %q, want the range from --previous-tag v0.8.0", b)
	}
}

func TestPublishGitHub_NotesOfAnExistingReleaseChangeOnlyWithReplace(t *testing.T) {
	// Immutable: GitHub still lets the title and notes change.
	e := newEnv(t, true)
	rel := fixture(t, "v1.1.0")
	p := func(mod func(*github.Options)) *github.Target {
		return e.publisher(t, 0, func(o *github.Options) {
			o.Title, o.Notes, o.Commitish = "Second title", "new notes\n", ""
			if mod != nil {
				mod(o)
			}
		})
	}
	if _, err := e.publisher(t, 0, func(o *github.Options) { o.Title, o.Notes = "First title", "old notes\n" }).
		Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
	sum, err := p(nil).Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	r := e.srv.Releases(e.owner, e.repo)[0]
	if r.Body != "old notes\n" || r.Name != "First title" || !r.Immutable {
		t.Errorf("without --replace: name %q body %q immutable %v, want the old ones kept", r.Name, r.Body, r.Immutable)
	}
	if len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "title, notes") || !strings.Contains(sum.Warnings[0], "--replace") {
		t.Errorf("warnings = %q, want one naming title and notes and --replace", sum.Warnings)
	}
	e.srv.ResetLog()
	sum, err = p(func(o *github.Options) { o.Replace = true }).Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	r = e.srv.Releases(e.owner, e.repo)[0]
	if r.Body != "new notes\n" || r.Name != "Second title" || !r.Immutable || len(sum.Warnings) != 0 {
		t.Errorf("with --replace: name %q body %q immutable %v warnings %q", r.Name, r.Body, r.Immutable, sum.Warnings)
	}
	if n := e.srv.Calls(fakegh.RouteUploadAsset); n != 0 {
		t.Errorf("%d uploads, want 0", n)
	}
}

func TestPublishGitHub_EmptyNotesOfAnExistingReleaseAreFilledIn(t *testing.T) {
	e := newEnv(t, false)
	rel := fixture(t, "v1.2.0")
	e.srv.AddRelease(e.owner, e.repo, fakegh.Release{Tag: "v1.2.0", TargetCommitish: "0123abc", Assets: fakeAssets(t, rel)})
	sum, err := e.publisher(t, 0, func(o *github.Options) { o.Notes = "notes\n" }).Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	if b := e.srv.Releases(e.owner, e.repo)[0].Body; b != "notes\n" {
		t.Errorf("body = %q", b)
	}
	// --target for the published release's tag: ignored by GitHub, warned.
	if len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "--target 0123abc is ignored") {
		t.Errorf("warnings = %q", sum.Warnings)
	}
}

func TestPublishGitHub_TargetForATagThatExistsIsWarnedAbout(t *testing.T) {
	e := newEnv(t, false)
	e.srv.AddTag(e.owner, e.repo, "v1.3.0", "pushed")
	sum, err := e.publisher(t, 0, nil).Publish(context.Background(), fixture(t, "v1.3.0"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "tag v1.3.0 already exists (at pushed)") {
		t.Errorf("warnings = %q", sum.Warnings)
	}
	if got := e.srv.Tags(e.owner, e.repo)["v1.3.0"]; got != "pushed" {
		t.Errorf("tag moved to %q", got)
	}
	if !strings.Contains(e.out.String(), "warning: --target") {
		t.Errorf("progress does not show the warning:\n%s", e.out.String())
	}
}

func TestPublishGitHub_PrereleaseDefaultsToTheSemverPrereleaseAndCanBeSet(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		tag  string
		set  *bool
		want bool
	}{
		{"v2.0.0-rc.1", nil, true},
		{"v2.0.0", nil, false},
		{"v2.0.0-rc.1", &no, false},
		{"v2.0.0", &yes, true},
	} {
		e := newEnv(t, false)
		if _, err := e.publisher(t, 0, func(o *github.Options) { o.Prerelease = tc.set }).Publish(context.Background(), fixture(t, tc.tag)); err != nil {
			t.Fatal(err)
		}
		if got := e.srv.Releases(e.owner, e.repo)[0].Prerelease; got != tc.want {
			t.Errorf("%s with %v: prerelease = %v, want %v", tc.tag, tc.set, got, tc.want)
		}
	}
}

// A draft left by an interrupted run with generated notes is resumed
// without a warning: the notes are generated again and are the same.
func TestPublishGitHub_ResumedDraftWithGeneratedNotesIsQuiet(t *testing.T) {
	e := newEnv(t, false)
	rel := fixture(t, "v1.4.0")
	gen := func(o *github.Options) { o.GenerateNotes = true }
	e.srv.Inject(fakegh.RouteEditRelease, 1, fakegh.ServerError) // the publish fails
	if _, err := e.publisher(t, 1, gen).Publish(context.Background(), rel); err == nil {
		t.Fatal("the publish did not fail")
	}
	sum, err := e.publisher(t, 0, gen).Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Warnings) != 0 {
		t.Errorf("warnings = %q", sum.Warnings)
	}
	r := e.srv.Releases(e.owner, e.repo)
	if len(r) != 1 || r[0].Draft || !strings.Contains(r[0].Body, "Changes up to v1.4.0 (0123abc)") {
		t.Errorf("releases = %+v", r)
	}
}

// TestPublishGitHub_AddedNotesComeAfterTheGeneratedOnesAndRerunsKeepThem:
// a section added through publish.Noted follows the notes file and
// GitHub's notes; publishing the same again changes nothing and warns of
// nothing.
func TestPublishGitHub_AddedNotesComeAfterTheGeneratedOnesAndRerunsKeepThem(t *testing.T) {
	e := newEnv(t, false)
	e.srv.AddRelease(e.owner, e.repo, fakegh.Release{Tag: "v0.9.0", TargetCommitish: "old"})
	const section = "## Upgrading from v0.9.0\n\n- Contract `v1beta2`, unchanged.\n"
	publishOnce := func(commitish string) *publish.Summary {
		g := e.publisher(t, 0, func(o *github.Options) { o.Notes, o.GenerateNotes, o.Commitish = "Highlights.\n", true, commitish })
		var noted publish.Noted = g
		if !noted.AddNotes(section) {
			t.Fatal("AddNotes = false for a GitHub release")
		}
		sum, err := g.Publish(context.Background(), fixture(t, "v1.0.0"))
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	publishOnce("0123abc")
	body := e.srv.Releases(e.owner, e.repo)[1].Body
	if !strings.HasPrefix(body, "Highlights.\n\n## What's Changed\n") || !strings.HasSuffix(body, "compare/v0.9.0...v1.0.0\n\n"+section) {
		t.Errorf("body:\n%s", body)
	}
	if sum := publishOnce(""); len(sum.Warnings) != 0 || e.srv.Releases(e.owner, e.repo)[1].Body != body {
		t.Errorf("the re-run warned %q or changed the notes", sum.Warnings)
	}
}
