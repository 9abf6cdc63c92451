package gitlab_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/release"
)

const (
	glToken    = "glpat-s3cr3t-publisher-token"
	glJobToken = "ci-job-s3cr3t-token"
	glHost     = "gitlab.example.com"
	glProject  = "group/sub/project"
	glID       = 42
)

var glNow = time.Unix(1_800_000_000, 0)

// glFixture is a fake GitLab with one private project, its tokens, and a
// publisher's retry policy that records its waits instead of sleeping.
type glFixture struct {
	srv *fakegl.Server
	out bytes.Buffer

	mu     sync.Mutex
	sleeps []time.Duration
}

func newGLFixture(t *testing.T) *glFixture {
	t.Helper()
	f := &glFixture{srv: fakegl.New(t)}
	f.srv.AddProject(glID, glProject, false)
	f.srv.AddToken(glToken, fakegl.AccessToken)
	f.srv.AddToken(glJobToken, fakegl.JobToken)
	f.srv.AddReadOnlyToken("glpat-read-only", fakegl.AccessToken)
	return f
}

func (f *glFixture) options() gitlab.Options {
	return gitlab.Options{
		URL:        "https://" + glHost,
		Project:    glProject,
		Token:      glToken,
		HTTPClient: &http.Client{Transport: f.srv.Transport(glHost)},
		Progress:   &syncWriter{w: &f.out, mu: &f.mu},
		Retry: &publish.Retry{Attempts: 4, Initial: 100 * time.Millisecond, Max: time.Second,
			Now: func() time.Time { return glNow },
			Sleep: func(_ context.Context, d time.Duration) error {
				f.mu.Lock()
				defer f.mu.Unlock()
				f.sleeps = append(f.sleeps, d)
				return nil
			}},
	}
}

func (f *glFixture) publish(t *testing.T, rel *release.Release, edit ...func(*gitlab.Options)) (*publish.Summary, error) {
	t.Helper()
	o := f.options()
	for _, e := range edit {
		e(&o)
	}
	g, err := gitlab.New(o)
	if err != nil {
		t.Fatalf("gitlab.New: %v", err)
	}
	sum, err := g.Publish(context.Background(), rel)
	f.mu.Lock()
	out := f.out.String()
	f.mu.Unlock()
	for _, tok := range []string{glToken, glJobToken} {
		if err != nil && strings.Contains(err.Error(), tok) {
			t.Errorf("the error shows the token: %v", err)
		}
		if strings.Contains(out, tok) {
			t.Errorf("the progress output shows the token:\n%s", out)
		}
	}
	return sum, err
}

func (f *glFixture) recordedSleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sleeps)
}

type syncWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// glProvider builds a provider of a release from file name -> content.
func glProvider(t *testing.T, label, version string, files map[string]string) *release.Provider {
	t.Helper()
	id, err := provider.ParseLabel(label)
	if err != nil {
		t.Fatal(err)
	}
	p := &release.Provider{ID: id, Version: version, ComponentsFile: id.DefaultComponentsFile()}
	for name, data := range files {
		if err := p.Add(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func glRelease(t *testing.T, version string, files map[string]string) *release.Release {
	return &release.Release{Version: version, Providers: []*release.Provider{glProvider(t, "infrastructure-example", version, files)}}
}

func exampleFiles(tag string) map[string]string {
	return map[string]string{
		"infrastructure-components.yaml": "components " + tag,
		"metadata.yaml":                  "metadata " + tag,
		"cluster-template.yaml":          "template " + tag,
		"cluster-template-ha.yaml":       "ha " + tag,
	}
}

// wantContents is the package state a release should leave: one copy of each
// file, checksums.txt included.
func wantContents(p *release.Provider) map[string][]string {
	out := map[string][]string{}
	for _, f := range p.Assets() {
		out[f.Name] = []string{string(f.Data)}
	}
	return out
}

func glURL(slug, pkg, version, file string) string {
	return fmt.Sprintf("https://%s/api/v4/projects/%s/packages/generic/%s/%s/%s", glHost, slug, pkg, version, file)
}

func TestPublishGitLab_EachProviderIsItsOwnPackage(t *testing.T) {
	f := newGLFixture(t)
	infra := glProvider(t, "infrastructure-example", "v0.1.0", exampleFiles("1"))
	boot := glProvider(t, "bootstrap-example", "v0.1.0", map[string]string{
		"bootstrap-components.yaml": "boot components", "metadata.yaml": "boot metadata"})
	rel := &release.Release{Version: "v0.1.0", Providers: []*release.Provider{infra, boot}}

	sum, err := f.publish(t, rel)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rel.Providers {
		if diff := cmp.Diff(wantContents(p), f.srv.Contents(glProject, p.Label(), "v0.1.0")); diff != "" {
			t.Errorf("package %s (-want +got):\n%s", p.Label(), diff)
		}
	}
	want := &publish.Summary{
		Kind: "gitlab", Logged: true, URL: "https://" + glHost + "/" + glProject + "/-/packages", Version: "v0.1.0",
		Uploaded: []string{
			"bootstrap-example/bootstrap-components.yaml", "bootstrap-example/checksums.txt", "bootstrap-example/metadata.yaml",
			"infrastructure-example/checksums.txt", "infrastructure-example/cluster-template-ha.yaml",
			"infrastructure-example/cluster-template.yaml", "infrastructure-example/infrastructure-components.yaml",
			"infrastructure-example/metadata.yaml",
		},
		Skipped: []string{}, Replaced: []string{},
		Providers: []publish.ProviderURL{
			{Name: "example", Type: "InfrastructureProvider", URL: glURL("group%2Fsub%2Fproject", "infrastructure-example", "v0.1.0", "infrastructure-components.yaml")},
			{Name: "example", Type: "BootstrapProvider", URL: glURL("group%2Fsub%2Fproject", "bootstrap-example", "v0.1.0", "bootstrap-components.yaml")},
		},
	}
	for _, p := range rel.Providers {
		for _, a := range p.Assets() {
			want.BytesUploaded += int64(len(a.Data))
		}
	}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}

	// Within a package, files go one by one with metadata.yaml last, so a
	// half-written package fails in clusterctl instead of mixing versions.
	for _, p := range rel.Providers {
		var order []string
		for _, r := range f.srv.Requests() {
			if r.Route == fakegl.RouteUpload && strings.Contains(r.Path, "/generic/"+p.Label()+"/") {
				order = append(order, r.Path[strings.LastIndex(r.Path, "/")+1:])
			}
		}
		if len(order) != len(p.Assets()) || order[len(order)-1] != "metadata%2Eyaml" ||
			order[len(order)-2] != strings.ReplaceAll(p.ComponentsFile, ".", "%2E") {
			t.Errorf("package %s upload order = %v, want the components file then metadata.yaml last", p.Label(), order)
		}
	}
}

func TestPublishGitLab_RerunUploadsNothing(t *testing.T) {
	f := newGLFixture(t)
	rel := glRelease(t, "v0.2.0", exampleFiles("1"))
	if _, err := f.publish(t, rel); err != nil {
		t.Fatal(err)
	}
	before := len(f.srv.Requests())

	sum, err := f.publish(t, rel)
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.Requests()[before:]
	var routes []fakegl.Route
	for _, r := range reqs {
		routes = append(routes, r.Route)
	}
	if diff := cmp.Diff([]fakegl.Route{fakegl.RouteListPackages, fakegl.RouteListFiles}, routes); diff != "" {
		t.Errorf("re-run requests (-want +got):\n%s", diff)
	}
	if len(sum.Uploaded)+len(sum.Replaced) != 0 || len(sum.Skipped) != 5 || sum.BytesUploaded != 0 {
		t.Errorf("re-run summary: uploaded %v replaced %v skipped %v bytes %d; want 5 skipped only",
			sum.Uploaded, sum.Replaced, sum.Skipped, sum.BytesUploaded)
	}
	if diff := cmp.Diff(wantContents(rel.Providers[0]), f.srv.Contents(glProject, "infrastructure-example", "v0.2.0")); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
}

func TestPublishGitLab_ChangedFileWithoutReplaceFailsBeforeAnyUpload(t *testing.T) {
	f := newGLFixture(t)
	if _, err := f.publish(t, glRelease(t, "v0.3.0", exampleFiles("1"))); err != nil {
		t.Fatal(err)
	}
	published := f.srv.Contents(glProject, "infrastructure-example", "v0.3.0")
	uploads := f.srv.Count(fakegl.RouteUpload)

	// The second provider's package is new and clean; it must not be
	// written either, since the release as a whole is refused.
	changed := exampleFiles("1")
	changed["infrastructure-components.yaml"] = "components 2"
	changed["cluster-template-new.yaml"] = "a new flavor"
	rel := &release.Release{Version: "v0.3.0", Providers: []*release.Provider{
		glProvider(t, "bootstrap-example", "v0.3.0", map[string]string{"bootstrap-components.yaml": "b", "metadata.yaml": "m"}),
		glProvider(t, "infrastructure-example", "v0.3.0", changed),
	}}
	_, err := f.publish(t, rel)
	if err == nil {
		t.Fatal("publish succeeded, want a refusal")
	}
	for _, want := range []string{"package infrastructure-example v0.3.0: infrastructure-components.yaml", "checksums.txt",
		"nothing was uploaded", "--replace", glProject} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "cluster-template-new.yaml") || strings.Contains(err.Error(), "metadata.yaml") {
		t.Errorf("error lists files that are only missing or unchanged:\n%v", err)
	}
	if got := f.srv.Count(fakegl.RouteUpload); got != uploads {
		t.Errorf("uploads = %d, want %d (none by the refused run)", got, uploads)
	}
	if diff := cmp.Diff(published, f.srv.Contents(glProject, "infrastructure-example", "v0.3.0")); diff != "" {
		t.Errorf("published package changed (-want +got):\n%s", diff)
	}
	if got := f.srv.Files(glProject, "bootstrap-example", "v0.3.0"); len(got) != 0 {
		t.Errorf("the other package got %d files", len(got))
	}
}

func TestPublishGitLab_ReplaceLeavesExactlyOneCopyWithTheNewBytes(t *testing.T) {
	f := newGLFixture(t)
	// An earlier tool left duplicates: two copies of the components (the
	// newest wins in GitLab) and two identical copies of metadata.yaml.
	for _, fl := range []struct{ name, data string }{
		{"infrastructure-components.yaml", "components 0"},
		{"infrastructure-components.yaml", "components 1"},
		{"metadata.yaml", "metadata 1"},
		{"metadata.yaml", "metadata 1"},
		{"cluster-template.yaml", "template 1"},
	} {
		f.srv.Seed(glProject, "infrastructure-example", "v0.4.0", fl.name, []byte(fl.data))
	}
	files := exampleFiles("1")
	files["infrastructure-components.yaml"] = "components 2"
	rel := glRelease(t, "v0.4.0", files)

	sum, err := f.publish(t, rel, func(o *gitlab.Options) { o.Replace = true })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantContents(rel.Providers[0]), f.srv.Contents(glProject, "infrastructure-example", "v0.4.0")); diff != "" {
		t.Errorf("state after replace (-want +got):\n%s", diff)
	}
	got := [][]string{sum.Uploaded, sum.Replaced, sum.Skipped}
	want := [][]string{
		{"infrastructure-example/checksums.txt", "infrastructure-example/cluster-template-ha.yaml"},
		{"infrastructure-example/infrastructure-components.yaml"},
		{"infrastructure-example/cluster-template.yaml", "infrastructure-example/metadata.yaml"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summary [uploaded replaced skipped] (-want +got):\n%s", diff)
	}
	if n := f.srv.Count(fakegl.RouteDeleteFile); n != 3 {
		t.Errorf("deletes = %d, want 3 (two old components, one duplicate metadata)", n)
	}

	// Replacing again with the same release changes nothing.
	before := f.srv.Writes()
	if _, err := f.publish(t, rel, func(o *gitlab.Options) { o.Replace = true }); err != nil {
		t.Fatal(err)
	}
	if got := f.srv.Writes(); got != before {
		t.Errorf("second replace wrote %d times, want 0", got-before)
	}
}

func TestPublishGitLab_AuthErrorsFailAtOnceWithGitLabsMessage(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*gitlab.Options)
		fault   *fakegl.Fault
		want    []string
		calls   int
		uploads int
	}{
		{
			name:  "wrong token is 401",
			edit:  func(o *gitlab.Options) { o.Token = "glpat-wrong-but-secret" },
			want:  []string{"401 Unauthorized", "GITLAB_ACCESS_TOKEN", "--gitlab-token-type job", "list package infrastructure-example v0.5.0"},
			calls: 1,
		},
		{
			name:  "server message naming the token is redacted",
			fault: &fakegl.Fault{Route: fakegl.RouteListPackages, Status: 401, Body: `{"message":"401 Unauthorized: token ` + glToken + ` expired"}`},
			want:  []string{"401 Unauthorized: token [REDACTED] expired"},
			calls: 1,
		},
		{
			name:    "read-only token is 403 on upload",
			edit:    func(o *gitlab.Options) { o.Token = "glpat-read-only" },
			want:    []string{"403 Forbidden", "upload cluster-template-ha.yaml to package infrastructure-example v0.5.0", "Developer role"},
			calls:   2, // list packages (none yet), one upload
			uploads: 1,
		},
		{
			name:  "unknown project is 404 with GitLab's message",
			edit:  func(o *gitlab.Options) { o.Project = "group/missing" },
			want:  []string{"404 Project Not Found", "project group/missing does not exist at https://gitlab.example.com"},
			calls: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newGLFixture(t)
			if tt.fault != nil {
				f.srv.Fail(*tt.fault)
			}
			edit := func(*gitlab.Options) {}
			if tt.edit != nil {
				edit = tt.edit
			}
			_, err := f.publish(t, glRelease(t, "v0.5.0", exampleFiles("1")), edit)
			if err == nil {
				t.Fatal("publish succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "glpat-wrong-but-secret") {
				t.Errorf("error shows the token: %v", err)
			}
			if got := len(f.srv.Requests()); got != tt.calls {
				t.Errorf("requests = %d, want %d (no retry): %+v", got, tt.calls, f.srv.Requests())
			}
			if got := f.srv.Count(fakegl.RouteUpload); got != tt.uploads {
				t.Errorf("uploads = %d, want %d", got, tt.uploads)
			}
			if s := f.recordedSleeps(); len(s) != 0 {
				t.Errorf("slept %v before failing, want no retry", s)
			}
		})
	}
}

func TestPublishGitLab_RetriesTransientFailures(t *testing.T) {
	reset := strconv.FormatInt(glNow.Add(30*time.Second).Unix(), 10)
	tests := []struct {
		name   string
		fault  fakegl.Fault
		sleeps []time.Duration
		calls  map[fakegl.Route]int
	}{
		{
			name:   "503 on upload honours Retry-After",
			fault:  fakegl.Fault{Route: fakegl.RouteUpload, Nth: 2, Status: 503, Header: http.Header{"Retry-After": {"7"}}},
			sleeps: []time.Duration{7 * time.Second},
			// the retry first lists the package to see whether the failed upload landed
			calls: map[fakegl.Route]int{fakegl.RouteUpload: 6, fakegl.RouteListPackages: 2, fakegl.RouteListFiles: 1},
		},
		{
			name: "429 on listing honours RateLimit-Reset",
			fault: fakegl.Fault{Route: fakegl.RouteListPackages, Nth: 1, Times: 2, Status: 429,
				Header: http.Header{"RateLimit-Reset": {reset}, "RateLimit-Remaining": {"0"}}},
			sleeps: []time.Duration{31 * time.Second, 31 * time.Second},
			calls:  map[fakegl.Route]int{fakegl.RouteUpload: 5, fakegl.RouteListPackages: 3},
		},
		{
			name:   "500s back off exponentially",
			fault:  fakegl.Fault{Route: fakegl.RouteListPackages, Nth: 1, Times: 3, Status: 500},
			sleeps: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond},
			calls:  map[fakegl.Route]int{fakegl.RouteUpload: 5, fakegl.RouteListPackages: 4},
		},
		{
			name:   "dropped connection on upload",
			fault:  fakegl.Fault{Route: fakegl.RouteUpload, Nth: 1, Drop: true},
			sleeps: []time.Duration{100 * time.Millisecond},
			calls:  map[fakegl.Route]int{fakegl.RouteUpload: 6, fakegl.RouteListPackages: 2},
		},
		{
			name:   "lost upload response is not uploaded twice",
			fault:  fakegl.Fault{Route: fakegl.RouteUpload, Nth: 3, Status: 502, AfterEffect: true},
			sleeps: []time.Duration{100 * time.Millisecond},
			calls:  map[fakegl.Route]int{fakegl.RouteUpload: 5, fakegl.RouteListPackages: 2, fakegl.RouteListFiles: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newGLFixture(t)
			f.srv.Fail(tt.fault)
			rel := glRelease(t, "v0.6.0", exampleFiles("1"))
			// The verify listing after the writes is counted too.
			tt.calls[fakegl.RouteListPackages]++
			tt.calls[fakegl.RouteListFiles]++
			if _, err := f.publish(t, rel); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantContents(rel.Providers[0]), f.srv.Contents(glProject, "infrastructure-example", "v0.6.0")); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.sleeps, f.recordedSleeps()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			got := map[fakegl.Route]int{}
			for _, r := range []fakegl.Route{fakegl.RouteUpload, fakegl.RouteListPackages, fakegl.RouteListFiles, fakegl.RouteDeleteFile, fakegl.RouteDownload} {
				if n := f.srv.Count(r); n > 0 {
					got[r] = n
				}
			}
			if diff := cmp.Diff(tt.calls, got); diff != "" {
				t.Errorf("calls per route (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPublishGitLab_GivesUpAfterTheAttempts(t *testing.T) {
	f := newGLFixture(t)
	f.srv.Fail(fakegl.Fault{Route: fakegl.RouteListPackages, Status: 503})
	_, err := f.publish(t, glRelease(t, "v0.7.0", exampleFiles("1")))
	if err == nil || !strings.Contains(err.Error(), "gave up after 4 attempts") || !strings.Contains(err.Error(), "503") {
		t.Fatalf("err = %v, want 503 and a give-up after 4 attempts", err)
	}
	if got := f.srv.Count(fakegl.RouteListPackages); got != 4 {
		t.Errorf("attempts = %d, want 4 (the library must not retry on its own)", got)
	}
}

func TestPublishGitLab_TokenTypesSendTheirHeader(t *testing.T) {
	tests := []struct {
		tokenType gitlab.TokenType
		token     string
		want      string
	}{
		{"", glToken, fakegl.AuthPrivate},
		{gitlab.PrivateToken, glToken, fakegl.AuthPrivate},
		{gitlab.JobToken, glJobToken, fakegl.AuthJob},
		{gitlab.BearerToken, glToken, fakegl.AuthBearer},
	}
	for _, tt := range tests {
		t.Run(string(tt.tokenType), func(t *testing.T) {
			f := newGLFixture(t)
			rel := glRelease(t, "v0.8.0", exampleFiles("1"))
			if _, err := f.publish(t, rel, func(o *gitlab.Options) { o.TokenType, o.Token = tt.tokenType, tt.token }); err != nil {
				t.Fatal(err)
			}
			for _, r := range f.srv.Requests() {
				if r.Auth != tt.want {
					t.Errorf("%s %s sent auth %q, want %q", r.Method, r.Path, r.Auth, tt.want)
				}
			}
			if diff := cmp.Diff(wantContents(rel.Providers[0]), f.srv.Contents(glProject, "infrastructure-example", "v0.8.0")); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPublishGitLab_ProjectByPathEscapedPathOrID(t *testing.T) {
	tests := []struct {
		project  string
		wantSlug string
		wantPage string
	}{
		{"group/sub/project", "group%2Fsub%2Fproject", "https://gitlab.example.com/group/sub/project/-/packages"},
		{"group%2Fsub%2Fproject", "group%2Fsub%2Fproject", "https://gitlab.example.com/group/sub/project/-/packages"},
		{"/group/sub/project/", "group%2Fsub%2Fproject", "https://gitlab.example.com/group/sub/project/-/packages"},
		{"42", "42", "https://gitlab.example.com/projects/42"},
	}
	for _, tt := range tests {
		t.Run(tt.project, func(t *testing.T) {
			f := newGLFixture(t)
			rel := glRelease(t, "v0.9.0", exampleFiles("1"))
			sum, err := f.publish(t, rel, func(o *gitlab.Options) { o.Project = tt.project })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantContents(rel.Providers[0]), f.srv.Contents("42", "infrastructure-example", "v0.9.0")); diff != "" {
				t.Errorf("state of project 42 (-want +got):\n%s", diff)
			}
			want := glURL(tt.wantSlug, "infrastructure-example", "v0.9.0", "infrastructure-components.yaml")
			if sum.Providers[0].URL != want || sum.URL != tt.wantPage {
				t.Errorf("provider URL %s, page %s; want %s, %s", sum.Providers[0].URL, sum.URL, want, tt.wantPage)
			}
		})
	}
}

func TestPublishGitLab_PackageName(t *testing.T) {
	f := newGLFixture(t)
	rel := glRelease(t, "v1.0.0", exampleFiles("1"))
	sum, err := f.publish(t, rel, func(o *gitlab.Options) { o.Package = "capi-example" })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantContents(rel.Providers[0]), f.srv.Contents(glProject, "capi-example", "v1.0.0")); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	if want := glURL("group%2Fsub%2Fproject", "capi-example", "v1.0.0", "infrastructure-components.yaml"); sum.Providers[0].URL != want {
		t.Errorf("provider URL = %s, want %s", sum.Providers[0].URL, want)
	}

	two := &release.Release{Version: "v1.0.0", Providers: []*release.Provider{
		glProvider(t, "bootstrap-example", "v1.0.0", map[string]string{"bootstrap-components.yaml": "b"}),
		glProvider(t, "infrastructure-example", "v1.0.0", exampleFiles("1")),
	}}
	before := len(f.srv.Requests())
	_, err = f.publish(t, two, func(o *gitlab.Options) { o.Package = "capi-example" })
	if err == nil || !strings.Contains(err.Error(), "2 providers (bootstrap-example, infrastructure-example)") {
		t.Fatalf("err = %v, want a refusal naming both providers", err)
	}
	if got := len(f.srv.Requests()); got != before {
		t.Errorf("a refused --package sent %d requests", got-before)
	}
}

func TestPublishGitLab_FollowsPagination(t *testing.T) {
	f := newGLFixture(t)
	// package_name is a fuzzy filter: 120 look-alike packages come first.
	for i := range 120 {
		f.srv.Seed(glProject, fmt.Sprintf("infrastructure-example-fork%d", i), "v1.1.0", "metadata.yaml", []byte("other"))
	}
	rel := glRelease(t, "v1.1.0", exampleFiles("1"))
	for _, a := range rel.Providers[0].Assets() {
		f.srv.Seed(glProject, "infrastructure-example", "v1.1.0", a.Name, a.Data)
	}
	// ...and 110 other files in the package itself.
	for i := range 110 {
		f.srv.Seed(glProject, "infrastructure-example", "v1.1.0", fmt.Sprintf("extra-%03d.txt", i), []byte("x"))
	}
	sum, err := f.publish(t, rel)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Skipped) != 5 || len(sum.Uploaded) != 0 {
		t.Errorf("skipped %v uploaded %v, want all 5 skipped", sum.Skipped, sum.Uploaded)
	}
	if got := []int{f.srv.Count(fakegl.RouteListPackages), f.srv.Count(fakegl.RouteListFiles), f.srv.Writes()}; !slices.Equal(got, []int{2, 2, 0}) {
		t.Errorf("[list-packages list-files writes] = %v, want [2 2 0] (two pages each, nothing written)", got)
	}
}

func TestNewGitLab_Options(t *testing.T) {
	ok := gitlab.Options{URL: "https://gitlab.example.com", Project: "g/p", Token: "t"}
	tests := []struct {
		name     string
		edit     func(*gitlab.Options)
		wantErr  string
		warnings []string // substrings, one per warning
	}{
		{name: "gitlab host", edit: func(*gitlab.Options) {}},
		{name: "api/v4 suffix accepted", edit: func(o *gitlab.Options) { o.URL = "https://gitlab.example.com/api/v4/" }},
		{name: "host without gitlab. prefix", edit: func(o *gitlab.Options) { o.URL = "https://code.example.com" },
			warnings: []string{`host "code.example.com" does not start with "gitlab."`}},
		{name: "plain http", edit: func(o *gitlab.Options) { o.URL = "http://gitlab.local:8080" },
			warnings: []string{"is not https"}},
		{name: "relative URL root", edit: func(o *gitlab.Options) { o.URL = "https://gitlab.example.com/gitlab" },
			warnings: []string{`served under "/gitlab"`}},
		{name: "no URL", edit: func(o *gitlab.Options) { o.URL = "" }, wantErr: "--gitlab-url https://gitlab.example.com"},
		{name: "URL without scheme", edit: func(o *gitlab.Options) { o.URL = "gitlab.example.com" }, wantErr: "--gitlab-url https://gitlab.example.com"},
		{name: "no project", edit: func(o *gitlab.Options) { o.Project = "" }, wantErr: "--project GROUP/[SUBGROUP/]NAME"},
		{name: "no token", edit: func(o *gitlab.Options) { o.Token = "" }, wantErr: "GITLAB_ACCESS_TOKEN"},
		{name: "bad token type", edit: func(o *gitlab.Options) { o.TokenType = "basic" }, wantErr: "want private, job or bearer"},
		{name: "bad package name", edit: func(o *gitlab.Options) { o.Package = "a/b" }, wantErr: `package name "a/b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := ok
			tt.edit(&o)
			g, err := gitlab.New(o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := g.Warnings()
			if len(got) != len(tt.warnings) {
				t.Fatalf("warnings = %q, want %d", got, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %q does not say %q", got[i], w)
				}
			}
		})
	}
}

func TestPublishGitLab_PrintsWarningsForANonGitLabHost(t *testing.T) {
	f := newGLFixture(t)
	o := f.options()
	o.URL = "https://code.example.com"
	o.HTTPClient = &http.Client{Transport: f.srv.Transport("code.example.com")}
	g, err := gitlab.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Publish(context.Background(), glRelease(t, "v1.2.0", exampleFiles("1"))); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !strings.Contains(f.out.String(), `warning: host "code.example.com" does not start with "gitlab."`) {
		t.Errorf("progress has no warning:\n%s", f.out.String())
	}
}

func TestGitLabProviderURL(t *testing.T) {
	tests := []struct {
		project, want string
	}{
		{"group/project", "https://gitlab.example.com/api/v4/projects/group%2Fproject/packages/generic/infrastructure-x/v1.2.3/infrastructure-components.yaml"},
		{"group/sub/my.project", "https://gitlab.example.com/api/v4/projects/group%2Fsub%2Fmy.project/packages/generic/infrastructure-x/v1.2.3/infrastructure-components.yaml"},
		{"1234", "https://gitlab.example.com/api/v4/projects/1234/packages/generic/infrastructure-x/v1.2.3/infrastructure-components.yaml"},
	}
	for _, tt := range tests {
		got := gitlab.PackageURL("gitlab.example.com", tt.project, "infrastructure-x", "v1.2.3", "infrastructure-components.yaml")
		if got != tt.want {
			t.Errorf("GitLabProviderURL(%q) = %s, want %s", tt.project, got, tt.want)
		}
	}
}
