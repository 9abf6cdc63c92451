package github

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capirepo/capirepo/internal/fake/endless"
)

// Route names, for Inject and Calls.
const (
	RouteGetReleaseByTag = "GET release by tag"
	RouteListReleases    = "GET releases"
	RouteCreateRelease   = "POST release"
	RouteGetRelease      = "GET release"
	RouteEditRelease     = "PATCH release"
	RouteDeleteRelease   = "DELETE release"
	RouteListAssets      = "GET assets"
	RouteUploadAsset     = "POST asset upload"
	RouteGetAsset        = "GET asset"
	RouteEditAsset       = "PATCH asset"
	RouteDeleteAsset     = "DELETE asset"
	RouteDownload        = "GET github.com download"
	RouteGenerateNotes   = "POST generate-notes"
	RouteGetTagRef       = "GET tag ref"
)

// Release is the server's state of one release.
type Release struct {
	ID              int64
	Tag             string
	TargetCommitish string
	Name            string
	Body            string
	Draft           bool
	Prerelease      bool
	Immutable       bool
	Assets          []Asset
}

// Asset is the server's state of one release asset.
type Asset struct {
	ID          int64
	Name        string
	Label       string
	ContentType string
	Data        []byte
}

// Fault is what an injected failure does instead of answering normally.
type Fault struct {
	// Status and Header and Body make an error reply (Body defaults to a
	// GitHub-style {"message": ...}).
	Status int
	Header http.Header
	Body   string
	// Drop closes the connection without a reply before the request takes
	// effect (the body may be half read). DropAfter lets the request take
	// effect, then closes the connection without a reply: the client sees
	// a failure although the server changed.
	Drop      bool
	DropAfter bool
	// Endless answers 200 with a body that never ends (a hostile or broken
	// asset download); with Trickle, one byte every Trickle.
	Endless bool
	Trickle time.Duration
}

// Fault helpers for the usual injections.
var (
	ServerError = Fault{Status: http.StatusBadGateway, Body: `{"message":"Server Error"}`}
	Dropped     = Fault{Drop: true}
	DropAfter   = Fault{DropAfter: true}
)

// RetryAfter is a secondary rate limit reply that asks to wait seconds.
func RetryAfter(seconds int) Fault {
	return Fault{Status: http.StatusForbidden, Header: http.Header{"Retry-After": {strconv.Itoa(seconds)}},
		Body: `{"message":"You have exceeded a secondary rate limit.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`}
}

// PrimaryRateLimit is a primary rate limit reply resetting at reset.
func PrimaryRateLimit(reset time.Time) Fault {
	return Fault{Status: http.StatusForbidden, Header: http.Header{
		"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"5000"},
		"X-Ratelimit-Reset": {strconv.FormatInt(reset.Unix(), 10)}},
		Body: `{"message":"API rate limit exceeded.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`}
}

type repo struct {
	immutable bool
	releases  []*Release // in creation order
	tags      map[string]string
	// burned holds the tags of deleted immutable releases: GitHub never
	// lets a release use them again.
	burned map[string]bool
}

type fault struct {
	route string
	nth   int
	f     Fault
}

// Server is the fake. Create it with New.
type Server struct {
	*httptest.Server
	t     testing.TB
	token string
	now   func() time.Time

	mu        sync.Mutex
	repos     map[string]*repo
	nextID    int64
	faults    []fault
	calls     map[string]int
	log       []string
	noDigest  bool
	maxPerReq int
}

// Option configures a Server.
type Option func(*Server)

// WithToken makes the server require "Authorization: Bearer token" on API
// and upload calls (downloads from github.com stay anonymous).
func WithToken(token string) Option { return func(s *Server) { s.token = token } }

// WithClock sets the clock used for rate-limit reset headers.
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// WithoutDigest leaves out the assets' digest field, as older GitHub
// Enterprise servers do, so clients must download to compare.
func WithoutDigest() Option { return func(s *Server) { s.noDigest = true } }

// New starts a fake; it is closed when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	s := &Server{t: t, now: time.Now, repos: map[string]*repo{}, calls: map[string]int{}, nextID: 100, maxPerReq: 100}
	for _, o := range opts {
		o(s)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// APIURL is the GitHub Enterprise style API base URL of the fake.
func (s *Server) APIURL() string { return s.URL + "/api/v3/" }

// UploadURL is the GitHub Enterprise style upload URL of the fake.
func (s *Server) UploadURL() string { return s.URL + "/api/uploads/" }

// AddRepo creates an empty repository. immutable turns on immutable
// releases: a release becomes immutable when it is published.
func (s *Server) AddRepo(owner, name string, immutable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[owner+"/"+name] = &repo{immutable: immutable, tags: map[string]string{}, burned: map[string]bool{}}
}

// AddTag creates a tag without a release, as a git push of a tag does.
func (s *Server) AddTag(owner, name, tag, commitish string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[owner+"/"+name]
	if rp == nil {
		s.t.Fatalf("fake github: AddTag to unknown repo %s/%s", owner, name)
	}
	rp.tags[tag] = commitish
}

// AddRelease stores a release as it is (IDs are assigned) and returns its ID.
func (s *Server) AddRelease(owner, name string, r Release) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[owner+"/"+name]
	if rp == nil {
		s.t.Fatalf("fake github: AddRelease to unknown repo %s/%s", owner, name)
	}
	s.nextID++
	r.ID = s.nextID
	for i := range r.Assets {
		s.nextID++
		r.Assets[i].ID = s.nextID
	}
	if !r.Draft {
		rp.tags[r.Tag] = r.TargetCommitish
	}
	rp.releases = append(rp.releases, &r)
	return r.ID
}

// Releases returns a copy of the repository's releases, oldest first.
func (s *Server) Releases(owner, name string) []Release {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Release
	if rp := s.repos[owner+"/"+name]; rp != nil {
		for _, r := range rp.releases {
			c := *r
			c.Assets = slices.Clone(r.Assets)
			out = append(out, c)
		}
	}
	return out
}

// Tags returns the repository's tags and the commitish each was made from.
func (s *Server) Tags(owner, name string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	if rp := s.repos[owner+"/"+name]; rp != nil {
		for k, v := range rp.tags {
			out[k] = v
		}
	}
	return out
}

// Inject makes the nth call (from 1, counting from now on) of route fail
// with f. Several faults may be queued on one route.
func (s *Server) Inject(route string, nth int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, fault{route: route, nth: s.calls[route] + nth, f: f})
}

// Calls returns how many requests a route received.
func (s *Server) Calls(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[route]
}

// Log returns every request received as "ROUTE path", in order.
func (s *Server) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// ResetLog forgets the calls and the log (not the state).
func (s *Server) ResetLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = map[string]int{}
	s.log = nil
	s.faults = nil
}

// Transport returns a RoundTripper that sends requests for api.github.com,
// uploads.github.com and github.com to the fake (keeping the Host header,
// which the fake routes on) and everything else to next.
func (s *Server) Transport(next http.RoundTripper) http.RoundTripper {
	target, _ := url.Parse(s.URL)
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		switch req.URL.Host {
		case "api.github.com", "uploads.github.com", "github.com":
			r := req.Clone(req.Context())
			r.Host = req.URL.Host
			r.URL.Scheme, r.URL.Host = target.Scheme, target.Host
			return next.RoundTrip(r)
		}
		return next.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// request is one parsed call.
type request struct {
	w http.ResponseWriter
	r *http.Request
	// body and bodyErr hold an upload's bytes, read before the lock.
	body    []byte
	bodyErr error
	route   string
	owner   string
	name    string
	id      int64  // release or asset id
	rest    string // tag, or download tag/name
	origin  string // scheme://host the client used for the API, "" for GHE style
	ghe     bool
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	q, ok := s.parse(w, r)
	if !ok {
		s.t.Errorf("fake github: unexpected request %s %s (host %s)", r.Method, r.URL.Path, r.Host)
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	s.mu.Lock()
	s.calls[q.route]++
	n := s.calls[q.route]
	s.log = append(s.log, q.route+" "+r.URL.Path)
	var inj *Fault
	for i, f := range s.faults {
		if f.route == q.route && f.nth == n {
			inj = &s.faults[i].f
			break
		}
	}
	s.mu.Unlock()

	if q.route != RouteDownload && s.token != "" {
		auth := r.Header.Get("Authorization")
		if auth != "Bearer "+s.token && auth != "token "+s.token {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials",
				"documentation_url": "https://docs.github.com/rest"})
			return
		}
	}
	if inj != nil {
		switch {
		case inj.Drop:
			hijackClose(s.t, w)
			return
		case inj.DropAfter:
			s.handle(q, httptest.NewRecorder())
			hijackClose(s.t, w)
			return
		case inj.Endless:
			endless.Stream(w, r, inj.Trickle)
			return
		default:
			for k, v := range inj.Header {
				w.Header()[k] = v
			}
			body := inj.Body
			if body == "" {
				body = fmt.Sprintf(`{"message":%q}`, http.StatusText(inj.Status))
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(inj.Status)
			_, _ = io.WriteString(w, body)
			return
		}
	}
	s.handle(q, w)
}

func hijackClose(t testing.TB, w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		t.Errorf("fake github: cannot hijack the connection to drop it")
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		t.Errorf("fake github: hijack: %v", err)
		return
	}
	_ = conn.Close()
}

// parse maps a request to a route. Paths may carry the GitHub Enterprise
// prefixes /api/v3 and /api/uploads, or come for the public hosts.
func (s *Server) parse(w http.ResponseWriter, r *http.Request) (*request, bool) {
	q := &request{w: w, r: r}
	p := r.URL.Path
	uploads := false
	switch {
	case strings.HasPrefix(p, "/api/v3/"):
		p, q.ghe = strings.TrimPrefix(p, "/api/v3"), true
	case strings.HasPrefix(p, "/api/uploads/"):
		p, q.ghe, uploads = strings.TrimPrefix(p, "/api/uploads"), true, true
	case r.Host == "uploads.github.com":
		uploads = true
	case r.Host == "github.com":
		// /OWNER/NAME/releases/download/TAG/FILE
		parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
		if len(parts) == 6 && parts[2] == "releases" && parts[3] == "download" && r.Method == http.MethodGet {
			q.route, q.owner, q.name, q.rest = RouteDownload, parts[0], parts[1], parts[4]+"/"+parts[5]
			return q, true
		}
		return nil, false
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if !uploads && len(parts) == 7 && parts[0] == "repos" && parts[3] == "git" && parts[4] == "ref" && parts[5] == "tags" && r.Method == http.MethodGet {
		q.route, q.owner, q.name, q.rest = RouteGetTagRef, parts[1], parts[2], parts[6]
		if !q.ghe {
			q.origin = "https://api.github.com"
		}
		return q, true
	}
	if len(parts) < 4 || parts[0] != "repos" || parts[3] != "releases" {
		return nil, false
	}
	q.owner, q.name = parts[1], parts[2]
	rest := parts[4:]
	m := r.Method
	id := func(s string) bool {
		n, err := strconv.ParseInt(s, 10, 64)
		q.id = n
		return err == nil
	}
	switch {
	case uploads:
		if len(rest) == 2 && rest[1] == "assets" && m == http.MethodPost && id(rest[0]) {
			q.route = RouteUploadAsset
			return q, true
		}
		return nil, false
	case len(rest) == 0 && m == http.MethodGet:
		q.route = RouteListReleases
	case len(rest) == 0 && m == http.MethodPost:
		q.route = RouteCreateRelease
	case len(rest) == 1 && rest[0] == "generate-notes" && m == http.MethodPost:
		q.route = RouteGenerateNotes
	case len(rest) == 2 && rest[0] == "tags" && m == http.MethodGet:
		q.route, q.rest = RouteGetReleaseByTag, rest[1]
	case len(rest) == 2 && rest[0] == "assets" && id(rest[1]):
		switch m {
		case http.MethodGet:
			q.route = RouteGetAsset
		case http.MethodPatch:
			q.route = RouteEditAsset
		case http.MethodDelete:
			q.route = RouteDeleteAsset
		default:
			return nil, false
		}
	case len(rest) == 2 && rest[1] == "assets" && m == http.MethodGet && id(rest[0]):
		q.route = RouteListAssets
	case len(rest) == 1 && id(rest[0]):
		switch m {
		case http.MethodGet:
			q.route = RouteGetRelease
		case http.MethodPatch:
			q.route = RouteEditRelease
		case http.MethodDelete:
			q.route = RouteDeleteRelease
		default:
			return nil, false
		}
	default:
		return nil, false
	}
	if !q.ghe {
		q.origin = "https://api.github.com"
	}
	return q, true
}

func (s *Server) handle(q *request, w http.ResponseWriter) {
	q.w = w
	if q.route == RouteUploadAsset && q.r.ContentLength >= 0 {
		// GitHub takes uploads in parallel: read the body before taking
		// the lock, so one slow upload does not hold up every other call.
		q.body, q.bodyErr = io.ReadAll(q.r.Body)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateHeaders(w)
	rp := s.repos[q.owner+"/"+q.name]
	if rp == nil {
		notFound(w)
		return
	}
	switch q.route {
	case RouteDownload:
		tag, file, _ := strings.Cut(q.rest, "/")
		for _, rel := range rp.releases {
			if rel.Tag == tag && !rel.Draft {
				if a := findAsset(rel, file); a != nil {
					w.Header().Set("Content-Type", "application/octet-stream")
					_, _ = w.Write(a.Data)
					return
				}
			}
		}
		http.Error(w, "Not Found", http.StatusNotFound)
	case RouteGetReleaseByTag:
		for _, rel := range rp.releases {
			if rel.Tag == q.rest && !rel.Draft {
				writeJSON(w, http.StatusOK, s.releaseJSON(q, rel))
				return
			}
		}
		notFound(w)
	case RouteListReleases:
		// newest first, as GitHub lists them
		list := slices.Clone(rp.releases)
		slices.Reverse(list)
		page, ok := s.paginate(q, len(list))
		if !ok {
			return
		}
		out := []any{}
		for _, rel := range list[page[0]:page[1]] {
			out = append(out, s.releaseJSON(q, rel))
		}
		writeJSON(w, http.StatusOK, out)
	case RouteCreateRelease:
		var in struct {
			TagName         string `json:"tag_name"`
			TargetCommitish string `json:"target_commitish"`
			Name            string `json:"name"`
			Body            string `json:"body"`
			Draft           bool   `json:"draft"`
			Prerelease      bool   `json:"prerelease"`
		}
		if err := json.NewDecoder(q.r.Body).Decode(&in); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
			return
		}
		if in.TagName == "" {
			validation(w, "Release", "missing_field", "tag_name")
			return
		}
		for _, rel := range rp.releases {
			if rel.Tag == in.TagName && !rel.Draft {
				validation(w, "Release", "already_exists", "tag_name")
				return
			}
		}
		if rp.burned[in.TagName] {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
				"errors": []map[string]string{{"resource": "Release", "code": "custom", "field": "tag_name",
					"message": "tag_name was used by an immutable release"}}})
			return
		}
		s.nextID++
		rel := &Release{ID: s.nextID, Tag: in.TagName, TargetCommitish: in.TargetCommitish, Name: in.Name,
			Body: in.Body, Draft: in.Draft, Prerelease: in.Prerelease}
		if rel.TargetCommitish == "" {
			rel.TargetCommitish = "main"
		}
		if !rel.Draft {
			s.publish(rp, rel)
		}
		rp.releases = append(rp.releases, rel)
		writeJSON(w, http.StatusCreated, s.releaseJSON(q, rel))
	case RouteGetTagRef:
		sha, ok := rp.tags[q.rest]
		if !ok {
			notFound(w)
			return
		}
		api, _, _ := s.base(q)
		writeJSON(w, http.StatusOK, map[string]any{"ref": "refs/tags/" + q.rest,
			"url":    fmt.Sprintf("%s/repos/%s/%s/git/refs/tags/%s", api, q.owner, q.name, q.rest),
			"object": map[string]string{"type": "commit", "sha": sha}})
	case RouteGenerateNotes:
		s.generateNotes(q, rp)
	case RouteGetRelease, RouteEditRelease, RouteDeleteRelease, RouteListAssets, RouteUploadAsset:
		rel := findRelease(rp, q.id)
		if rel == nil {
			notFound(w)
			return
		}
		s.onRelease(q, rp, rel)
	case RouteGetAsset, RouteEditAsset, RouteDeleteAsset:
		for _, rel := range rp.releases {
			for i := range rel.Assets {
				if rel.Assets[i].ID == q.id {
					s.onAsset(q, rel, i)
					return
				}
			}
		}
		notFound(w)
	}
}

func (s *Server) publish(rp *repo, rel *Release) {
	rel.Draft = false
	if _, ok := rp.tags[rel.Tag]; !ok {
		rp.tags[rel.Tag] = rel.TargetCommitish
	}
	if rp.immutable {
		rel.Immutable = true
	}
}

// generateNotes answers POST generate-notes as GitHub documents it: the tag
// may exist or be new, a new tag needs target_commitish (else 422), an
// existing tag ignores it; without previous_tag_name the range starts at
// the latest published release of another tag. Nothing is stored. The body
// is deterministic, naming the range, for tests to assert.
func (s *Server) generateNotes(q *request, rp *repo) {
	w := q.w
	var in struct {
		TagName         string  `json:"tag_name"`
		TargetCommitish *string `json:"target_commitish"`
		PreviousTagName *string `json:"previous_tag_name"`
	}
	if err := json.NewDecoder(q.r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	if in.TagName == "" {
		validation(w, "Release", "missing_field", "tag_name")
		return
	}
	target, exists := rp.tags[in.TagName]
	if !exists {
		if in.TargetCommitish == nil || *in.TargetCommitish == "" {
			validation(w, "Release", "invalid", "target_commitish")
			return
		}
		target = *in.TargetCommitish
	}
	prev := ""
	if in.PreviousTagName != nil && *in.PreviousTagName != "" {
		prev = *in.PreviousTagName
		if _, ok := rp.tags[prev]; !ok {
			validation(w, "Release", "invalid", "previous_tag_name")
			return
		}
	} else {
		for i := len(rp.releases) - 1; i >= 0; i-- {
			if r := rp.releases[i]; !r.Draft && r.Tag != in.TagName {
				prev = r.Tag
				break
			}
		}
	}
	_, _, web := s.base(q)
	body := fmt.Sprintf("## What's Changed\n* Changes up to %s (%s)\n\n**Full Changelog**: %s/%s/%s/commits/%s", in.TagName, target, web, q.owner, q.name, in.TagName)
	if prev != "" {
		body = fmt.Sprintf("## What's Changed\n* Changes from %s to %s (%s)\n\n**Full Changelog**: %s/%s/%s/compare/%s...%s", prev, in.TagName, target, web, q.owner, q.name, prev, in.TagName)
	}
	writeJSON(w, http.StatusOK, map[string]string{"name": in.TagName, "body": body})
}

func (s *Server) onRelease(q *request, rp *repo, rel *Release) {
	w := q.w
	switch q.route {
	case RouteGetRelease:
		writeJSON(w, http.StatusOK, s.releaseJSON(q, rel))
	case RouteDeleteRelease:
		if rel.Immutable {
			rp.burned[rel.Tag] = true
		}
		rp.releases = slices.DeleteFunc(rp.releases, func(r *Release) bool { return r == rel })
		w.WriteHeader(http.StatusNoContent)
	case RouteEditRelease:
		var in map[string]any
		if err := json.NewDecoder(q.r.Body).Decode(&in); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
			return
		}
		if tag, ok := in["tag_name"].(string); ok && tag != rel.Tag {
			if rel.Immutable {
				validation(w, "Release", "custom", "tag_name")
				return
			}
			rel.Tag = tag
		}
		if v, ok := in["name"].(string); ok {
			rel.Name = v
		}
		if v, ok := in["body"].(string); ok {
			rel.Body = v
		}
		if v, ok := in["prerelease"].(bool); ok {
			rel.Prerelease = v
		}
		if v, ok := in["draft"].(bool); ok {
			switch {
			case !v && rel.Draft:
				for _, o := range rp.releases {
					if o != rel && o.Tag == rel.Tag && !o.Draft {
						validation(w, "Release", "already_exists", "tag_name")
						return
					}
				}
				s.publish(rp, rel)
			case v && !rel.Draft && rel.Immutable:
				writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Cannot change an immutable release to a draft."})
				return
			case v:
				rel.Draft = true
			}
		}
		writeJSON(w, http.StatusOK, s.releaseJSON(q, rel))
	case RouteListAssets:
		page, ok := s.paginate(q, len(rel.Assets))
		if !ok {
			return
		}
		out := []any{}
		for i := page[0]; i < page[1]; i++ {
			out = append(out, s.assetJSON(q, &rel.Assets[i]))
		}
		writeJSON(w, http.StatusOK, out)
	case RouteUploadAsset:
		name := q.r.URL.Query().Get("name")
		if name == "" {
			validation(w, "ReleaseAsset", "missing_field", "name")
			return
		}
		if q.r.ContentLength < 0 {
			writeJSON(w, http.StatusLengthRequired, map[string]string{"message": "Content-Length required"})
			return
		}
		data, err := q.body, q.bodyErr
		if err != nil {
			return // connection gone; the real API stores nothing either
		}
		if int64(len(data)) != q.r.ContentLength {
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": "body shorter than Content-Length"})
			return
		}
		if rel.Immutable {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Cannot upload assets to an immutable release."})
			return
		}
		if findAsset(rel, name) != nil {
			validation(w, "ReleaseAsset", "already_exists", "name")
			return
		}
		s.nextID++
		rel.Assets = append(rel.Assets, Asset{ID: s.nextID, Name: name, Label: q.r.URL.Query().Get("label"),
			ContentType: q.r.Header.Get("Content-Type"), Data: data})
		writeJSON(w, http.StatusCreated, s.assetJSON(q, &rel.Assets[len(rel.Assets)-1]))
	}
}

func (s *Server) onAsset(q *request, rel *Release, i int) {
	w, a := q.w, &rel.Assets[i]
	switch q.route {
	case RouteGetAsset:
		if q.r.Header.Get("Accept") == "application/octet-stream" {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Length", strconv.Itoa(len(a.Data)))
			_, _ = w.Write(a.Data)
			return
		}
		writeJSON(w, http.StatusOK, s.assetJSON(q, a))
	case RouteDeleteAsset:
		if rel.Immutable {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Cannot delete assets of an immutable release."})
			return
		}
		rel.Assets = slices.Delete(rel.Assets, i, i+1)
		w.WriteHeader(http.StatusNoContent)
	case RouteEditAsset:
		var in struct {
			Name  *string `json:"name"`
			Label *string `json:"label"`
		}
		if err := json.NewDecoder(q.r.Body).Decode(&in); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
			return
		}
		if rel.Immutable {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Cannot update assets of an immutable release."})
			return
		}
		if in.Name != nil && *in.Name != a.Name {
			if findAsset(rel, *in.Name) != nil {
				validation(w, "ReleaseAsset", "already_exists", "name")
				return
			}
			a.Name = *in.Name
		}
		if in.Label != nil {
			a.Label = *in.Label
		}
		writeJSON(w, http.StatusOK, s.assetJSON(q, a))
	}
}

// paginate answers per_page/page like GitHub (30 by default, at most 100)
// and sets the Link header. It returns the [from, to) index range.
func (s *Server) paginate(q *request, n int) ([2]int, bool) {
	v := q.r.URL.Query()
	per, page := 30, 1
	if p := v.Get("per_page"); p != "" {
		per, _ = strconv.Atoi(p)
	}
	if p := v.Get("page"); p != "" {
		page, _ = strconv.Atoi(p)
	}
	if per <= 0 || page <= 0 {
		writeJSON(q.w, http.StatusUnprocessableEntity, map[string]string{"message": "invalid page or per_page"})
		return [2]int{}, false
	}
	per = min(per, s.maxPerReq)
	last := max(1, (n+per-1)/per)
	var links []string
	link := func(p int, rel string) {
		u := *q.r.URL
		u.Scheme, u.Host = "http", q.r.Host
		if q.origin != "" {
			o, _ := url.Parse(q.origin)
			u.Scheme, u.Host = o.Scheme, o.Host
		}
		vals := u.Query()
		vals.Set("page", strconv.Itoa(p))
		vals.Set("per_page", strconv.Itoa(per))
		u.RawQuery = vals.Encode()
		links = append(links, fmt.Sprintf("<%s>; rel=%q", u.String(), rel))
	}
	if page < last {
		link(page+1, "next")
		link(last, "last")
	}
	if page > 1 {
		link(1, "first")
		link(page-1, "prev")
	}
	if len(links) > 0 {
		q.w.Header().Set("Link", strings.Join(links, ", "))
	}
	from := min(n, (page-1)*per)
	return [2]int{from, min(n, from+per)}, true
}

func (s *Server) base(q *request) (api, uploads, web string) {
	if q.ghe {
		return "http://" + q.r.Host + "/api/v3", "http://" + q.r.Host + "/api/uploads", "http://" + q.r.Host
	}
	return "https://api.github.com", "https://uploads.github.com", "https://github.com"
}

func (s *Server) releaseJSON(q *request, r *Release) map[string]any {
	api, uploads, web := s.base(q)
	repoPath := "/repos/" + q.owner + "/" + q.name
	tagPath := r.Tag
	if r.Draft {
		tagPath = "untagged-" + strconv.FormatInt(r.ID, 16)
	}
	assets := []any{}
	for i := range r.Assets {
		assets = append(assets, s.assetJSON(q, &r.Assets[i]))
	}
	out := map[string]any{
		"id":               r.ID,
		"tag_name":         r.Tag,
		"target_commitish": r.TargetCommitish,
		"name":             r.Name,
		"body":             r.Body,
		"draft":            r.Draft,
		"prerelease":       r.Prerelease,
		"immutable":        r.Immutable,
		"url":              fmt.Sprintf("%s%s/releases/%d", api, repoPath, r.ID),
		"assets_url":       fmt.Sprintf("%s%s/releases/%d/assets", api, repoPath, r.ID),
		"upload_url":       fmt.Sprintf("%s%s/releases/%d/assets{?name,label}", uploads, repoPath, r.ID),
		"html_url":         fmt.Sprintf("%s/%s/%s/releases/tag/%s", web, q.owner, q.name, tagPath),
		"assets":           assets,
	}
	if !r.Draft {
		out["published_at"] = s.now().UTC().Format(time.RFC3339)
	}
	return out
}

func (s *Server) assetJSON(q *request, a *Asset) map[string]any {
	api, _, web := s.base(q)
	out := map[string]any{
		"id":                   a.ID,
		"name":                 a.Name,
		"label":                a.Label,
		"state":                "uploaded",
		"content_type":         a.ContentType,
		"size":                 len(a.Data),
		"url":                  fmt.Sprintf("%s/repos/%s/%s/releases/assets/%d", api, q.owner, q.name, a.ID),
		"browser_download_url": fmt.Sprintf("%s/%s/%s/releases/download/TAG/%s", web, q.owner, q.name, url.PathEscape(a.Name)),
	}
	if !s.noDigest {
		sum := sha256.Sum256(a.Data)
		out["digest"] = "sha256:" + hex.EncodeToString(sum[:])
	}
	return out
}

func (s *Server) rateHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("X-Ratelimit-Limit", "5000")
	h.Set("X-Ratelimit-Remaining", "4999")
	h.Set("X-Ratelimit-Used", "1")
	h.Set("X-Ratelimit-Reset", strconv.FormatInt(s.now().Add(time.Hour).Unix(), 10))
	h.Set("X-Ratelimit-Resource", "core")
}

func findRelease(rp *repo, id int64) *Release {
	for _, r := range rp.releases {
		if r.ID == id {
			return r
		}
	}
	return nil
}

func findAsset(rel *Release, name string) *Asset {
	for i := range rel.Assets {
		if rel.Assets[i].Name == name {
			return &rel.Assets[i]
		}
	}
	return nil
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found",
		"documentation_url": "https://docs.github.com/rest"})
}

func validation(w http.ResponseWriter, resource, code, field string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"message": "Validation Failed",
		"errors":  []map[string]string{{"resource": resource, "code": code, "field": field}},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
