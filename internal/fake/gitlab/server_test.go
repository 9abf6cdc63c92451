package gitlab_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	gl "gitlab.com/gitlab-org/api/client-go"
	"golang.org/x/oauth2"

	fake "github.com/capirepo/capirepo/internal/fake/gitlab"
)

const (
	private = "glpat-fake-private"
	job     = "fake-job-token"
)

func newServer(t *testing.T) *fake.Server {
	s := fake.New(t)
	s.AddProject(7, "group/sub/project", false)
	s.AddProject(8, "open/project", true)
	s.AddToken(private, fake.AccessToken)
	s.AddToken(job, fake.JobToken)
	s.AddReadOnlyToken("glpat-read-only", fake.AccessToken)
	return s
}

func client(t *testing.T, s *fake.Server, kind, token string) *gl.Client {
	t.Helper()
	opts := []gl.ClientOptionFunc{gl.WithBaseURL(s.URL + "/api/v4"), gl.WithoutRetries()}
	var (
		c   *gl.Client
		err error
	)
	switch kind {
	case "private":
		c, err = gl.NewClient(token, opts...)
	case "job":
		c, err = gl.NewJobClient(token, opts...)
	case "bearer":
		c, err = gl.NewAuthSourceClient(gl.OAuthTokenSource{TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token})}, opts...)
	case "none":
		c, err = gl.NewAuthSourceClient(gl.Unauthenticated{}, opts...)
	default:
		t.Fatalf("unknown client kind %q", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func put(t *testing.T, c *gl.Client, project any, name, version, file, data string) *gl.GenericPackagesFile {
	t.Helper()
	f, _, err := c.GenericPackages.PublishPackageFile(project, name, version, file, strings.NewReader(data),
		&gl.PublishPackageFileOptions{Select: gl.Ptr(gl.SelectPackageFile)})
	if err != nil {
		t.Fatalf("upload %s: %v", file, err)
	}
	return f
}

func TestUpload_KeepsDuplicatesAndDownloadServesNewest(t *testing.T) {
	s := newServer(t)
	c := client(t, s, "private", private)

	first := put(t, c, "group/sub/project", "infrastructure-x", "v0.1.0", "metadata.yaml", "one")
	second := put(t, c, 7, "infrastructure-x", "v0.1.0", "metadata.yaml", "two")
	put(t, c, 7, "infrastructure-x", "v0.1.0", "cluster-template.yaml", "tpl")

	if first.PackageID != second.PackageID || first.ID == second.ID {
		t.Errorf("duplicates: want one package with two files, got files %d/%d in packages %d/%d", first.ID, second.ID, first.PackageID, second.PackageID)
	}
	if second.FileSHA256 == "" || second.Size != 3 || second.FileName != "metadata.yaml" {
		t.Errorf("upload answer = %+v, want file_name, size and file_sha256", second)
	}
	got, _, err := c.GenericPackages.DownloadPackageFile("group/sub/project", "infrastructure-x", "v0.1.0", "metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "two" {
		t.Errorf("download = %q, want the newest copy %q", got, "two")
	}
	want := map[string][]string{"metadata.yaml": {"one", "two"}, "cluster-template.yaml": {"tpl"}}
	if diff := cmp.Diff(want, s.Contents("7", "infrastructure-x", "v0.1.0")); diff != "" {
		t.Errorf("server state (-want +got):\n%s", diff)
	}
	if n := s.Count(fake.RouteUpload); n != 3 {
		t.Errorf("uploads counted = %d, want 3", n)
	}
}

func TestUpload_WithoutSelectAnswers201Message(t *testing.T) {
	s := newServer(t)
	c := client(t, s, "private", private)
	_, resp, err := c.GenericPackages.PublishPackageFile(7, "p", "v1.0.0", "a.yaml", strings.NewReader("a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("status = %d, want 201", resp.StatusCode)
	}
}

func TestDownload_MissingPackageAndFileAre404(t *testing.T) {
	s := newServer(t)
	c := client(t, s, "private", private)
	_, _, err := c.GenericPackages.DownloadPackageFile(7, "nope", "v1.0.0", "a.yaml")
	if !errors.Is(err, gl.ErrNotFound) {
		t.Errorf("missing package: err = %v, want ErrNotFound", err)
	}
	put(t, c, 7, "p", "v1.0.0", "a.yaml", "a")
	_, _, err = c.GenericPackages.DownloadPackageFile(7, "p", "v1.0.0", "b.yaml")
	if !errors.Is(err, gl.ErrNotFound) {
		t.Errorf("missing file: err = %v, want ErrNotFound", err)
	}
}

func TestListProjectPackages_FiltersAndPaginates(t *testing.T) {
	s := newServer(t)
	for i := range 5 {
		s.Seed("group/sub/project", "infrastructure-x", fmt.Sprintf("v0.%d.0", i), "a.yaml", []byte("a"))
	}
	s.Seed("group/sub/project", "infrastructure-x-extra", "v0.1.0", "a.yaml", []byte("a"))
	c := client(t, s, "private", private)

	_, resp, err := c.Packages.ListProjectPackages(7, &gl.ListProjectPackagesOptions{
		ListOptions: gl.ListOptions{PerPage: 2}, PackageName: gl.Ptr("infrastructure-x"), PackageType: gl.Ptr("generic"),
	})
	if err != nil {
		t.Fatal(err)
	}
	gotHeaders := []int64{resp.TotalItems, resp.TotalPages, resp.CurrentPage, resp.NextPage}
	if diff := cmp.Diff([]int64{6, 3, 1, 2}, gotHeaders); diff != "" {
		t.Errorf("pagination headers [total pages page next] (-want +got):\n%s", diff)
	}
	if resp.NextLink == "" {
		t.Errorf("no Link rel=next on the first page")
	}

	all, err := gl.ScanAndCollect(func(p gl.PaginationOptionFunc) ([]*gl.Package, *gl.Response, error) {
		return c.Packages.ListProjectPackages(7, &gl.ListProjectPackagesOptions{
			ListOptions: gl.ListOptions{PerPage: 2}, PackageName: gl.Ptr("infrastructure-x"),
		}, p)
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range all {
		got = append(got, p.Name+"@"+p.Version+"/"+p.PackageType)
	}
	want := []string{
		"infrastructure-x@v0.0.0/generic", "infrastructure-x@v0.1.0/generic", "infrastructure-x@v0.2.0/generic",
		"infrastructure-x@v0.3.0/generic", "infrastructure-x@v0.4.0/generic", "infrastructure-x-extra@v0.1.0/generic",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("packages over all pages (package_name is fuzzy) (-want +got):\n%s", diff)
	}

	exact, _, err := c.Packages.ListProjectPackages(7, &gl.ListProjectPackagesOptions{
		PackageName: gl.Ptr("infrastructure-x"), PackageVersion: gl.Ptr("v0.3.0"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(exact) != 1 || exact[0].Version != "v0.3.0" {
		t.Errorf("package_version filter: got %d packages %+v, want v0.3.0 only", len(exact), exact)
	}
}

func TestListPackageFiles_PaginatesWithSHA256AndDeleteRemovesOneCopy(t *testing.T) {
	s := newServer(t)
	c := client(t, s, "private", private)
	var pkgID int64
	for i := range 5 {
		pkgID = put(t, c, 7, "p", "v1.0.0", "a.yaml", fmt.Sprintf("copy-%d", i)).PackageID
	}
	files, err := gl.ScanAndCollect(func(p gl.PaginationOptionFunc) ([]*gl.PackageFile, *gl.Response, error) {
		return c.Packages.ListPackageFiles("group/sub/project", pkgID, &gl.ListPackageFilesOptions{ListOptions: gl.ListOptions{PerPage: 2}}, p)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 5 {
		t.Fatalf("listed %d files over all pages, want 5", len(files))
	}
	stored := s.Files("7", "p", "v1.0.0")
	for i, f := range files {
		if f.FileSHA256 != stored[i].SHA256() || f.ID != stored[i].ID {
			t.Errorf("file %d: id %d sha256 %s, want id %d sha256 %s", i, f.ID, f.FileSHA256, stored[i].ID, stored[i].SHA256())
		}
	}

	if _, err := c.Packages.DeletePackageFile(7, pkgID, files[4].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Packages.DeletePackageFile(7, pkgID, files[4].ID); !errors.Is(err, gl.ErrNotFound) {
		t.Errorf("second delete: err = %v, want ErrNotFound", err)
	}
	want := map[string][]string{"a.yaml": {"copy-0", "copy-1", "copy-2", "copy-3"}}
	if diff := cmp.Diff(want, s.Contents("group/sub/project", "p", "v1.0.0")); diff != "" {
		t.Errorf("server state after delete (-want +got):\n%s", diff)
	}
	got, _, err := c.GenericPackages.DownloadPackageFile(7, "p", "v1.0.0", "a.yaml")
	if err != nil || string(got) != "copy-3" {
		t.Errorf("download after deleting the newest = %q, %v; want copy-3", got, err)
	}
}

func TestAuth(t *testing.T) {
	tests := []struct {
		name       string
		kind       string
		token      string
		project    any
		write      bool
		wantStatus int // 0: success
		wantAuth   string
	}{
		{"private token header", "private", private, 7, true, 0, fake.AuthPrivate},
		{"job token header", "job", job, 7, true, 0, fake.AuthJob},
		{"bearer token", "bearer", private, 7, true, 0, fake.AuthBearer},
		{"wrong token is 401", "private", "glpat-wrong", 7, true, http.StatusUnauthorized, fake.AuthPrivate},
		{"job token in PRIVATE-TOKEN is 401", "private", job, 7, true, http.StatusUnauthorized, fake.AuthPrivate},
		{"access token in JOB-TOKEN is 401", "job", private, 7, true, http.StatusUnauthorized, fake.AuthJob},
		{"read-only token cannot write", "private", "glpat-read-only", 7, true, http.StatusForbidden, fake.AuthPrivate},
		{"read-only token can read", "private", "glpat-read-only", 7, false, 0, fake.AuthPrivate},
		{"anonymous cannot write", "none", "", 8, true, http.StatusUnauthorized, fake.AuthNone},
		{"anonymous reads a public project", "none", "", 8, false, 0, fake.AuthNone},
		{"anonymous cannot see a private project", "none", "", 7, false, http.StatusNotFound, fake.AuthNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			s.Seed("7", "p", "v1.0.0", "a.yaml", []byte("a"))
			s.Seed("8", "p", "v1.0.0", "a.yaml", []byte("a"))
			c := client(t, s, tt.kind, tt.token)
			var err error
			if tt.write {
				_, _, err = c.GenericPackages.PublishPackageFile(tt.project, "p", "v1.0.0", "b.yaml", strings.NewReader("b"), nil)
			} else {
				_, _, err = c.GenericPackages.DownloadPackageFile(tt.project, "p", "v1.0.0", "a.yaml")
			}
			status := 0
			var er *gl.ErrorResponse
			switch {
			case errors.As(err, &er):
				status = er.Response.StatusCode
			case errors.Is(err, gl.ErrNotFound):
				status = http.StatusNotFound
			case err != nil:
				t.Fatalf("unexpected error %v", err)
			}
			if status != tt.wantStatus {
				t.Errorf("status = %d (%v), want %d", status, err, tt.wantStatus)
			}
			reqs := s.Requests()
			if len(reqs) != 1 || reqs[0].Auth != tt.wantAuth {
				t.Errorf("requests = %+v, want one with auth %q", reqs, tt.wantAuth)
			}
		})
	}
}

func TestFault_NthCallFailsWithHeadersThenSucceeds(t *testing.T) {
	s := newServer(t)
	s.Fail(fake.Fault{Route: fake.RouteUpload, Nth: 2, Times: 2, Status: http.StatusTooManyRequests,
		Header: http.Header{"Retry-After": {"7"}}})
	c := client(t, s, "private", private)

	var statuses []int
	var retryAfter []string
	for range 4 {
		_, resp, _ := c.GenericPackages.PublishPackageFile(7, "p", "v1.0.0", "a.yaml", strings.NewReader("a"), nil)
		statuses = append(statuses, resp.StatusCode)
		retryAfter = append(retryAfter, resp.Header.Get("Retry-After"))
	}
	if diff := cmp.Diff([]int{201, 429, 429, 201}, statuses); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"", "7", "7", ""}, retryAfter); diff != "" {
		t.Errorf("Retry-After (-want +got):\n%s", diff)
	}
	if got := len(s.Files("7", "p", "v1.0.0")); got != 2 {
		t.Errorf("stored %d files, want 2 (failed uploads store nothing)", got)
	}
	if got := s.Count(fake.RouteUpload); got != 4 {
		t.Errorf("upload count = %d, want 4", got)
	}
}

func TestFault_AfterEffectStoresThenFails(t *testing.T) {
	s := newServer(t)
	s.Fail(fake.Fault{Route: fake.RouteUpload, Nth: 1, Status: http.StatusBadGateway, AfterEffect: true})
	c := client(t, s, "private", private)
	_, _, err := c.GenericPackages.PublishPackageFile(7, "p", "v1.0.0", "a.yaml", strings.NewReader("a"), nil)
	if !gl.HasStatusCode(err, http.StatusBadGateway) {
		t.Fatalf("err = %v, want 502", err)
	}
	if diff := cmp.Diff(map[string][]string{"a.yaml": {"a"}}, s.Contents("7", "p", "v1.0.0")); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
}

func TestFault_DropClosesTheConnection(t *testing.T) {
	s := newServer(t)
	s.Fail(fake.Fault{Route: fake.RouteUpload, Nth: 1, Drop: true})
	c := client(t, s, "private", private)
	_, resp, err := c.GenericPackages.PublishPackageFile(7, "p", "v1.0.0", "a.yaml", bytes.NewReader([]byte("a")), nil)
	if err == nil || resp != nil {
		t.Fatalf("dropped upload: resp %v err %v, want a transport error", resp, err)
	}
	if got := s.Requests(); len(got) != 1 || got[0].Status != 0 {
		t.Errorf("requests = %+v, want one dropped", got)
	}
	if len(s.Files("7", "p", "v1.0.0")) != 0 {
		t.Errorf("a dropped upload stored a file")
	}
}

func TestTransport_RoutesNamedHostsAndRefusesOthers(t *testing.T) {
	s := newServer(t)
	s.Seed("7", "p", "v1.0.0", "a.yaml", []byte("a"))
	hc := &http.Client{Transport: s.Transport("gitlab.example.com")}
	req, _ := http.NewRequest(http.MethodGet, "https://gitlab.example.com/api/v4/projects/group%2Fsub%2Fproject/packages/generic/p/v1.0.0/a.yaml", nil)
	req.Header.Set("PRIVATE-TOKEN", private)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status = %d, want 200", resp.StatusCode)
	}
	if _, err := hc.Get("https://gitlab.com/api/v4/projects/1/packages"); err == nil {
		t.Errorf("request to an unrouted host went through")
	}
}

// recorder is a testing.TB that records Errorf instead of failing.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestUnexpectedRequestFailsTheTest(t *testing.T) {
	rec := &recorder{TB: t}
	s := fake.New(rec)
	resp, err := http.Post(s.URL+"/api/v4/projects/7/issues", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status = %d, want 404", resp.StatusCode)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "unexpected request POST /api/v4/projects/7/issues") {
		t.Errorf("recorded errors = %q, want one naming the request", rec.errs)
	}
}
