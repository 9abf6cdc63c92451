package gitlab_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/sign/signtest"
)

// TestPublishGitLab_SignedReleaseAgainUploadsNothing: a signed release's
// package holds its provenance (the release's own, not one the publisher
// makes) and bundles; the release signed again publishes nothing.
func TestPublishGitLab_SignedReleaseAgainUploadsNothing(t *testing.T) {
	ss := signtest.New(t)
	f := newGLFixture(t)
	withProv := func(o *gitlab.Options) { o.Provenance = true }
	signed := glRelease(t, "v0.4.0", exampleFiles("4"))
	if _, err := sign.SignRelease(context.Background(), ss.Signer(t, "release@example.com", signtest.GitHubIssuer), signed,
		sign.ReleaseOptions{Provenance: true, Source: "https://gitlab.example.com/group/project"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.publish(t, signed, withProv); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantContents(signed.Providers[0]), f.srv.Contents(glProject, "infrastructure-example", "v0.4.0")); diff != "" {
		t.Errorf("package (-release +published):\n%s", diff)
	}
	again := glRelease(t, "v0.4.0", exampleFiles("4"))
	if _, err := sign.SignRelease(context.Background(), ss.Signer(t, "release@example.com", signtest.GitHubIssuer), again,
		sign.ReleaseOptions{Provenance: true, Source: "https://gitlab.example.com/group/project"}); err != nil {
		t.Fatal(err)
	}
	sum, err := f.publish(t, again, withProv)
	if err != nil {
		t.Fatalf("publishing the release signed again: %v", err)
	}
	if len(sum.Uploaded)+len(sum.Replaced) != 0 {
		t.Errorf("uploaded %v, replaced %v", sum.Uploaded, sum.Replaced)
	}
}
