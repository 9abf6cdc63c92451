package gitlab_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/gitlab"
)

func TestPublishGitLab_ReleaseLinksEveryPackageFile(t *testing.T) {
	f := newGLFixture(t)
	rel := glRelease(t, "v1.0.0", exampleFiles("1"))
	withRelease := func(o *gitlab.Options) {
		o.Release, o.Title, o.Notes = true, "Example v1.0.0", "First release.\n"
	}
	// A new tag needs --ref; the packages are written and kept for the re-run.
	_, err := f.publish(t, rel, withRelease)
	if err == nil || !strings.Contains(err.Error(), "--ref") {
		t.Fatalf("err = %v, want a hint to pass --ref", err)
	}
	if _, err := f.publish(t, rel, withRelease, func(o *gitlab.Options) { o.Ref = "main" }); err != nil {
		t.Fatal(err)
	}
	rels := f.srv.Releases(glProject)
	if len(rels) != 1 || rels[0].Name != "Example v1.0.0" || rels[0].Description != "First release.\n" {
		t.Fatalf("releases = %+v", rels)
	}
	var got []fakegl.ReleaseLink
	for _, l := range rels[0].Links {
		l.ID = 0
		got = append(got, l)
	}
	var want []fakegl.ReleaseLink
	for _, a := range rel.Providers[0].Assets() {
		want = append(want, fakegl.ReleaseLink{Name: a.Name, URL: glURL("group%2Fsub%2Fproject", "infrastructure-example", "v1.0.0", a.Name),
			DirectAssetPath: "/" + a.Name, LinkType: "package"})
	}
	byName := func(a, b fakegl.ReleaseLink) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(got, byName)
	slices.SortFunc(want, byName)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	if f.srv.Tags(glProject)["v1.0.0"] != "main" {
		t.Errorf("tags = %v", f.srv.Tags(glProject))
	}
	// Every link reaches the file it names.
	for _, l := range rels[0].Links {
		req, _ := http.NewRequest(http.MethodGet, l.URL, nil)
		req.Header.Set("PRIVATE-TOKEN", glToken)
		resp, err := (&http.Client{Transport: f.srv.Transport(glHost)}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("link %s: %s", l.Name, resp.Status)
		}
	}

	// Again with other notes: kept without --replace, changed with it;
	// no link is added twice.
	sum, err := f.publish(t, rel, withRelease, func(o *gitlab.Options) { o.Notes = "Other notes.\n" })
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "keeps its notes") {
		t.Errorf("warnings = %q", sum.Warnings)
	}
	if d := f.srv.Releases(glProject)[0].Description; d != "First release.\n" {
		t.Errorf("notes changed without --replace: %q", d)
	}
	if _, err := f.publish(t, rel, withRelease, func(o *gitlab.Options) { o.Notes, o.Replace = "Other notes.\n", true }); err != nil {
		t.Fatal(err)
	}
	if r := f.srv.Releases(glProject)[0]; r.Description != "Other notes.\n" || len(r.Links) != len(want) {
		t.Errorf("with --replace: %q, %d links", r.Description, len(r.Links))
	}
	if n := f.srv.Count(fakegl.RouteCreateReleaseLink); n != 0 {
		t.Errorf("%d links added to a complete release", n)
	}
}

func TestPublishGitLab_ReleaseOfSeveralProvidersNamesLinksByPackage(t *testing.T) {
	f := newGLFixture(t)
	f.srv.AddTag(glProject, "v0.2.0", "abc")
	rel := glRelease(t, "v0.2.0", exampleFiles("1"))
	rel.Providers = append(rel.Providers, glProvider(t, "bootstrap-example", "v0.2.0", map[string]string{
		"bootstrap-components.yaml": "b", "metadata.yaml": "m"}))
	if _, err := f.publish(t, rel, func(o *gitlab.Options) { o.Release = true }); err != nil {
		t.Fatal(err)
	}
	r := f.srv.Releases(glProject)[0]
	var names []string
	for _, l := range r.Links {
		names = append(names, l.Name)
	}
	for _, n := range []string{"infrastructure-example/metadata.yaml", "bootstrap-example/metadata.yaml"} {
		if !slices.Contains(names, n) {
			t.Errorf("links %q lack %s", names, n)
		}
	}
	if r.Name != "v0.2.0" {
		t.Errorf("name = %q, want the tag", r.Name)
	}
}

func TestPublishGitLab_ProvenanceInEachPackageNamesItsFiles(t *testing.T) {
	f := newGLFixture(t)
	rel := glRelease(t, "v1.1.0", exampleFiles("1"))
	prov := func(o *gitlab.Options) { o.Provenance = true }
	if _, err := f.publish(t, rel, prov); err != nil {
		t.Fatal(err)
	}
	files := f.srv.Files(glProject, "infrastructure-example", "v1.1.0")
	want := map[string]string{}
	var statement []byte
	for _, pf := range files {
		if pf.Name == publish.ProvenanceFile {
			statement = pf.Data
			continue
		}
		want[pf.Name] = pf.SHA256()
	}
	if statement == nil || len(want) != len(rel.Providers[0].Assets()) {
		t.Fatalf("package holds %d files besides provenance (want %d), provenance %v", len(want), len(rel.Providers[0].Assets()), statement != nil)
	}
	var st struct {
		Subject []struct {
			Name   string
			Digest map[string]string
		}
	}
	if err := json.Unmarshal(statement, &st); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range st.Subject {
		got[s.Name] = s.Digest["sha256"]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("subjects (-package +statement):\n%s", diff)
	}
	// The same release again uploads nothing.
	sum, err := f.publish(t, rel, prov)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Uploaded) != 0 {
		t.Errorf("re-run uploaded %v", sum.Uploaded)
	}
}

// A package published before capirepo wrote provenance gets it without
// --replace: adding a file changes nothing anybody read.
func TestPublishGitLab_PublishedPackageWithoutProvenanceGetsItWithoutReplace(t *testing.T) {
	f := newGLFixture(t)
	rel := glRelease(t, "v1.2.0", exampleFiles("1"))
	if _, err := f.publish(t, rel); err != nil {
		t.Fatal(err)
	}
	prov := func(o *gitlab.Options) { o.Provenance = true }
	sum, err := f.publish(t, rel, prov)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Replaced) != 0 || len(sum.Warnings) != 0 || len(sum.Uploaded) != 1 {
		t.Errorf("uploaded %v, replaced %v, warnings %q", sum.Uploaded, sum.Replaced, sum.Warnings)
	}
	if n := len(f.srv.Contents(glProject, "infrastructure-example", "v1.2.0")[publish.ProvenanceFile]); n != 1 {
		t.Errorf("%d copies of provenance, want 1", n)
	}
}

// TestPublishGitLab_AddedNotesGoIntoTheReleaseOnly: a section added through
// publish.Noted follows the notes file in the GitLab Release; a target
// without a Release takes none and says so.
func TestPublishGitLab_AddedNotesGoIntoTheReleaseOnly(t *testing.T) {
	f := newGLFixture(t)
	o := f.options()
	if g, err := gitlab.New(o); err != nil || g.AddNotes("x") {
		t.Fatalf("a target without a Release takes notes (%v)", err)
	}
	o.Release, o.Notes, o.Ref = true, "First release.\n", "main"
	g, err := gitlab.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if !g.AddNotes("## Upgrading from v0.9.0\n") {
		t.Fatal("AddNotes = false with a Release")
	}
	if _, err := g.Publish(context.Background(), glRelease(t, "v1.0.0", exampleFiles("1"))); err != nil {
		t.Fatal(err)
	}
	if rels := f.srv.Releases(glProject); len(rels) != 1 || rels[0].Description != "First release.\n\n## Upgrading from v0.9.0\n" {
		t.Errorf("releases = %+v", rels)
	}
}
