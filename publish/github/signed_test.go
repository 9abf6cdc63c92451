package github_test

import (
	"context"
	"testing"

	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/sign/signtest"
)

// TestPublishGitHub_SignedReleaseAgainUploadsNothing: a signed release
// carries its provenance and bundles, which the release gets as assets (the
// publisher adds no provenance of its own); signed again (new bundle bytes,
// same signer), publishing it again changes nothing on the published
// release, not even without --replace.
func TestPublishGitHub_SignedReleaseAgainUploadsNothing(t *testing.T) {
	ss := signtest.New(t)
	signed := func() *release.Release {
		s := ss.Signer(t, "release@example.com", signtest.GitHubIssuer)
		rel := fixture(t, "v3.1.0")
		if _, err := sign.SignRelease(context.Background(), s, rel, sign.ReleaseOptions{Provenance: true, Source: "https://github.com/capi/example"}); err != nil {
			t.Fatal(err)
		}
		return rel
	}
	e := newEnv(t, false)
	first := signed()
	sum, err := e.publisher(t, 0, nil).Publish(context.Background(), first)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for _, f := range first.Providers[0].Assets() {
		want[f.Name] = f.Data
	}
	assets := e.srv.Releases(e.owner, e.repo)[0].Assets
	if len(assets) != len(want) || len(sum.Uploaded) != len(want) {
		t.Fatalf("%d assets, %d uploaded, want %d", len(assets), len(sum.Uploaded), len(want))
	}
	for _, a := range assets {
		if string(want[a.Name]) != string(a.Data) {
			t.Errorf("asset %s is not the release's", a.Name)
		}
	}

	again := signed()
	if string(again.Providers[0].Attached[0].Data) == string(first.Providers[0].Attached[0].Data) {
		t.Fatal("signing again made the same bundle: the test proves nothing")
	}
	sum, err = e.publisher(t, 0, nil).Publish(context.Background(), again)
	if err != nil {
		t.Fatalf("publishing the release signed again: %v", err)
	}
	if len(sum.Uploaded)+len(sum.Replaced) != 0 || len(sum.Skipped) != len(want) {
		t.Errorf("uploaded %v, replaced %v, skipped %d of %d", sum.Uploaded, sum.Replaced, len(sum.Skipped), len(want))
	}
}
