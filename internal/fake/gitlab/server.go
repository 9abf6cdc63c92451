package gitlab

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capirepo/capirepo/internal/fake/endless"
)

// Route names one API operation the fake serves; faults and counts are per route.
type Route string

const (
	// RouteUpload is PUT /projects/:id/packages/generic/:name/:version/:file.
	RouteUpload Route = "upload"
	// RouteDownload is GET /projects/:id/packages/generic/:name/:version/:file.
	RouteDownload Route = "download"
	// RouteListPackages is GET /projects/:id/packages.
	RouteListPackages Route = "list-packages"
	// RouteListFiles is GET /projects/:id/packages/:package_id/package_files.
	RouteListFiles Route = "list-files"
	// RouteDeleteFile is DELETE /projects/:id/packages/:package_id/package_files/:file_id.
	RouteDeleteFile Route = "delete-file"
	// RouteCreateRelease is POST /projects/:id/releases.
	RouteCreateRelease Route = "create-release"
	// RouteGetRelease is GET /projects/:id/releases/:tag_name.
	RouteGetRelease Route = "get-release"
	// RouteUpdateRelease is PUT /projects/:id/releases/:tag_name.
	RouteUpdateRelease Route = "update-release"
	// RouteListReleaseLinks is GET /projects/:id/releases/:tag_name/assets/links.
	RouteListReleaseLinks Route = "list-release-links"
	// RouteCreateReleaseLink is POST /projects/:id/releases/:tag_name/assets/links.
	RouteCreateReleaseLink Route = "create-release-link"
)

// TokenKind says which header a token is accepted in, as GitLab does:
// personal, project and group access tokens in PRIVATE-TOKEN or as a Bearer
// token, CI job tokens in JOB-TOKEN.
type TokenKind int

const (
	// AccessToken is a personal, project or group access token.
	AccessToken TokenKind = iota
	// JobToken is a CI/CD job token (CI_JOB_TOKEN).
	JobToken
)

// Auth header names as recorded in Request.Auth.
const (
	AuthNone    = ""
	AuthPrivate = "PRIVATE-TOKEN"
	AuthJob     = "JOB-TOKEN"
	AuthBearer  = "Bearer"
)

// Request is one request the fake received.
type Request struct {
	Method string
	Route  Route
	// Path is the escaped request path, e.g. /api/v4/projects/g%2Fp/packages.
	Path string
	// Auth is the header the token came in (AuthPrivate, AuthJob, AuthBearer) or AuthNone.
	Auth string
	// Status is the status code the fake answered with, 0 for a dropped connection.
	Status int
}

// Fault makes calls to one route fail.
type Fault struct {
	Route Route
	// Nth is the first call (1-based, counted per route) that fails; 0 means every call.
	Nth int
	// Times is how many calls in a row fail from Nth on; 0 means 1.
	Times int
	// Status is the status code to answer with (e.g. 503, 429).
	Status int
	// Header is added to the failing response (e.g. Retry-After, RateLimit-Reset).
	Header http.Header
	// Body is the response body; empty means GitLab's {"message":"<status> <text>"}.
	Body string
	// Drop closes the connection without an answer instead of sending Status.
	Drop bool
	// AfterEffect performs the request first (an upload is stored) and then
	// fails, as when a response is lost on the way back.
	AfterEffect bool
	// Endless answers 200 with a body that never ends (a hostile or broken
	// download); with Trickle, one byte every Trickle.
	Endless bool
	Trickle time.Duration
}

// File is one stored package file, as the fake holds it.
type File struct {
	ID        int64
	PackageID int64
	Name      string
	Data      []byte
	CreatedAt time.Time
}

// SHA256 returns the hex sha256 of the file's bytes.
func (f File) SHA256() string {
	sum := sha256.Sum256(f.Data)
	return hex.EncodeToString(sum[:])
}

type project struct {
	id       int64
	path     string
	public   bool
	tags     map[string]string // tag -> ref it was made from
	releases []*Release
}

type pkg struct {
	id        int64
	projectID int64
	name      string
	version   string
	createdAt time.Time
}

type token struct {
	kind     TokenKind
	readOnly bool
}

// Server is the fake GitLab. Create it with New; it is closed when the test ends.
type Server struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:1234 (no /api/v4).
	URL string

	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	projects []*project
	packages []*pkg
	files    []*File
	tokens   map[string]token
	faults   []Fault
	calls    map[Route]int
	requests []Request
	nextID   int64
	clock    time.Time
}

// New starts a fake GitLab with no projects and no tokens.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		t:      t,
		tokens: map[string]token{},
		calls:  map[Route]int{},
		nextID: 100,
		clock:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// AddProject adds a project reachable by its numeric id and by its full path
// (group/subgroup/name). A public project's package files can be downloaded
// without a token.
func (s *Server) AddProject(id int64, path string, public bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.projects = append(s.projects, &project{id: id, path: path, public: public, tags: map[string]string{}})
}

// AddToken makes a token valid for every project, with write access.
func (s *Server) AddToken(value string, kind TokenKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[value] = token{kind: kind}
}

// AddReadOnlyToken makes a token valid for reading only; writes get 403.
func (s *Server) AddReadOnlyToken(value string, kind TokenKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[value] = token{kind: kind, readOnly: true}
}

// Fail adds a fault.
func (s *Server) Fail(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

// Seed stores a package file directly, as if uploaded earlier, creating the
// package if needed. Seeding a name twice keeps both copies, as GitLab does.
func (s *Server) Seed(projectRef, name, version, file string, data []byte) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.findProject(projectRef)
	if p == nil {
		s.t.Fatalf("fake gitlab: Seed: no project %q", projectRef)
	}
	s.store(p, name, version, file, data)
}

// Files returns every file of the generic package name/version in a project,
// oldest first, duplicates included.
func (s *Server) Files(projectRef, name, version string) []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.findProject(projectRef)
	if p == nil {
		return nil
	}
	var out []File
	for _, pk := range s.packages {
		if pk.projectID != p.id || pk.name != name || pk.version != version {
			continue
		}
		for _, f := range s.files {
			if f.PackageID == pk.id {
				c := *f
				c.Data = slices.Clone(f.Data)
				out = append(out, c)
			}
		}
	}
	slices.SortFunc(out, func(a, b File) int { return int(a.ID - b.ID) })
	return out
}

// Contents returns, for each file name of a package, the bytes of every copy,
// oldest first: a compact final state to compare with cmp.Diff.
func (s *Server) Contents(projectRef, name, version string) map[string][]string {
	out := map[string][]string{}
	for _, f := range s.Files(projectRef, name, version) {
		out[f.Name] = append(out[f.Name], string(f.Data))
	}
	return out
}

// Count returns how many requests a route received, faults included.
func (s *Server) Count(r Route) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[r]
}

// Requests returns every request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Writes counts the requests that change state (uploads and deletes).
func (s *Server) Writes() int {
	return s.Count(RouteUpload) + s.Count(RouteDeleteFile)
}

// Transport returns a RoundTripper that sends requests for the given hosts
// (e.g. "gitlab.example.com") to the fake over plain HTTP, whatever their
// scheme, keeping the Host header. Requests for any other host fail, so a
// test cannot reach a real network by mistake. Assign it to an http.Client,
// or to http.DefaultTransport for code (like clusterctl) that uses the default.
func (s *Server) Transport(hosts ...string) http.RoundTripper {
	target, _ := url.Parse(s.URL)
	inner := &http.Transport{}
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if !slices.Contains(hosts, req.URL.Host) && req.URL.Host != target.Host {
			return nil, fmt.Errorf("fake gitlab transport: refusing request to %s (routed hosts: %v)", req.URL.Host, hosts)
		}
		r := req.Clone(req.Context())
		r.Host = req.URL.Host
		r.URL.Scheme = target.Scheme
		r.URL.Host = target.Host
		r.Header.Set("X-Forwarded-Proto", req.URL.Scheme)
		return inner.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

const apiPrefix = "/api/v4/projects/"

var (
	// GitLab's generic package name, version and file name rules
	// (Gitlab::Regex.generic_package_*_regex), close enough for tests.
	genericNameRE    = regexp.MustCompile(`^[A-Za-z0-9._+-]+$`)
	genericVersionRE = regexp.MustCompile(`^[A-Za-z0-9._+-]+$`)
	genericFileRE    = regexp.MustCompile(`^[A-Za-z0-9._+~-]+$`)
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	route, seg, ok := parseRoute(r)
	rec := Request{Method: r.Method, Route: route, Path: r.URL.EscapedPath()}
	if !ok {
		s.t.Errorf("fake gitlab: unexpected request %s %s", r.Method, r.URL.RequestURI())
		rec.Status = http.StatusNotFound
		s.record(rec)
		writeMessage(w, http.StatusNotFound, "404 Not Found")
		return
	}

	s.mu.Lock()
	s.calls[route]++
	n := s.calls[route]
	fault, faulted := s.faultFor(route, n)
	s.mu.Unlock()

	auth, tok, authErr := s.authenticate(r)
	rec.Auth = auth

	if faulted && !fault.AfterEffect {
		s.recordFault(w, r, fault, rec)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		rec.Status = 0
		s.record(rec)
		return
	}

	rw := &statusWriter{ResponseWriter: w}
	var out http.ResponseWriter = rw
	if faulted {
		out = &discardWriter{header: http.Header{}}
	}
	switch {
	case authErr != "":
		writeMessage(out, http.StatusUnauthorized, authErr)
	default:
		s.handle(out, r, route, seg, body, tok)
	}
	if faulted {
		s.recordFault(w, r, fault, rec)
		return
	}
	rec.Status = rw.status
	s.record(rec)
}

// recordFault answers with the fault. A dropped connection is recorded before
// it is closed: the client sees the drop at once and may ask for the log.
func (s *Server) recordFault(w http.ResponseWriter, r *http.Request, f Fault, rec Request) {
	if f.Drop {
		rec.Status = 0
		s.record(rec)
		s.writeFault(w, r, f)
		return
	}
	rec.Status = s.writeFault(w, r, f)
	s.record(rec)
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

func (s *Server) faultFor(route Route, n int) (Fault, bool) {
	for _, f := range s.faults {
		if f.Route != route {
			continue
		}
		times := max(f.Times, 1)
		if f.Nth == 0 || n >= f.Nth && n < f.Nth+times {
			return f, true
		}
	}
	return Fault{}, false
}

func (s *Server) writeFault(w http.ResponseWriter, r *http.Request, f Fault) int {
	if f.Endless {
		endless.Stream(w, r, f.Trickle)
		return http.StatusOK
	}
	if f.Drop {
		hj, ok := w.(http.Hijacker)
		if !ok {
			s.t.Errorf("fake gitlab: cannot drop the connection of %s %s", r.Method, r.URL.Path)
			return 0
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return 0
	}
	for k, vs := range f.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if f.Body != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.Status)
		_, _ = io.WriteString(w, f.Body)
		return f.Status
	}
	writeMessage(w, f.Status, fmt.Sprintf("%d %s", f.Status, http.StatusText(f.Status)))
	return f.Status
}

// authenticate returns the header the token came in, the token, and a 401
// message when a token was sent but is not valid there.
func (s *Server) authenticate(r *http.Request) (string, *token, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	check := func(header, value string, kind TokenKind) (string, *token, string) {
		t, ok := s.tokens[value]
		if !ok || t.kind != kind {
			return header, nil, "401 Unauthorized"
		}
		return header, &t, ""
	}
	if v := r.Header.Get("PRIVATE-TOKEN"); v != "" {
		return check(AuthPrivate, v, AccessToken)
	}
	if v := r.Header.Get("JOB-TOKEN"); v != "" {
		return check(AuthJob, v, JobToken)
	}
	if v := r.Header.Get("Authorization"); v != "" {
		bearer, ok := strings.CutPrefix(v, "Bearer ")
		if !ok {
			return AuthNone, nil, "401 Unauthorized"
		}
		return check(AuthBearer, bearer, AccessToken)
	}
	return AuthNone, nil, ""
}

// parseRoute splits the escaped path into unescaped segments after
// /api/v4/projects/ and names the route.
func parseRoute(r *http.Request) (Route, []string, bool) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), apiPrefix)
	if !ok {
		return "", nil, false
	}
	raw := strings.Split(rest, "/")
	seg := make([]string, len(raw))
	for i, e := range raw {
		u, err := url.PathUnescape(e)
		if err != nil || u == "" {
			return "", nil, false
		}
		seg[i] = u
	}
	switch {
	case len(seg) == 6 && seg[1] == "packages" && seg[2] == "generic" && r.Method == http.MethodPut:
		return RouteUpload, seg, true
	case len(seg) == 6 && seg[1] == "packages" && seg[2] == "generic" && r.Method == http.MethodGet:
		return RouteDownload, seg, true
	case len(seg) == 2 && seg[1] == "packages" && r.Method == http.MethodGet:
		return RouteListPackages, seg, true
	case len(seg) == 4 && seg[1] == "packages" && seg[3] == "package_files" && r.Method == http.MethodGet:
		return RouteListFiles, seg, true
	case len(seg) == 5 && seg[1] == "packages" && seg[3] == "package_files" && r.Method == http.MethodDelete:
		return RouteDeleteFile, seg, true
	case len(seg) == 2 && seg[1] == "releases" && r.Method == http.MethodPost:
		return RouteCreateRelease, seg, true
	case len(seg) == 3 && seg[1] == "releases" && r.Method == http.MethodGet:
		return RouteGetRelease, seg, true
	case len(seg) == 3 && seg[1] == "releases" && r.Method == http.MethodPut:
		return RouteUpdateRelease, seg, true
	case len(seg) == 5 && seg[1] == "releases" && seg[3] == "assets" && seg[4] == "links" && r.Method == http.MethodGet:
		return RouteListReleaseLinks, seg, true
	case len(seg) == 5 && seg[1] == "releases" && seg[3] == "assets" && seg[4] == "links" && r.Method == http.MethodPost:
		return RouteCreateReleaseLink, seg, true
	}
	return "", nil, false
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request, route Route, seg []string, body []byte, tok *token) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok == nil && r.Method != http.MethodGet {
		writeMessage(w, http.StatusUnauthorized, "401 Unauthorized")
		return
	}
	p := s.findProject(seg[0])
	// GitLab answers 404 for projects the caller may not see, not 403.
	if p == nil || tok == nil && !p.public {
		writeMessage(w, http.StatusNotFound, "404 Project Not Found")
		return
	}
	if r.Method != http.MethodGet && tok.readOnly {
		writeMessage(w, http.StatusForbidden, "403 Forbidden")
		return
	}
	switch route {
	case RouteUpload:
		s.upload(w, r, p, seg[3], seg[4], seg[5], body)
	case RouteDownload:
		s.download(w, p, seg[3], seg[4], seg[5])
	case RouteListPackages:
		s.listPackages(w, r, p)
	case RouteListFiles:
		s.listFiles(w, r, p, seg[2])
	case RouteDeleteFile:
		s.deleteFile(w, p, seg[2], seg[4])
	case RouteCreateRelease, RouteGetRelease, RouteUpdateRelease, RouteListReleaseLinks, RouteCreateReleaseLink:
		s.releases(w, r, route, p, seg, body)
	}
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request, p *project, name, version, file string, body []byte) {
	switch {
	case !genericNameRE.MatchString(name):
		writeError(w, http.StatusBadRequest, "package_name is invalid")
		return
	case !genericVersionRE.MatchString(version) || strings.Contains(version, ".."):
		writeError(w, http.StatusBadRequest, "package_version is invalid")
		return
	case !genericFileRE.MatchString(file) || strings.Contains(file, ".."):
		writeError(w, http.StatusBadRequest, "file_name is invalid")
		return
	}
	if st := r.URL.Query().Get("status"); st != "" && st != "default" && st != "hidden" {
		writeError(w, http.StatusBadRequest, "status does not have a valid value")
		return
	}
	f := s.store(p, name, version, file, body)
	if r.URL.Query().Get("select") == "package_file" {
		writeJSON(w, http.StatusCreated, s.genericFileJSON(r, p, name, version, f))
		return
	}
	writeMessage(w, http.StatusCreated, "201 Created")
}

func (s *Server) store(p *project, name, version, file string, data []byte) *File {
	var target *pkg
	for _, pk := range s.packages {
		if pk.projectID == p.id && pk.name == name && pk.version == version {
			target = pk
			break
		}
	}
	if target == nil {
		target = &pkg{id: s.id(), projectID: p.id, name: name, version: version, createdAt: s.tick()}
		s.packages = append(s.packages, target)
	}
	f := &File{ID: s.id(), PackageID: target.id, Name: file, Data: slices.Clone(data), CreatedAt: s.tick()}
	s.files = append(s.files, f)
	return f
}

func (s *Server) download(w http.ResponseWriter, p *project, name, version, file string) {
	var newest *File
	found := false
	for _, pk := range s.packages {
		if pk.projectID != p.id || pk.name != name || pk.version != version {
			continue
		}
		found = true
		for _, f := range s.files {
			// Duplicates are kept; GitLab serves the most recent one.
			if f.PackageID == pk.id && f.Name == file && (newest == nil || f.ID > newest.ID) {
				newest = f
			}
		}
	}
	switch {
	case !found:
		writeMessage(w, http.StatusNotFound, "404 Package Not Found")
	case newest == nil:
		writeMessage(w, http.StatusNotFound, "404 Package file Not Found")
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", file))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(newest.Data)
	}
}

func (s *Server) listPackages(w http.ResponseWriter, r *http.Request, p *project) {
	q := r.URL.Query()
	var list []*pkg
	for _, pk := range s.packages {
		if pk.projectID != p.id {
			continue
		}
		if t := q.Get("package_type"); t != "" && t != "generic" {
			continue
		}
		// package_name is a fuzzy (substring) match in GitLab; callers must
		// compare names exactly themselves.
		if n := q.Get("package_name"); n != "" && !strings.Contains(strings.ToLower(pk.name), strings.ToLower(n)) {
			continue
		}
		if v := q.Get("package_version"); v != "" && pk.version != v {
			continue
		}
		if st := q.Get("status"); st != "" && st != "default" {
			continue
		}
		list = append(list, pk)
	}
	var cmpFn func(a, b *pkg) int
	switch q.Get("order_by") {
	case "", "created_at":
		cmpFn = func(a, b *pkg) int { return a.createdAt.Compare(b.createdAt) }
	case "name":
		cmpFn = func(a, b *pkg) int { return strings.Compare(a.name, b.name) }
	case "version":
		cmpFn = func(a, b *pkg) int { return strings.Compare(a.version, b.version) }
	case "type":
		cmpFn = func(a, b *pkg) int { return 0 }
	default:
		writeError(w, http.StatusBadRequest, "order_by does not have a valid value")
		return
	}
	slices.SortStableFunc(list, cmpFn)
	switch q.Get("sort") {
	case "", "asc":
	case "desc":
		slices.Reverse(list)
	default:
		writeError(w, http.StatusBadRequest, "sort does not have a valid value")
		return
	}
	items := make([]any, 0, len(list))
	for _, pk := range list {
		items = append(items, s.packageJSON(p, pk))
	}
	s.writePage(w, r, items)
}

func (s *Server) listFiles(w http.ResponseWriter, r *http.Request, p *project, pkgID string) {
	pk := s.findPackage(p, pkgID)
	if pk == nil {
		writeMessage(w, http.StatusNotFound, "404 Package Not Found")
		return
	}
	var items []any
	for _, f := range s.files {
		if f.PackageID == pk.id {
			items = append(items, fileJSON(f))
		}
	}
	s.writePage(w, r, items)
}

func (s *Server) deleteFile(w http.ResponseWriter, p *project, pkgID, fileID string) {
	pk := s.findPackage(p, pkgID)
	if pk == nil {
		writeMessage(w, http.StatusNotFound, "404 Package Not Found")
		return
	}
	id, err := strconv.ParseInt(fileID, 10, 64)
	i := slices.IndexFunc(s.files, func(f *File) bool { return f.ID == id && f.PackageID == pk.id })
	if err != nil || i < 0 {
		writeMessage(w, http.StatusNotFound, "404 Package file Not Found")
		return
	}
	s.files = slices.Delete(s.files, i, i+1)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) findProject(ref string) *project {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		for _, p := range s.projects {
			if p.id == id {
				return p
			}
		}
		return nil
	}
	for _, p := range s.projects {
		if strings.EqualFold(p.path, ref) {
			return p
		}
	}
	return nil
}

func (s *Server) findPackage(p *project, ref string) *pkg {
	id, err := strconv.ParseInt(ref, 10, 64)
	if err != nil {
		return nil
	}
	for _, pk := range s.packages {
		if pk.id == id && pk.projectID == p.id {
			return pk
		}
	}
	return nil
}

func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}

func (s *Server) tick() time.Time {
	s.clock = s.clock.Add(time.Second)
	return s.clock
}

// writePage answers a list request with GitLab's offset pagination: page and
// per_page (default 20, at most 100), the X-* headers and a Link header.
func (s *Server) writePage(w http.ResponseWriter, r *http.Request, items []any) {
	q := r.URL.Query()
	page, perPage := 1, 20
	if v := q.Get("page"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			page = n
		}
	}
	if v := q.Get("per_page"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			perPage = min(n, 100)
		}
	}
	total := len(items)
	pages := max((total+perPage-1)/perPage, 1)
	lo := min((page-1)*perPage, total)
	hi := min(lo+perPage, total)

	h := w.Header()
	h.Set("X-Page", strconv.Itoa(page))
	h.Set("X-Per-Page", strconv.Itoa(perPage))
	h.Set("X-Total", strconv.Itoa(total))
	h.Set("X-Total-Pages", strconv.Itoa(pages))
	h.Set("X-Next-Page", "")
	h.Set("X-Prev-Page", "")
	link := func(n int, rel string) string {
		u := *r.URL
		u.Scheme = scheme(r)
		u.Host = r.Host
		v := u.Query()
		v.Set("page", strconv.Itoa(n))
		v.Set("per_page", strconv.Itoa(perPage))
		u.RawQuery = v.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if page > 1 {
		h.Set("X-Prev-Page", strconv.Itoa(page-1))
		links = append(links, link(page-1, "prev"))
	}
	if page < pages {
		h.Set("X-Next-Page", strconv.Itoa(page+1))
		links = append(links, link(page+1, "next"))
	}
	links = append(links, link(1, "first"), link(pages, "last"))
	h.Set("Link", strings.Join(links, ", "))
	writeJSON(w, http.StatusOK, items[lo:hi])
}

func scheme(r *http.Request) string {
	if v := r.Header.Get("X-Forwarded-Proto"); v != "" {
		return v
	}
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

func (s *Server) packageJSON(p *project, pk *pkg) map[string]any {
	return map[string]any{
		"id":           pk.id,
		"name":         pk.name,
		"version":      pk.version,
		"package_type": "generic",
		"status":       "default",
		"_links": map[string]any{
			"web_path":        fmt.Sprintf("/%s/-/packages/%d", p.path, pk.id),
			"delete_api_path": fmt.Sprintf("/api/v4/projects/%d/packages/%d", p.id, pk.id),
		},
		"created_at":         pk.createdAt,
		"last_downloaded_at": nil,
		"pipelines":          []any{},
		"tags":               []any{},
	}
}

func fileJSON(f *File) map[string]any {
	md5sum := md5.Sum(f.Data)
	return map[string]any{
		"id":          f.ID,
		"package_id":  f.PackageID,
		"created_at":  f.CreatedAt,
		"file_name":   f.Name,
		"size":        len(f.Data),
		"file_md5":    hex.EncodeToString(md5sum[:]),
		"file_sha1":   nil,
		"file_sha256": f.SHA256(),
		"pipelines":   []any{},
	}
}

// genericFileJSON is the answer of an upload with select=package_file.
func (s *Server) genericFileJSON(r *http.Request, p *project, name, version string, f *File) map[string]any {
	return map[string]any{
		"id":          f.ID,
		"package_id":  f.PackageID,
		"created_at":  f.CreatedAt,
		"updated_at":  f.CreatedAt,
		"size":        len(f.Data),
		"file_store":  1,
		"file_md5":    nil,
		"file_sha1":   nil,
		"file_name":   f.Name,
		"file":        map[string]any{"url": fmt.Sprintf("/%d/packages/generic/%s/%s/%s", p.id, name, version, f.Name)},
		"file_sha256": f.SHA256(),
		"status":      "default",
	}
}

func writeMessage(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// discardWriter swallows the real answer of a request whose fault fires after its effect.
type discardWriter struct{ header http.Header }

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
