package gitlab_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/publish/publishtest"
)

func TestPublishGitLab_RedirectToAnotherPortCarriesNoToken(t *testing.T) {
	const token = "glpat-redirect-s3cret-0123"
	for _, tt := range []gitlab.TokenType{gitlab.PrivateToken, gitlab.JobToken, gitlab.BearerToken} {
		t.Run(string(tt), func(t *testing.T) {
			base, first, second := publishtest.RedirectPair(t)
			g, err := gitlab.New(gitlab.Options{URL: base, Project: "group/project", Token: token, TokenType: tt,
				Retry: publishtest.QuickRetry(), HTTPClient: publish.NewHTTPClient(publish.HTTPOptions{})})
			if err != nil {
				t.Fatal(err)
			}
			_, _ = g.Publish(context.Background(), glRelease(t, "v0.1.0", exampleFiles("v0.1.0")))
			publishtest.SawToken(t, first, token)
			publishtest.NoCredentials(t, "the second server", second, token)
		})
	}
}

func TestNewGitLab_UserinfoInURLIsDroppedAndWarned(t *testing.T) {
	g, err := gitlab.New(gitlab.Options{URL: "https://user:pa55word@gitlab.example.com", Project: "g/p", Token: "glpat-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	warned := false
	for _, w := range g.Warnings() {
		if strings.Contains(w, "pa55word") {
			t.Errorf("warning prints the password: %s", w)
		}
		if strings.Contains(w, "GITLAB_ACCESS_TOKEN") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning about the userinfo: %v", g.Warnings())
	}
}

// stalled accepts connections and answers nothing until the test ends.

func TestUploadProgress_GitLabSeesEveryByteOfEveryFileOnceAndAgainOnARetry(t *testing.T) {
	f := newGLFixture(t)
	rel := glRelease(t, "v0.1.0", exampleFiles("1"))
	// The second upload fails once: it is sent again.
	f.srv.Fail(fakegl.Fault{Route: fakegl.RouteUpload, Nth: 2, Status: http.StatusServiceUnavailable})
	hook := publishtest.NewRecordingHook()
	if _, err := f.publish(t, rel, func(o *gitlab.Options) { o.UploadProgress = hook }); err != nil {
		t.Fatal(err)
	}
	p := rel.Providers[0]
	seen := hook.Seen()
	retried := 0
	for _, a := range p.Assets() {
		name := p.Label() + "/v0.1.0/" + a.Name
		attempts := seen[name]
		if len(attempts) == 2 {
			retried++
		}
		if len(attempts) == 0 || len(attempts) > 2 || attempts[len(attempts)-1] != string(a.Data) {
			t.Errorf("%s: the hook saw %q, want its %d bytes once (twice when retried)", name, attempts, len(a.Data))
		}
		if hook.Sizes[name] != int64(len(a.Data)) {
			t.Errorf("%s: size %d, want %d", name, hook.Sizes[name], len(a.Data))
		}
		delete(seen, name)
	}
	if retried != 1 {
		t.Errorf("%d uploads went through the hook twice, want the one that failed once", retried)
	}
	if len(seen) != 0 {
		t.Errorf("the hook saw uploads that are no files of the release: %v", seen)
	}
	if diff := cmp.Diff(wantContents(p), f.srv.Contents(glProject, p.Label(), "v0.1.0")); diff != "" {
		t.Errorf("package (-want +got):\n%s", diff)
	}
}
