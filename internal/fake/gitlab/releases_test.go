package gitlab_test

import (
	"net/http"
	"testing"

	gl "gitlab.com/gitlab-org/api/client-go"
)

func TestServer_ReleasesFollowTheAPI(t *testing.T) {
	s := newServer(t)
	c := client(t, s, "private", private)
	pkgURL := s.URL + "/api/v4/projects/7/packages/generic/infrastructure-example/v1.0.0/metadata.yaml"
	link := &gl.ReleaseAssetLinkOptions{Name: gl.Ptr("metadata.yaml"), URL: gl.Ptr(pkgURL),
		DirectAssetPath: gl.Ptr("/metadata.yaml"), LinkType: gl.Ptr(gl.PackageLinkType)}
	opts := &gl.CreateReleaseOptions{TagName: gl.Ptr("v1.0.0"), Description: gl.Ptr("notes"),
		Assets: &gl.ReleaseAssetsOptions{Links: []*gl.ReleaseAssetLinkOptions{link}}}

	// A new tag needs a ref.
	if _, resp, err := c.Releases.CreateRelease(7, opts); err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("create without ref for a new tag: %v", err)
	}
	opts.Ref = gl.Ptr("abc")
	rel, _, err := c.Releases.CreateRelease(7, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Name != "v1.0.0" || rel.Description != "notes" || len(rel.Assets.Links) != 1 || rel.Assets.Links[0].LinkType != gl.PackageLinkType {
		t.Errorf("release = %+v", rel)
	}
	if s.Tags("7")["v1.0.0"] != "abc" {
		t.Errorf("tags = %v", s.Tags("7"))
	}
	if _, resp, err := c.Releases.CreateRelease(7, opts); err == nil || resp.StatusCode != http.StatusConflict {
		t.Errorf("second release for the tag: %v", err)
	}
	// Link names are unique in a release.
	if _, resp, err := c.ReleaseLinks.CreateReleaseLink(7, "v1.0.0", &gl.CreateReleaseLinkOptions{Name: gl.Ptr("metadata.yaml"), URL: gl.Ptr(pkgURL + "?x")}); err == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("duplicate link name: %v", err)
	}
	if _, _, err := c.ReleaseLinks.CreateReleaseLink(7, "v1.0.0", &gl.CreateReleaseLinkOptions{Name: gl.Ptr("other.yaml"), URL: gl.Ptr(pkgURL + "?other")}); err != nil {
		t.Fatal(err)
	}
	links, _, err := c.ReleaseLinks.ListReleaseLinks(7, "v1.0.0", nil)
	if err != nil || len(links) != 2 {
		t.Fatalf("links = %v, %v", links, err)
	}
	if _, _, err := c.Releases.UpdateRelease(7, "v1.0.0", &gl.UpdateReleaseOptions{Description: gl.Ptr("new")}); err != nil {
		t.Fatal(err)
	}
	if _, resp, err := c.Releases.GetRelease(7, "v9.9.9"); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("missing release: %v", err)
	}
	got := s.Releases("7")
	if len(got) != 1 || got[0].Description != "new" || got[0].Links[0].DirectAssetPath != "/metadata.yaml" {
		t.Errorf("state = %+v", got)
	}
}
