package github_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/release"
)

const testToken = "ghp_s3cretTOKENvalue0123456789"

var clock = time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)

// fixture is a small two-file-plus-templates release of infrastructure-example.
func fixture(t *testing.T, version string) *release.Release {
	t.Helper()
	p := &release.Provider{ID: provider.ID{Name: "example", Type: clusterctlv1.InfrastructureProviderType},
		Version: version, ComponentsFile: "infrastructure-components.yaml"}
	for name, data := range map[string]string{
		"infrastructure-components.yaml":        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example-system\n",
		"metadata.yaml":                         "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 1\n  contract: v1beta2\n",
		"cluster-template.yaml":                 "kind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\n",
		"cluster-template-ha.yaml":              "kind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}-ha\n",
		"clusterclass-example-quick-start.yaml": "kind: ClusterClass\nmetadata:\n  name: quick-start\n",
	} {
		if err := p.Add(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	return &release.Release{Version: version, Providers: []*release.Provider{p}}
}

// sleeps records the retry policy's waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

func (s *sleeps) get() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

type env struct {
	srv         *fakegh.Server
	owner, repo string
	sleeps      *sleeps
	out         *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func newEnv(t *testing.T, immutable bool, opts ...fakegh.Option) *env {
	t.Helper()
	srv := fakegh.New(t, append([]fakegh.Option{fakegh.WithToken(testToken), fakegh.WithClock(func() time.Time { return clock })}, opts...)...)
	e := &env{srv: srv, owner: "capi", repo: "example", sleeps: &sleeps{}, out: &syncBuffer{}}
	srv.AddRepo(e.owner, e.repo, immutable)
	return e
}

// publisher returns a publisher for the env. attempts 0 keeps the default
// policy's 6 attempts; 1 makes any failure fail the run.
func (e *env) publisher(t *testing.T, attempts int, mod func(*github.Options)) *github.Target {
	t.Helper()
	o := github.Options{
		Owner: e.owner, Repo: e.repo, Token: testToken, Commitish: "0123abc",
		APIURL: e.srv.APIURL(), HTTPClient: e.srv.Client(), Progress: e.out,
		Retry: &publish.Retry{Attempts: attempts, Sleep: e.sleeps.sleep, Now: func() time.Time { return clock }},
	}
	if mod != nil {
		mod(&o)
	}
	g, err := github.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// state is the fake's final state in a comparable form.
type state struct {
	Tag       string
	Draft     bool
	Immutable bool
	Target    string
	Assets    map[string]string // name -> content
}

func (e *env) state() []state {
	var out []state
	for _, r := range e.srv.Releases(e.owner, e.repo) {
		s := state{Tag: r.Tag, Draft: r.Draft, Immutable: r.Immutable, Target: r.TargetCommitish, Assets: map[string]string{}}
		for _, a := range r.Assets {
			if _, dup := s.Assets[a.Name]; dup {
				s.Assets[a.Name+" (DUPLICATE)"] = string(a.Data)
				continue
			}
			s.Assets[a.Name] = string(a.Data)
		}
		out = append(out, s)
	}
	return out
}

// wantState is one published release holding exactly the release's flat files.
func wantState(t *testing.T, rel *release.Release, draft bool) []state {
	t.Helper()
	files, err := rel.Flat()
	if err != nil {
		t.Fatal(err)
	}
	s := state{Tag: rel.Version, Draft: draft, Target: "0123abc", Assets: map[string]string{}}
	for _, f := range files {
		s.Assets[f.Name] = string(f.Data)
	}
	return []state{s}
}

// fakeAssets returns the release's files as assets of a fake release.
func fakeAssets(t *testing.T, rel *release.Release) []fakegh.Asset {
	t.Helper()
	files, err := rel.Flat()
	if err != nil {
		t.Fatal(err)
	}
	var assets []fakegh.Asset
	for _, f := range files {
		assets = append(assets, fakegh.Asset{Name: f.Name, Data: f.Data})
	}
	return assets
}

func names(t *testing.T, rel *release.Release) []string {
	files, err := rel.Flat()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	slices.Sort(out)
	return out
}

func TestPublishGitHub_NewReleaseIsDraftUntilEveryAssetIsUploadedAndChecked(t *testing.T) {
	e := newEnv(t, false)
	rel := fixture(t, "v0.1.0")
	sum, err := e.publisher(t, 0, nil).Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantState(t, rel, false), e.state()); diff != "" {
		t.Errorf("server state (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"v0.1.0": "0123abc"}, e.srv.Tags(e.owner, e.repo)); diff != "" {
		t.Errorf("tags (-want +got):\n%s", diff)
	}
	files, _ := rel.Flat()
	var size int64
	for _, f := range files {
		size += int64(len(f.Data))
	}
	want := &publish.Summary{
		Kind: "github", Logged: true, URL: e.srv.URL + "/capi/example/releases/tag/v0.1.0", Version: "v0.1.0",
		Uploaded: names(t, rel), Skipped: []string{}, Replaced: []string{}, BytesUploaded: size,
		Providers: []publish.ProviderURL{{Name: "example", Type: "InfrastructureProvider",
			URL: e.srv.URL + "/capi/example/releases/latest/infrastructure-components.yaml"}},
	}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	// The draft is created first, the release published last.
	log := e.srv.Log()
	var routes []string
	for _, l := range log {
		routes = append(routes, strings.SplitN(l, " /", 2)[0])
	}
	if i := slices.Index(routes, fakegh.RouteCreateRelease); i < 0 || slices.Index(routes, fakegh.RouteUploadAsset) < i {
		t.Errorf("uploads before the draft was created: %v", routes)
	}
	if routes[len(routes)-1] != fakegh.RouteEditRelease {
		t.Errorf("last call = %s, want the publish (PATCH release): %v", routes[len(routes)-1], routes)
	}
	if got := e.srv.Calls(fakegh.RouteUploadAsset); got != len(files) {
		t.Errorf("uploads = %d, want %d", got, len(files))
	}
	var js map[string]any
	b, _ := json.Marshal(sum)
	if err := json.Unmarshal(b, &js); err != nil || js["bytesUploaded"] == nil || js["providers"] == nil {
		t.Errorf("summary JSON = %s", b)
	}
	var text bytes.Buffer
	if err := sum.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"published", "6 uploaded", "releases/latest/infrastructure-components.yaml"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("summary text lacks %q:\n%s", s, text.String())
		}
	}
}

func TestPublishGitHub_RepublishUnchangedUploadsNothing(t *testing.T) {
	e := newEnv(t, false)
	rel := fixture(t, "v0.1.0")
	if _, err := e.publisher(t, 0, nil).Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
	e.srv.ResetLog()
	sum, err := e.publisher(t, 0, nil).Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	if sum.BytesUploaded != 0 || len(sum.Uploaded) != 0 || len(sum.Replaced) != 0 {
		t.Errorf("summary = %+v, want nothing uploaded", sum)
	}
	if diff := cmp.Diff(names(t, rel), sum.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	// One lookup by tag, whose reply lists the assets; the first page of
	// releases is read alongside it, and cancelled once the release is found.
	log := slices.DeleteFunc(e.srv.Log(), func(l string) bool { return l == fakegh.RouteListReleases+" /api/v3/repos/capi/example/releases" })
	if diff := cmp.Diff([]string{
		fakegh.RouteGetReleaseByTag + " /api/v3/repos/capi/example/releases/tags/v0.1.0",
	}, log); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if n := e.srv.Calls(fakegh.RouteListReleases); n > 1 {
		t.Errorf("%d pages of releases read, want at most 1", n)
	}
	if diff := cmp.Diff(wantState(t, rel, false), e.state()); diff != "" {
		t.Errorf("server state (-want +got):\n%s", diff)
	}
}

func TestPublishGitHub_RerunAfterFailureLeavesOneCopyOfEveryAsset(t *testing.T) {
	tests := []struct {
		name    string
		route   string
		nth     int
		fault   fakegh.Fault
		replace bool // publish a changed release over a published one
	}{
		{name: "create fails", route: fakegh.RouteCreateRelease, nth: 1, fault: fakegh.ServerError},
		{name: "create succeeds but the reply is lost", route: fakegh.RouteCreateRelease, nth: 1, fault: fakegh.DropAfter},
		{name: "second upload fails", route: fakegh.RouteUploadAsset, nth: 2, fault: fakegh.ServerError},
		{name: "third upload stored but the reply is lost", route: fakegh.RouteUploadAsset, nth: 3, fault: fakegh.DropAfter},
		{name: "upload connection dropped mid-body", route: fakegh.RouteUploadAsset, nth: 1, fault: fakegh.Dropped},
		{name: "read back fails", route: fakegh.RouteListAssets, nth: 1, fault: fakegh.ServerError},
		{name: "publish fails", route: fakegh.RouteEditRelease, nth: 1, fault: fakegh.ServerError},
		{name: "publish succeeds but the reply is lost", route: fakegh.RouteEditRelease, nth: 1, fault: fakegh.DropAfter},
		{name: "replace: temp upload fails", route: fakegh.RouteUploadAsset, nth: 1, fault: fakegh.ServerError, replace: true},
		{name: "replace: delete of the old asset fails", route: fakegh.RouteDeleteAsset, nth: 1, fault: fakegh.ServerError, replace: true},
		{name: "replace: rename fails after the delete", route: fakegh.RouteEditAsset, nth: 1, fault: fakegh.ServerError, replace: true},
	}
	for _, tt := range tests {
		for _, retries := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/retries=%v", tt.name, retries), func(t *testing.T) {
				e := newEnv(t, false)
				rel := fixture(t, "v0.2.0")
				mod := func(o *github.Options) { o.Replace = tt.replace }
				if tt.replace {
					old := fixture(t, "v0.2.0")
					_ = old.Providers[0].Add("cluster-template-ha.yaml", []byte("old bytes\n"))
					if _, err := e.publisher(t, 1, nil).Publish(context.Background(), old); err != nil {
						t.Fatal(err)
					}
				}
				e.srv.Inject(tt.route, tt.nth, tt.fault)
				attempts := 1
				if retries {
					attempts = 0
				}
				_, err := e.publisher(t, attempts, mod).Publish(context.Background(), rel)
				switch {
				case retries && err != nil:
					t.Fatalf("with retries the run should absorb one failure: %v", err)
				case !retries && err == nil:
					t.Fatalf("without retries the injected failure should fail the run")
				case !retries:
					if _, err := e.publisher(t, 1, mod).Publish(context.Background(), rel); err != nil {
						t.Fatalf("re-run: %v", err)
					}
				}
				if diff := cmp.Diff(wantState(t, rel, false), e.state()); diff != "" {
					t.Errorf("server state (-want +got):\n%s", diff)
				}
				if retries && len(e.sleeps.get()) == 0 {
					t.Errorf("no backoff wait recorded")
				}
			})
		}
	}
}

func TestPublishGitHub_ChangedAssetWithoutReplaceFailsAndChangesNothing(t *testing.T) {
	for _, draft := range []bool{false, true} {
		t.Run(fmt.Sprintf("draft=%v", draft), func(t *testing.T) {
			e := newEnv(t, false)
			mod := func(o *github.Options) { o.Draft = draft }
			if _, err := e.publisher(t, 0, mod).Publish(context.Background(), fixture(t, "v0.3.0")); err != nil {
				t.Fatal(err)
			}
			before := e.state()
			e.srv.ResetLog()
			changed := fixture(t, "v0.3.0")
			_ = changed.Providers[0].Add("cluster-template-ha.yaml", []byte("new bytes\n"))
			_, err := e.publisher(t, 0, mod).Publish(context.Background(), changed)
			if err == nil {
				t.Fatal("publish of a changed asset without --replace succeeded")
			}
			for _, s := range []string{"cluster-template-ha.yaml", "--replace", "nothing was changed"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if diff := cmp.Diff(before, e.state()); diff != "" {
				t.Errorf("server state changed (-before +after):\n%s", diff)
			}
			for _, r := range []string{fakegh.RouteUploadAsset, fakegh.RouteDeleteAsset, fakegh.RouteEditAsset, fakegh.RouteEditRelease, fakegh.RouteCreateRelease} {
				if n := e.srv.Calls(r); n != 0 {
					t.Errorf("%d %s calls, want 0", n, r)
				}
			}
		})
	}
}

func TestPublishGitHub_ReplaceLeavesOneAssetWithTheNewBytes(t *testing.T) {
	e := newEnv(t, false)
	if _, err := e.publisher(t, 0, nil).Publish(context.Background(), fixture(t, "v0.4.0")); err != nil {
		t.Fatal(err)
	}
	changed := fixture(t, "v0.4.0")
	_ = changed.Providers[0].Add("cluster-template-ha.yaml", []byte("new bytes\n"))
	sum, err := e.publisher(t, 0, func(o *github.Options) { o.Replace = true }).Publish(context.Background(), changed)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantState(t, changed, false), e.state()); diff != "" {
		t.Errorf("server state (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"checksums.txt", "cluster-template-ha.yaml"}, sum.Replaced); diff != "" {
		t.Errorf("replaced (-want +got):\n%s", diff)
	}
	if len(sum.Uploaded) != 0 || len(sum.Skipped) != 4 {
		t.Errorf("summary = %+v", sum)
	}
}

func TestPublishGitHub_AddingAssetsToAPublishedReleaseNeedsReplace(t *testing.T) {
	e := newEnv(t, false)
	small := fixture(t, "v0.5.0")
	small.Providers[0].Files = slices.DeleteFunc(small.Providers[0].Files, func(f release.File) bool { return f.Name == "cluster-template-ha.yaml" })
	if _, err := e.publisher(t, 0, nil).Publish(context.Background(), small); err != nil {
		t.Fatal(err)
	}
	before := e.state()
	_, err := e.publisher(t, 0, nil).Publish(context.Background(), fixture(t, "v0.5.0"))
	if err == nil || !strings.Contains(err.Error(), "already published") || !strings.Contains(err.Error(), "missing cluster-template-ha.yaml") {
		t.Fatalf("err = %v, want an already-published error naming the missing asset", err)
	}
	if diff := cmp.Diff(before, e.state()); diff != "" {
		t.Errorf("server state changed (-before +after):\n%s", diff)
	}
	if _, err := e.publisher(t, 0, func(o *github.Options) { o.Replace = true }).Publish(context.Background(), fixture(t, "v0.5.0")); err != nil {
		t.Fatalf("with --replace: %v", err)
	}
	if diff := cmp.Diff(wantState(t, fixture(t, "v0.5.0"), false), e.state()); diff != "" {
		t.Errorf("server state (-want +got):\n%s", diff)
	}
}

func TestPublishGitHub_ImmutableReleaseIsRefusedBeforeAnyUpload(t *testing.T) {
	e := newEnv(t, true)
	if _, err := e.publisher(t, 0, nil).Publish(context.Background(), fixture(t, "v0.6.0")); err != nil {
		t.Fatal(err)
	}
	if st := e.state(); len(st) != 1 || !st[0].Immutable {
		t.Fatalf("published release is not immutable: %+v", st)
	}
	// Unchanged: nothing to do, no error.
	if _, err := e.publisher(t, 0, nil).Publish(context.Background(), fixture(t, "v0.6.0")); err != nil {
		t.Fatalf("unchanged immutable release: %v", err)
	}
	before := e.state()
	e.srv.ResetLog()
	changed := fixture(t, "v0.6.0")
	_ = changed.Providers[0].Add("cluster-template-ha.yaml", []byte("new bytes\n"))
	_, err := e.publisher(t, 0, func(o *github.Options) { o.Replace = true }).Publish(context.Background(), changed)
	if err == nil || !strings.Contains(err.Error(), "immutable") || !strings.Contains(err.Error(), "cluster-template-ha.yaml") || !strings.Contains(err.Error(), "a new version is the only fix") {
		t.Fatalf("err = %v, want an immutable-release error naming the asset", err)
	}
	if n := e.srv.Calls(fakegh.RouteUploadAsset) + e.srv.Calls(fakegh.RouteDeleteAsset); n != 0 {
		t.Errorf("%d writes to an immutable release, want 0", n)
	}
	if diff := cmp.Diff(before, e.state()); diff != "" {
		t.Errorf("server state changed (-before +after):\n%s", diff)
	}
}

func TestPublishGitHub_PermanentErrorsFailAtOnceAndNeverShowTheToken(t *testing.T) {
	tests := []struct {
		name     string
		token    string
		repo     string
		wantText []string
	}{
		{name: "401 bad credentials", token: testToken + "-revoked", repo: "example",
			wantText: []string{"401", "Bad credentials", "GITHUB_TOKEN"}},
		// A 404 by tag may just mean "no release yet": the listing's 404
		// then says the repository is missing.
		{name: "404 repository", token: testToken, repo: "missing",
			wantText: []string{"404", "capi/missing does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, false)
			g := e.publisher(t, 0, func(o *github.Options) { o.Token, o.Repo = tt.token, tt.repo })
			_, err := g.Publish(context.Background(), fixture(t, "v0.7.0"))
			if err == nil {
				t.Fatal("publish succeeded")
			}
			for _, s := range tt.wantText {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			for _, out := range []string{err.Error(), fmt.Sprintf("%+v %#v", err, err), e.out.String()} {
				if strings.Contains(out, testToken) {
					t.Errorf("token leaked: %s", out)
				}
			}
			// The lookup by tag and the first page of releases, run together
			// (the page may be cancelled before it reaches the server).
			if got, calls := len(e.srv.Log()), e.srv.Calls(fakegh.RouteGetReleaseByTag); got > 2 || calls != 1 {
				t.Errorf("%d requests, %d by tag, want at most 2 and 1 (no retry): %v", got, calls, e.srv.Log())
			}
			if len(e.sleeps.get()) != 0 {
				t.Errorf("slept %v before failing", e.sleeps.get())
			}
		})
	}
}

func TestPublishGitHub_TransientFailuresAreRetriedWithTheServersWait(t *testing.T) {
	tests := []struct {
		name      string
		route     string
		faults    []fakegh.Fault
		wantCalls int
		wantWaits []time.Duration
	}{
		{name: "5xx twice then success", route: fakegh.RouteCreateRelease,
			faults: []fakegh.Fault{fakegh.ServerError, {Status: http.StatusServiceUnavailable}}, wantCalls: 3,
			wantWaits: []time.Duration{time.Second, 2 * time.Second}},
		{name: "429 with Retry-After", route: fakegh.RouteEditRelease,
			faults:    []fakegh.Fault{{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"12"}}}},
			wantCalls: 2, wantWaits: []time.Duration{12 * time.Second}},
		{name: "secondary rate limit 403 with Retry-After", route: fakegh.RouteGetReleaseByTag,
			faults: []fakegh.Fault{fakegh.RetryAfter(7)}, wantCalls: 2, wantWaits: []time.Duration{7 * time.Second}},
		{name: "primary rate limit waits until the reset", route: fakegh.RouteListReleases,
			faults:    []fakegh.Fault{fakegh.PrimaryRateLimit(clock.Add(30 * time.Second))},
			wantCalls: 2, wantWaits: []time.Duration{31 * time.Second}},
		{name: "connection reset mid-upload", route: fakegh.RouteUploadAsset,
			faults: []fakegh.Fault{fakegh.Dropped}, wantCalls: 7, wantWaits: []time.Duration{time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, false)
			for i, f := range tt.faults {
				e.srv.Inject(tt.route, i+1, f)
			}
			rel := fixture(t, "v0.8.0")
			g := e.publisher(t, 0, func(o *github.Options) { o.Concurrency = 1 })
			if _, err := g.Publish(context.Background(), rel); err != nil {
				t.Fatal(err)
			}
			if got := e.srv.Calls(tt.route); got != tt.wantCalls {
				t.Errorf("%s calls = %d, want %d", tt.route, got, tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantWaits, e.sleeps.get()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantState(t, rel, false), e.state()); diff != "" {
				t.Errorf("server state (-want +got):\n%s", diff)
			}
			if !strings.Contains(e.out.String(), "retrying in") {
				t.Errorf("progress does not report the retry:\n%s", e.out.String())
			}
		})
	}
}

func TestPublishGitHub_GivesUpAfterTheAttemptsWithTheAPIMessage(t *testing.T) {
	e := newEnv(t, false)
	for i := 1; i <= 6; i++ {
		e.srv.Inject(fakegh.RouteUploadAsset, i, fakegh.ServerError)
	}
	_, err := e.publisher(t, 0, func(o *github.Options) { o.Concurrency = 1 }).Publish(context.Background(), fixture(t, "v0.8.1"))
	if err == nil {
		t.Fatal("publish succeeded")
	}
	for _, s := range []string{"502", "gave up after 6 attempts", "re-run to finish"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	// The error names the asset whose upload failed (which one goes first is
	// up to the scheduler).
	if !regexp.MustCompile(`upload [a-z.-]+\.(yaml|txt)`).MatchString(err.Error()) {
		t.Errorf("error %q does not name the asset", err)
	}
	st := e.state()
	if len(st) != 1 || !st[0].Draft {
		t.Errorf("a failed upload must leave the release a draft: %+v", st)
	}
}

func TestPublishGitHub_WithoutDigestDownloadsToCompare(t *testing.T) {
	e := newEnv(t, false, fakegh.WithoutDigest())
	rel := fixture(t, "v0.9.0")
	if _, err := e.publisher(t, 0, nil).Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
	e.srv.ResetLog()
	sum, err := e.publisher(t, 0, nil).Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.srv.Calls(fakegh.RouteGetAsset), len(names(t, rel)); got != want {
		t.Errorf("downloads = %d, want %d (one per same-size asset)", got, want)
	}
	if sum.BytesUploaded != 0 || len(sum.Skipped) != 6 {
		t.Errorf("summary = %+v", sum)
	}
	changed := fixture(t, "v0.9.0")
	_ = changed.Providers[0].Add("cluster-template-ha.yaml", []byte("kind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}-HA\n")) // same size
	if _, err := e.publisher(t, 0, nil).Publish(context.Background(), changed); err == nil || !strings.Contains(err.Error(), "cluster-template-ha.yaml") {
		t.Errorf("same-size change not detected: %v", err)
	}
}

func TestPublishGitHub_DraftOptionLeavesTheReleaseADraftAndARerunPublishesIt(t *testing.T) {
	e := newEnv(t, false)
	rel := fixture(t, "v1.0.0-rc.1")
	sum, err := e.publisher(t, 0, func(o *github.Options) { o.Draft = true }).Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Draft {
		t.Error("summary does not say draft")
	}
	if diff := cmp.Diff(wantState(t, rel, true), e.state()); diff != "" {
		t.Errorf("server state (-want +got):\n%s", diff)
	}
	if len(e.srv.Tags(e.owner, e.repo)) != 0 {
		t.Errorf("a draft created a tag: %v", e.srv.Tags(e.owner, e.repo))
	}
	e.srv.ResetLog()
	if _, err := e.publisher(t, 0, nil).Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantState(t, rel, false), e.state()); diff != "" {
		t.Errorf("server state (-want +got):\n%s", diff)
	}
	if n := e.srv.Calls(fakegh.RouteUploadAsset); n != 0 {
		t.Errorf("re-run uploaded %d assets, want 0", n)
	}
	if r := e.srv.Releases(e.owner, e.repo); !r[0].Prerelease {
		t.Error("an -rc tag was not marked prerelease")
	}
}

func TestPublishGitHub_FindsTheDraftOnALaterPageOfReleases(t *testing.T) {
	e := newEnv(t, false)
	rel := fixture(t, "v2.0.0")
	// An old draft for the tag, then 150 newer releases: listed newest first,
	// the draft is on the second page of 100.
	// A newer draft for the same tag is on the first page: the oldest wins.
	draftID := e.srv.AddRelease(e.owner, e.repo, fakegh.Release{Tag: "v2.0.0", Draft: true, TargetCommitish: "0123abc",
		Assets: []fakegh.Asset{{Name: "metadata.yaml", Data: mustFile(t, rel, "metadata.yaml")}}})
	for i := range 150 {
		e.srv.AddRelease(e.owner, e.repo, fakegh.Release{Tag: fmt.Sprintf("v1.%d.0", i), TargetCommitish: "main"})
	}
	newer := e.srv.AddRelease(e.owner, e.repo, fakegh.Release{Tag: "v2.0.0", Draft: true, TargetCommitish: "0123abc"})
	sum, err := e.publisher(t, 0, nil).Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.srv.Calls(fakegh.RouteListReleases); got != 2 {
		t.Errorf("release list pages = %d, want 2", got)
	}
	if n := e.srv.Calls(fakegh.RouteCreateRelease); n != 0 {
		t.Errorf("created %d releases, want to resume draft %d", n, draftID)
	}
	// The draft's assets come with the listing: the assets are listed once,
	// to read them back after the uploads.
	if n := e.srv.Calls(fakegh.RouteListAssets); n != 1 {
		t.Errorf("asset listings = %d, want 1 (the read back)", n)
	}
	if diff := cmp.Diff([]string{"metadata.yaml"}, sum.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	st := e.state()
	if got := st[0]; got.Draft || len(got.Assets) != 6 {
		t.Errorf("resumed draft = %+v", got)
	}
	if got := st[151]; !got.Draft || len(got.Assets) != 0 {
		t.Errorf("newer draft %d = %+v, want it untouched", newer, got)
	}
	if len(st) != 152 {
		t.Errorf("%d releases, want 152", len(st))
	}
}

func TestPublishGitHub_FreshPublishRequests(t *testing.T) {
	e := newEnv(t, false)
	rel := fixture(t, "v2.1.0")
	if _, err := e.publisher(t, 0, nil).Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
	files := len(names(t, rel))
	var routes []string
	for _, l := range e.srv.Log() {
		routes = append(routes, strings.SplitN(l, " /", 2)[0])
	}
	// The lookup by tag and the first page of releases go out together, then
	// the tag lookup (--target is set), the draft, the uploads, the read
	// back, and the publish.
	lookups := slices.Clone(routes[:2])
	slices.Sort(lookups)
	want := []string{fakegh.RouteGetReleaseByTag, fakegh.RouteListReleases, fakegh.RouteGetTagRef, fakegh.RouteCreateRelease} // lookups sorted
	for range files {
		want = append(want, fakegh.RouteUploadAsset)
	}
	want = append(want, fakegh.RouteListAssets, fakegh.RouteEditRelease)
	if diff := cmp.Diff(want, append(lookups, routes[2:]...)); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if len(routes) != files+6 {
		t.Errorf("%d requests, want %d", len(routes), files+6)
	}
}

func TestPublishGitHub_PublishedReleaseWinsOverADraftForTheSameTag(t *testing.T) {
	e := newEnv(t, false)
	rel := fixture(t, "v2.2.0")
	assets := fakeAssets(t, rel)
	// An older and a newer draft around the published release.
	e.srv.AddRelease(e.owner, e.repo, fakegh.Release{Tag: "v2.2.0", Draft: true, TargetCommitish: "0123abc"})
	e.srv.AddRelease(e.owner, e.repo, fakegh.Release{Tag: "v2.2.0", TargetCommitish: "0123abc", Assets: assets})
	e.srv.AddRelease(e.owner, e.repo, fakegh.Release{Tag: "v2.2.0", Draft: true, TargetCommitish: "0123abc"})
	before := e.state()
	// The listing fails: it does not matter once the lookup by tag found the release.
	e.srv.Inject(fakegh.RouteListReleases, 1, fakegh.ServerError)
	sum, err := e.publisher(t, 1, nil).Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(names(t, rel), sum.Skipped); diff != "" || sum.Draft {
		t.Errorf("skipped (-want +got):\n%s\ndraft: %v", diff, sum.Draft)
	}
	if diff := cmp.Diff(before, e.state()); diff != "" {
		t.Errorf("server state changed (-before +after):\n%s", diff)
	}
}

func TestPublishGitHub_EitherLookupsErrorIsReported(t *testing.T) {
	denied := fakegh.Fault{Status: http.StatusForbidden, Body: `{"message":"Resource not accessible by integration"}`}
	for _, tt := range []struct {
		route string
		want  string
	}{
		{fakegh.RouteGetReleaseByTag, "look up release v2.3.0 of capi/example"},
		{fakegh.RouteListReleases, "look for a draft release v2.3.0 of capi/example"},
	} {
		t.Run(tt.route, func(t *testing.T) {
			e := newEnv(t, false)
			e.srv.Inject(tt.route, 1, denied)
			_, err := e.publisher(t, 0, nil).Publish(context.Background(), fixture(t, "v2.3.0"))
			if err == nil {
				t.Fatal("publish succeeded")
			}
			for _, s := range []string{tt.want, "403", "Resource not accessible by integration", "contents: write"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if n := len(e.srv.Releases(e.owner, e.repo)); n != 0 {
				t.Errorf("%d releases created after a failed lookup", n)
			}
		})
	}
}

func TestUploadURLFor(t *testing.T) {
	for api, want := range map[string]string{
		"https://api.github.com/":            "https://uploads.github.com/",
		"https://ghe.example.com/api/v3/":    "https://ghe.example.com/api/uploads/",
		"https://ghe.example.com/api/v3":     "https://ghe.example.com/api/uploads/",
		"http://127.0.0.1:8080/api/v3/":      "http://127.0.0.1:8080/api/uploads/",
		"https://ghe.example.com/gh/api/v3/": "https://ghe.example.com/gh/api/uploads/",
	} {
		if got := github.UploadURLFor(api); got != want {
			t.Errorf("UploadURLFor(%q) = %q, want %q", api, got, want)
		}
	}
}

func TestNewGitHub_RejectsBadOptions(t *testing.T) {
	for _, o := range []github.Options{
		{Repo: "x"},
		{Owner: "a/b", Repo: "x"},
		{Owner: "a", Repo: "x", APIURL: "ftp://host/"},
	} {
		if _, err := github.New(o); err == nil {
			t.Errorf("github.New(%+v) accepted", o)
		}
	}
}

func mustFile(t *testing.T, rel *release.Release, name string) []byte {
	t.Helper()
	f, ok := rel.Providers[0].File(name)
	if !ok {
		t.Fatalf("fixture has no %s", name)
	}
	return f.Data
}

func TestPublishGitHub_UploadsTheLargestAssetsFirst(t *testing.T) {
	e := newEnv(t, false)
	rel := fixture(t, "v2.4.0")
	_ = rel.Providers[0].Add("cluster-template-big.yaml", bytes.Repeat([]byte("# big\n"), 1000))
	if _, err := e.publisher(t, 0, func(o *github.Options) { o.Concurrency = 1 }).Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
	// One upload at a time: the server holds the assets in upload order.
	st := e.srv.Releases(e.owner, e.repo)
	var sizes []int
	for _, a := range st[0].Assets {
		sizes = append(sizes, len(a.Data))
	}
	if len(sizes) != len(names(t, rel)) || !slices.IsSortedFunc(sizes, func(a, b int) int { return b - a }) || st[0].Assets[0].Name != "cluster-template-big.yaml" {
		t.Errorf("upload order by size = %v (first %s), want largest first", sizes, st[0].Assets[0].Name)
	}
}

func TestPublishGitHub_ALongAssetListIsListedAgainBeforeComparing(t *testing.T) {
	e := newEnv(t, false)
	rel := fixture(t, "v2.5.0")
	assets := fakeAssets(t, rel)
	for i := range 60 {
		assets = append(assets, fakegh.Asset{Name: fmt.Sprintf("extra-%02d.txt", i), Data: []byte("x")})
	}
	e.srv.AddRelease(e.owner, e.repo, fakegh.Release{Tag: "v2.5.0", TargetCommitish: "0123abc", Assets: assets})
	sum, err := e.publisher(t, 1, nil).Publish(context.Background(), rel)
	if err != nil {
		t.Fatal(err)
	}
	if n := e.srv.Calls(fakegh.RouteListAssets); n != 1 {
		t.Errorf("asset listings = %d, want 1: %d assets are too many to trust the release object's list", n, len(assets))
	}
	if diff := cmp.Diff(names(t, rel), sum.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}
