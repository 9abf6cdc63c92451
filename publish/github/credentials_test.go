package github_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/publishtest"
)

func TestPublishGitHub_RedirectToAnotherPortCarriesNoToken(t *testing.T) {
	api, first, second := publishtest.RedirectPair(t)
	g, err := github.New(github.Options{Owner: "o", Repo: "r", APIURL: api + "/api/v3/",
		Token: testToken, Retry: publishtest.QuickRetry(), HTTPClient: publish.NewHTTPClient(publish.HTTPOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = g.Publish(context.Background(), fixture(t, "v0.1.0"))
	publishtest.SawToken(t, first, testToken)
	publishtest.NoCredentials(t, "the second server", second, testToken)
}

func TestUploadProgress_GitHubSeesEveryByteOfEveryAssetOnce(t *testing.T) {
	e := newEnv(t, false)
	rel := fixture(t, "v0.1.0")
	hook := publishtest.NewRecordingHook()
	if _, err := e.publisher(t, 0, func(o *github.Options) { o.UploadProgress = hook }).Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
	files, err := rel.Flat()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for _, f := range files {
		want[f.Name] = []string{string(f.Data)}
	}
	if diff := cmp.Diff(want, hook.Seen()); diff != "" {
		t.Errorf("bytes the hook saw per asset and attempt (-want +got):\n%s", diff)
	}
	for _, f := range files {
		if hook.Sizes[f.Name] != int64(len(f.Data)) {
			t.Errorf("%s: size %d, want %d", f.Name, hook.Sizes[f.Name], len(f.Data))
		}
	}
	// What GitHub holds is what went through the hook.
	if diff := cmp.Diff(wantState(t, rel, false), e.state()); diff != "" {
		t.Errorf("server state (-want +got):\n%s", diff)
	}
}
