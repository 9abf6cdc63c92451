package github_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	intotov1 "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/release"
)

func TestPublishGitHub_ProvenanceNamesEveryAssetWithItsSHA256(t *testing.T) {
	e := newEnv(t, true)
	rel := fixture(t, "v3.0.0")
	withProv := func(o *github.Options) { o.Provenance = true }
	if _, err := e.publisher(t, 0, withProv).Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
	r := e.srv.Releases(e.owner, e.repo)[0]
	var prov []byte
	uploaded := map[string]string{}
	for _, a := range r.Assets {
		if a.Name == publish.ProvenanceFile {
			prov = a.Data
			continue
		}
		uploaded[a.Name] = (release.File{Data: a.Data}).SHA256()
	}
	if prov == nil {
		t.Fatalf("no %s among %d assets", publish.ProvenanceFile, len(r.Assets))
	}
	// The statement reads back with the library's own types and validates.
	var st intotov1.Statement
	if err := protojson.Unmarshal(prov, &st); err != nil {
		t.Fatal(err)
	}
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	subjects := map[string]string{}
	for _, s := range st.GetSubject() {
		subjects[s.GetName()] = s.GetDigest()["sha256"]
	}
	if diff := cmp.Diff(uploaded, subjects); diff != "" {
		t.Errorf("subjects (-assets +statement):\n%s", diff)
	}
	if st.GetPredicateType() != "https://slsa.dev/provenance/v1" {
		t.Errorf("predicate type %q", st.GetPredicateType())
	}
	var pred struct {
		BuildDefinition struct {
			BuildType          string            `json:"buildType"`
			ExternalParameters map[string]string `json:"externalParameters"`
		} `json:"buildDefinition"`
		RunDetails struct {
			Builder struct{ ID string } `json:"builder"`
		} `json:"runDetails"`
	}
	pj, _ := protojson.Marshal(st.GetPredicate())
	if err := json.Unmarshal(pj, &pred); err != nil {
		t.Fatal(err)
	}
	if pred.BuildDefinition.ExternalParameters["version"] != "v3.0.0" || !strings.HasSuffix(pred.BuildDefinition.ExternalParameters["repository"], "/capi/example") ||
		pred.RunDetails.Builder.ID != publish.ProvenanceBuilderID || pred.BuildDefinition.BuildType != publish.ProvenanceBuildType {
		t.Errorf("predicate = %+v", pred)
	}
	// The same release again: same bytes, nothing to upload, even immutable.
	e.srv.ResetLog()
	if _, err := e.publisher(t, 0, withProv).Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
	if n := e.srv.Calls(fakegh.RouteUploadAsset); n != 0 {
		t.Errorf("re-run uploaded %d assets", n)
	}
}

// A release published before capirepo wrote provenance gets it on a
// re-run without --replace: adding a file changes nothing anybody read.
func TestPublishGitHub_PublishedReleaseWithoutProvenanceGetsItWithoutReplace(t *testing.T) {
	e := newEnv(t, false)
	rel := fixture(t, "v3.1.0")
	if _, err := e.publisher(t, 0, nil).Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
	sum, err := e.publisher(t, 0, func(o *github.Options) { o.Provenance, o.Commitish = true, "" }).Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sum.Uploaded, publish.ProvenanceFile) || len(sum.Replaced) != 0 || len(sum.Warnings) != 0 {
		t.Errorf("uploaded %v, replaced %v, warnings %q", sum.Uploaded, sum.Replaced, sum.Warnings)
	}
	r := e.srv.Releases(e.owner, e.repo)[0]
	if len(r.Assets) != len(names(t, rel))+1 {
		t.Errorf("%d assets, want the release's and the provenance", len(r.Assets))
	}
}

// An immutable release without provenance: --replace (say, for the notes)
// must not turn the missing provenance into a refusal.
func TestPublishGitHub_ReplaceOnAnImmutableReleaseWithoutProvenanceUpdatesTheNotes(t *testing.T) {
	e := newEnv(t, true)
	rel := fixture(t, "v3.2.0")
	if _, err := e.publisher(t, 0, nil).Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
	sum, err := e.publisher(t, 0, func(o *github.Options) { o.Provenance, o.Replace, o.Notes, o.Commitish = true, true, "notes\n", "" }).
		Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	r := e.srv.Releases(e.owner, e.repo)[0]
	if r.Body != "notes\n" || len(r.Assets) != len(names(t, rel)) {
		t.Errorf("body %q, %d assets", r.Body, len(r.Assets))
	}
	if len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "is immutable; it stays without") {
		t.Errorf("warnings = %q", sum.Warnings)
	}
}
