package github_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gh "github.com/google/go-github/v82/github"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
)

const token = "t0ken"

func newClient(t *testing.T, srv *fakegh.Server, tok string) *gh.Client {
	t.Helper()
	c, err := gh.NewClient(srv.Client()).WithEnterpriseURLs(srv.APIURL(), srv.UploadURL())
	if err != nil {
		t.Fatal(err)
	}
	c = c.WithAuthToken(tok)
	// Let every call reach the fake, even after a rate-limit reply.
	c.DisableRateLimitCheck = true
	return c
}

func upload(ctx context.Context, c *gh.Client, id int64, name, data string) (*gh.ReleaseAsset, error) {
	req, err := c.NewUploadRequest(fmt.Sprintf("repos/o/r/releases/%d/assets?name=%s", id, name), strings.NewReader(data), int64(len(data)), "text/plain")
	if err != nil {
		return nil, err
	}
	a := new(gh.ReleaseAsset)
	_, err = c.Do(ctx, req, a)
	return a, err
}

func status(err error) int {
	var er *gh.ErrorResponse
	if errors.As(err, &er) {
		return er.Response.StatusCode
	}
	return 0
}

func TestServer_DraftLifecycleFollowsTheAPI(t *testing.T) {
	ctx := context.Background()
	srv := fakegh.New(t, fakegh.WithToken(token))
	srv.AddRepo("o", "r", true)
	c := newClient(t, srv, token)

	rel, resp, err := c.Repositories.CreateRelease(ctx, "o", "r", &gh.RepositoryRelease{TagName: gh.Ptr("v1.0.0"), Draft: gh.Ptr(true)})
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %v %v", resp, err)
	}
	if !strings.Contains(rel.GetHTMLURL(), "untagged-") || !strings.Contains(rel.GetUploadURL(), "/api/uploads/repos/o/r/releases/") {
		t.Errorf("draft URLs: %s %s", rel.GetHTMLURL(), rel.GetUploadURL())
	}
	// Drafts are hidden from the by-tag lookup.
	if _, _, err := c.Repositories.GetReleaseByTag(ctx, "o", "r", "v1.0.0"); status(err) != http.StatusNotFound {
		t.Errorf("draft by tag: err = %v, want 404", err)
	}
	a, err := upload(ctx, c, rel.GetID(), "a.yaml", "hello")
	if err != nil {
		t.Fatal(err)
	}
	if a.GetSize() != 5 || a.GetDigest() != "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
		t.Errorf("asset = %v", a)
	}
	// A duplicate name is 422 already_exists.
	_, err = upload(ctx, c, rel.GetID(), "a.yaml", "other")
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != 422 || len(er.Errors) != 1 || er.Errors[0].Code != "already_exists" {
		t.Errorf("duplicate upload: %v", err)
	}
	// Rename, download, publish.
	if _, _, err := c.Repositories.EditReleaseAsset(ctx, "o", "r", a.GetID(), &gh.ReleaseAsset{Name: gh.Ptr("b.yaml")}); err != nil {
		t.Fatal(err)
	}
	rc, _, err := c.Repositories.DownloadReleaseAsset(ctx, "o", "r", a.GetID(), srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(rc)
	_ = rc.Close()
	if string(body) != "hello" {
		t.Errorf("download = %q", body)
	}
	pub, _, err := c.Repositories.EditRelease(ctx, "o", "r", rel.GetID(), &gh.RepositoryRelease{Draft: gh.Ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if pub.GetDraft() || !pub.GetImmutable() {
		t.Errorf("published: draft=%v immutable=%v", pub.GetDraft(), pub.GetImmutable())
	}
	if _, _, err := c.Repositories.GetReleaseByTag(ctx, "o", "r", "v1.0.0"); err != nil {
		t.Errorf("published by tag: %v", err)
	}
	// Immutable: no more asset changes.
	if _, err := upload(ctx, c, rel.GetID(), "c.yaml", "x"); status(err) != 422 || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("upload to immutable: %v", err)
	}
	if _, err := c.Repositories.DeleteReleaseAsset(ctx, "o", "r", a.GetID()); status(err) != 422 {
		t.Errorf("delete from immutable: %v", err)
	}
	want := []fakegh.Release{{ID: rel.GetID(), Tag: "v1.0.0", TargetCommitish: "main", Immutable: true,
		Assets: []fakegh.Asset{{ID: a.GetID(), Name: "b.yaml", ContentType: "text/plain", Data: []byte("hello")}}}}
	if diff := cmp.Diff(want, srv.Releases("o", "r")); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"v1.0.0": "main"}, srv.Tags("o", "r")); diff != "" {
		t.Errorf("tags (-want +got):\n%s", diff)
	}
}

func TestServer_ListsArePaginatedWithLinkHeaders(t *testing.T) {
	ctx := context.Background()
	srv := fakegh.New(t)
	srv.AddRepo("o", "r", false)
	for i := range 65 {
		srv.AddRelease("o", "r", fakegh.Release{Tag: fmt.Sprintf("v0.%d.0", i)})
	}
	c := newClient(t, srv, "")
	tests := []struct {
		perPage   int
		wantPages []int
	}{
		{perPage: 0, wantPages: []int{30, 30, 5}}, // GitHub's default of 30
		{perPage: 50, wantPages: []int{50, 15}},
		{perPage: 500, wantPages: []int{65}}, // capped at 100
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.perPage), func(t *testing.T) {
			var pages []int
			seen := map[string]bool{}
			opts := &gh.ListOptions{PerPage: tt.perPage}
			for {
				list, resp, err := c.Repositories.ListReleases(ctx, "o", "r", opts)
				if err != nil {
					t.Fatal(err)
				}
				pages = append(pages, len(list))
				for _, r := range list {
					seen[r.GetTagName()] = true
				}
				if resp.NextPage == 0 {
					break
				}
				opts.Page = resp.NextPage
			}
			if diff := cmp.Diff(tt.wantPages, pages); diff != "" {
				t.Errorf("page sizes (-want +got):\n%s", diff)
			}
			if len(seen) != 65 {
				t.Errorf("%d distinct releases, want 65", len(seen))
			}
		})
	}
	// Newest first.
	list, _, _ := c.Repositories.ListReleases(ctx, "o", "r", nil)
	if list[0].GetTagName() != "v0.64.0" {
		t.Errorf("first listed = %s, want the newest", list[0].GetTagName())
	}
}

func TestServer_ChecksTheTokenAndInjectsFaults(t *testing.T) {
	ctx := context.Background()
	srv := fakegh.New(t, fakegh.WithToken(token))
	srv.AddRepo("o", "r", false)
	if _, _, err := newClient(t, srv, "wrong").Repositories.ListReleases(ctx, "o", "r", nil); status(err) != http.StatusUnauthorized {
		t.Errorf("wrong token: %v", err)
	}
	c := newClient(t, srv, token)
	srv.Inject(fakegh.RouteListReleases, 2, fakegh.ServerError)
	srv.Inject(fakegh.RouteListReleases, 3, fakegh.RetryAfter(9))
	srv.Inject(fakegh.RouteListReleases, 4, fakegh.Dropped)
	var got []string
	for range 5 {
		_, _, err := c.Repositories.ListReleases(ctx, "o", "r", nil)
		var ab *gh.AbuseRateLimitError
		switch {
		case err == nil:
			got = append(got, "ok")
		case errors.As(err, &ab):
			got = append(got, fmt.Sprintf("secondary %s", ab.GetRetryAfter()))
		case status(err) != 0:
			got = append(got, fmt.Sprint(status(err)))
		default:
			got = append(got, "dropped")
		}
	}
	// net/http itself re-sends an idempotent GET whose reused connection
	// was dropped, so the 4th call succeeds on a second request.
	if diff := cmp.Diff([]string{"ok", "502", "secondary 9s", "ok", "ok"}, got); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	if n := srv.Calls(fakegh.RouteListReleases); n != 7 { // 1 with the wrong token + 5 + the transport's re-send
		t.Errorf("calls = %d, want 7", n)
	}
}

func TestServer_UploadDroppedAfterStoringKeepsTheAsset(t *testing.T) {
	ctx := context.Background()
	srv := fakegh.New(t)
	srv.AddRepo("o", "r", false)
	id := srv.AddRelease("o", "r", fakegh.Release{Tag: "v1.0.0", Draft: true})
	c := newClient(t, srv, "")
	srv.Inject(fakegh.RouteUploadAsset, 1, fakegh.DropAfter)
	if _, err := upload(ctx, c, id, "a.yaml", "data"); err == nil {
		t.Fatal("dropped upload reported success")
	}
	if _, err := upload(ctx, c, id, "a.yaml", "data"); status(err) != 422 {
		t.Errorf("retry after a lost reply: %v, want 422 already_exists", err)
	}
	if r := srv.Releases("o", "r"); len(r[0].Assets) != 1 || !bytes.Equal(r[0].Assets[0].Data, []byte("data")) {
		t.Errorf("assets = %+v", r[0].Assets)
	}
}

func TestServer_ServesThePublicHostsThroughTransport(t *testing.T) {
	srv := fakegh.New(t)
	srv.AddRepo("o", "r", false)
	srv.AddRelease("o", "r", fakegh.Release{Tag: "v1.0.0", Assets: []fakegh.Asset{{Name: "m.yaml", Data: []byte("m")}}})
	hc := &http.Client{Transport: srv.Transport(http.DefaultTransport)}
	resp, err := hc.Get("https://github.com/o/r/releases/download/v1.0.0/m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "m" {
		t.Errorf("download: %d %q", resp.StatusCode, b)
	}
	rel, _, err := gh.NewClient(hc).Repositories.GetReleaseByTag(context.Background(), "o", "r", "v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if rel.GetUploadURL() != fmt.Sprintf("https://uploads.github.com/repos/o/r/releases/%d/assets{?name,label}", rel.GetID()) {
		t.Errorf("upload_url = %s", rel.GetUploadURL())
	}
}

// blockingReader closes started when the client begins to send the body
// (the request line and headers are out), then sends its bytes only after
// release is closed.
type blockingReader struct {
	data    *strings.Reader
	started chan struct{}
	once    sync.Once
	release chan struct{}
}

func (b *blockingReader) Read(p []byte) (int, error) {
	b.once.Do(func() { close(b.started) })
	<-b.release
	return b.data.Read(p)
}

// One upload whose body is slow to arrive must not hold up the others, as
// on GitHub: a second upload and a listing complete while the first waits.
func TestServer_ASlowUploadDoesNotBlockOtherCalls(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv := fakegh.New(t, fakegh.WithToken(token))
	srv.AddRepo("o", "r", false)
	id := srv.AddRelease("o", "r", fakegh.Release{Tag: "v1.0.0", Draft: true})
	c := newClient(t, srv, token)

	slow := &blockingReader{data: strings.NewReader("slow bytes"), started: make(chan struct{}), release: make(chan struct{})}
	req, err := c.NewUploadRequest(fmt.Sprintf("repos/o/r/releases/%d/assets?name=slow.txt", id), slow, int64(slow.data.Len()), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	slowDone := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, req, new(gh.ReleaseAsset))
		slowDone <- err
	}()
	<-slow.started
	waitFor(t, func() bool { return srv.Calls(fakegh.RouteUploadAsset) == 1 })

	if _, err := upload(ctx, c, id, "fast.txt", "fast bytes"); err != nil {
		t.Fatalf("upload beside a slow one: %v", err)
	}
	assets, _, err := c.Repositories.ListReleaseAssets(ctx, "o", "r", id, nil)
	if err != nil {
		t.Fatalf("list beside a slow upload: %v", err)
	}
	if len(assets) != 1 || assets[0].GetName() != "fast.txt" {
		t.Fatalf("assets while the slow upload waits = %v, want only fast.txt", assets)
	}
	close(slow.release)
	if err := <-slowDone; err != nil {
		t.Fatalf("slow upload: %v", err)
	}
	assets, _, err = c.Repositories.ListReleaseAssets(ctx, "o", "r", id, nil)
	if err != nil || len(assets) != 2 {
		t.Fatalf("assets after both uploads = %v, %v; want 2", assets, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
	}
}

func TestServer_GenerateNotesFollowsTheAPI(t *testing.T) {
	ctx := context.Background()
	srv := fakegh.New(t, fakegh.WithToken(token))
	srv.AddRepo("o", "r", false)
	c := newClient(t, srv, token)
	srv.AddRelease("o", "r", fakegh.Release{Tag: "v1.0.0", TargetCommitish: "aaa"})
	srv.AddRelease("o", "r", fakegh.Release{Tag: "v1.1.0", TargetCommitish: "bbb"})
	srv.AddRelease("o", "r", fakegh.Release{Tag: "v1.2.0", Draft: true})

	// A tag that does not exist needs target_commitish.
	_, _, err := c.Repositories.GenerateReleaseNotes(ctx, "o", "r", &gh.GenerateNotesOptions{TagName: "v1.2.0"})
	if status(err) != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "target_commitish") {
		t.Fatalf("new tag without target: %v", err)
	}
	n, _, err := c.Repositories.GenerateReleaseNotes(ctx, "o", "r", &gh.GenerateNotesOptions{TagName: "v1.2.0", TargetCommitish: gh.Ptr("ccc")})
	if err != nil {
		t.Fatal(err)
	}
	// The range starts at the latest published release; drafts do not count.
	if n.Name != "v1.2.0" || !strings.Contains(n.Body, "compare/v1.1.0...v1.2.0") || !strings.Contains(n.Body, "(ccc)") {
		t.Errorf("notes = %+v", n)
	}
	n, _, err = c.Repositories.GenerateReleaseNotes(ctx, "o", "r", &gh.GenerateNotesOptions{TagName: "v1.1.0", PreviousTagName: gh.Ptr("v1.0.0"), TargetCommitish: gh.Ptr("ignored")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(n.Body, "compare/v1.0.0...v1.1.0") || !strings.Contains(n.Body, "(bbb)") {
		t.Errorf("existing tag: notes = %+v, want the range from the previous tag and the tag's own commit", n)
	}
	if _, _, err := c.Repositories.GenerateReleaseNotes(ctx, "o", "r", &gh.GenerateNotesOptions{TagName: "v1.1.0", PreviousTagName: gh.Ptr("v0.9.9")}); status(err) != http.StatusUnprocessableEntity {
		t.Errorf("unknown previous tag: %v", err)
	}
	if len(srv.Releases("o", "r")) != 3 {
		t.Error("generate-notes stored something")
	}
}

func TestServer_TagsComeFromPublishingAndDeletedImmutableReleasesBurnThem(t *testing.T) {
	ctx := context.Background()
	srv := fakegh.New(t, fakegh.WithToken(token))
	srv.AddRepo("o", "r", true)
	c := newClient(t, srv, token)
	srv.AddTag("o", "r", "v0.1.0", "abc")
	ref, _, err := c.Git.GetRef(ctx, "o", "r", "tags/v0.1.0")
	if err != nil || ref.GetObject().GetSHA() != "abc" {
		t.Fatalf("pushed tag: %v %v", ref, err)
	}
	if _, _, err := c.Git.GetRef(ctx, "o", "r", "tags/v1.0.0"); status(err) != http.StatusNotFound {
		t.Fatalf("missing tag: %v", err)
	}
	rel, _, err := c.Repositories.CreateRelease(ctx, "o", "r", &gh.RepositoryRelease{TagName: gh.Ptr("v1.0.0"), TargetCommitish: gh.Ptr("def"), Draft: gh.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Git.GetRef(ctx, "o", "r", "tags/v1.0.0"); status(err) != http.StatusNotFound {
		t.Fatalf("a draft made a tag: %v", err)
	}
	if _, _, err := c.Repositories.EditRelease(ctx, "o", "r", rel.GetID(), &gh.RepositoryRelease{Draft: gh.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if ref, _, err := c.Git.GetRef(ctx, "o", "r", "tags/v1.0.0"); err != nil || ref.GetObject().GetSHA() != "def" {
		t.Fatalf("publishing did not create the tag from target_commitish: %v %v", ref, err)
	}
	// Title and notes of an immutable release may change.
	ed, _, err := c.Repositories.EditRelease(ctx, "o", "r", rel.GetID(), &gh.RepositoryRelease{Name: gh.Ptr("One"), Body: gh.Ptr("notes")})
	if err != nil || !ed.GetImmutable() || ed.GetBody() != "notes" || ed.GetName() != "One" {
		t.Fatalf("edit notes of an immutable release: %v %v", ed, err)
	}
	if _, err := c.Repositories.DeleteRelease(ctx, "o", "r", rel.GetID()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Repositories.CreateRelease(ctx, "o", "r", &gh.RepositoryRelease{TagName: gh.Ptr("v1.0.0"), Draft: gh.Ptr(true)}); status(err) != http.StatusUnprocessableEntity {
		t.Errorf("release on the tag of a deleted immutable release: %v, want 422", err)
	}
}
