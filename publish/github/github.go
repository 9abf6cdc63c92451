package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v82/github"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// DefaultAPI is the API base URL of gh.com.
const DefaultAPI = "https://api.github.com/"

// tempPrefix names the asset a replacement is uploaded under before it takes
// the old asset's name, so the release always holds a complete copy.
const tempPrefix = "capirepo-replacing-"

// Options configures a GitHub publisher.
type Options struct {
	// Owner and Repo name the repository (OWNER/NAME).
	Owner, Repo string
	// Tag is the release tag; empty means the release version.
	Tag string
	// Commitish is the commit, branch or tag the tag is created from when the release is
	// published, and the one generated notes are made for; empty means the
	// repository's default branch. GitHub ignores it when the tag exists:
	// Publish then warns.
	Commitish string
	// Draft leaves a new release as a draft after the upload.
	Draft bool
	// Replace lets assets that differ be replaced, also on a published
	// release, and lets the title, notes and prerelease flag of an existing
	// release be changed.
	Replace bool
	// Title is the release title; empty means the tag.
	Title string
	// Notes is the release notes text (Markdown).
	Notes string
	// GenerateNotes appends the notes GitHub generates for the changes since
	// the previous release (POST releases/generate-notes) to Notes.
	GenerateNotes bool
	// PreviousTag starts the range of generated notes; empty lets GitHub
	// pick it (the latest release).
	PreviousTag string
	// Prerelease marks the release a prerelease; nil means when the tag is
	// a semver prerelease (v1.2.0-rc.1).
	Prerelease *bool
	// Provenance adds provenance.intoto.json, an in-toto statement with an
	// SLSA provenance v1 predicate whose subjects are every asset. A
	// published release without it gets it only with Replace.
	Provenance bool
	// Concurrency is the number of parallel uploads; 0 means 4.
	Concurrency int
	// APIURL is the REST API base: empty for gh.com, or
	// https://HOST/api/v3/ for GitHub Enterprise Server.
	APIURL string
	// UploadURL is derived from APIURL when empty.
	UploadURL string
	// Token authenticates every API call. It is never printed.
	Token string
	// HTTPClient makes the requests; nil means a new http.Client.
	HTTPClient *http.Client
	// Retry is the retry policy; the zero value means DefaultRetry.
	Retry *publish.Retry
	// Progress receives one line per step; nil means io.Discard.
	Progress io.Writer
	// UploadProgress, when set, follows the bytes of every asset upload.
	UploadProgress publish.UploadProgress
}

// Target publishes a release as a GitHub release with one asset per file,
// and reads published releases back (a publish.Source).
type Target struct {
	o     Options
	c     *gh.Client
	retry publish.Retry
	hc    *http.Client
	web   string
	mu    sync.Mutex // guards progress writes

	// What reading found, kept for the target's life (one run): one
	// repository serves several providers (cluster-api). Publish forgets it.
	readMu   sync.Mutex
	versions []string
	releases map[string]*ghRelease

	// added are the sections AddNotes appends to the notes.
	added []string
}

var (
	_ publish.Target = (*Target)(nil)
	_ publish.Flat   = (*Target)(nil)
	_ publish.Noted  = (*Target)(nil)
)

// New checks the options and returns the target.
var (
	_ publish.Target   = (*Target)(nil)
	_ publish.Drafting = (*Target)(nil)
	_ publish.Planner  = (*Target)(nil)
	_ publish.Checker  = (*Target)(nil)
)

func New(o Options) (*Target, error) {
	if o.Owner == "" || o.Repo == "" || strings.ContainsAny(o.Owner+o.Repo, "/ ") {
		return nil, fmt.Errorf("github repository %q/%q: want %s OWNER/NAME", o.Owner, o.Repo, option.Repo)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.APIURL == "" {
		o.APIURL = DefaultAPI
	}
	if !strings.HasSuffix(o.APIURL, "/") {
		o.APIURL += "/"
	}
	api, err := url.Parse(o.APIURL)
	if err != nil || api.Host == "" || (api.Scheme != "https" && api.Scheme != "http") {
		return nil, fmt.Errorf("github API URL %q: want https://api.github.com/ or https://HOST/api/v3/", o.APIURL)
	}
	if api.User != nil { // never sent, never printed: the token comes from the environment
		api.User = nil
		o.APIURL = api.String()
	}
	if o.UploadURL == "" {
		o.UploadURL = UploadURLFor(o.APIURL)
	}
	// The token goes to the API and upload hosts only, never to a host a
	// redirect names (asset downloads redirect to a storage host).
	hc := publish.GuardCredentials(o.HTTPClient, o.APIURL, o.UploadURL)
	c := gh.NewClient(hc)
	if o.APIURL != DefaultAPI {
		if c, err = c.WithEnterpriseURLs(o.APIURL, o.UploadURL); err != nil {
			return nil, fmt.Errorf("github API URL %q: %w", o.APIURL, err)
		}
	}
	if o.Token != "" {
		c = c.WithAuthToken(o.Token)
	}
	// Rate limits are waited out by the retry policy, with its clock and
	// its sleep; go-github would otherwise refuse calls until the reset.
	c.DisableRateLimitCheck = true
	r := publish.DefaultRetry()
	if o.Retry != nil {
		r = o.Retry.WithDefaults()
	}
	g := &Target{o: o, c: c, retry: r, hc: hc, web: webURL(api)}
	notify := r.Notify
	g.retry.Notify = func(attempt int, err error, wait time.Duration) {
		g.progress("retrying in %s after attempt %d failed: %v", wait.Round(time.Millisecond), attempt, err)
		if notify != nil {
			notify(attempt, err, wait)
		}
	}
	return g, nil
}

// UploadURLFor derives the upload URL from an API base URL:
// api.github.com -> uploads.github.com, HOST/api/v3/ -> HOST/api/uploads/.
func UploadURLFor(apiURL string) string {
	u, err := url.Parse(apiURL)
	if err != nil {
		return apiURL
	}
	if u.Host == "api.github.com" {
		return "https://uploads.github.com/"
	}
	p := strings.TrimSuffix(u.Path, "/")
	p = strings.TrimSuffix(p, "/api/v3")
	u.Path = p + "/api/uploads/"
	return u.String()
}

func webURL(api *url.URL) string {
	if api.Host == "api.github.com" {
		return "https://github.com"
	}
	u := *api
	u.Path, u.RawQuery = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v3"), ""
	return strings.TrimSuffix(u.String(), "/")
}

func (g *Target) progress(format string, args ...any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	// Progress is best effort: a closed terminal must not fail a publish.
	_, _ = fmt.Fprintf(g.o.Progress, "github %s/%s: "+format+"\n", append([]any{g.o.Owner, g.o.Repo}, args...)...)
}

// ghRelease is the state Publish works on.
type ghRelease struct {
	id         int64
	tag        string
	name, body string
	draft      bool
	prerelease bool
	immutable  bool
	htmlURL    string
	assets     map[string]*gh.ReleaseAsset // nil: not known yet
}

// files are the tag of the release and the assets Publish uploads: the
// release's flat set, and the unsigned provenance with Provenance when the
// release holds none.
func (g *Target) files(rel *release.Release) (string, []release.File, error) {
	files, err := rel.Flat()
	if err != nil {
		return "", nil, fmt.Errorf("github release: %w", err)
	}
	tag := g.o.Tag
	if tag == "" {
		tag = rel.Version
	}
	if tag == "" {
		return "", nil, fmt.Errorf("github release: no tag: pass %s or build the release with a version", option.Tag)
	}
	if g.o.Provenance {
		if files, err = publish.AddProvenance(files, publish.ProvenanceSource{Repository: fmt.Sprintf("%s/%s/%s", g.web, g.o.Owner, g.o.Repo), Version: tag}); err != nil {
			return "", nil, err
		}
	}
	return tag, files, nil
}

// Planned names the assets Publish uploads for rel (a release published
// before capirepo wrote provenance, and immutable, then gets none).
func (g *Target) Planned(rel *release.Release) ([]string, error) {
	_, files, err := g.files(rel)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Name
	}
	return out, nil
}

// Draft says whether Publish leaves the release a draft (--draft).
func (g *Target) Draft() bool { return g.o.Draft }

// Publish creates or resumes the release for the tag, uploads what is
// missing, replaces what differs (with Replace), checks every asset read
// back, and publishes the release last unless Draft is set.
func (g *Target) Publish(ctx context.Context, rel *release.Release) (*publish.Summary, error) {
	defer g.forget() // what was read before may have changed
	tag, files, err := g.files(rel)
	if err != nil {
		return nil, err
	}
	sum := &publish.Summary{Kind: "github", Logged: true, Version: tag, Uploaded: []string{}, Skipped: []string{}, Replaced: []string{}}
	for _, p := range rel.Providers {
		sum.Providers = append(sum.Providers, publish.ProviderURL{Name: p.ID.Name, Type: string(p.ID.Type),
			URL: g.providerURL(publish.Ref{ID: p.ID, Version: tag, Components: p.ComponentsFile})})
	}

	r, err := g.find(ctx, tag)
	if err != nil {
		return nil, err
	}
	if err := g.checkCommitish(ctx, tag, r, sum); err != nil {
		return nil, err
	}
	var d publish.Diff
	var temps map[string]*gh.ReleaseAsset
	if r != nil {
		if files, d, temps, err = g.compare(ctx, r, files, sum); err != nil {
			return nil, err
		}
		if err := g.updateMeta(ctx, r, sum); err != nil {
			return nil, err
		}
	} else {
		d.Missing = files
		if r, err = g.create(ctx, tag, rel); err != nil {
			return nil, err
		}
		temps = map[string]*gh.ReleaseAsset{}
	}
	sum.URL = r.htmlURL
	for _, f := range d.Same {
		sum.Skipped = append(sum.Skipped, f.Name)
	}
	if len(d.Same) > 0 {
		g.progress("%d assets already there with the same sha256, skipped", len(d.Same))
	}

	if err := g.write(ctx, r, d, temps, sum); err != nil {
		return nil, err
	}
	wrote := d.Changes() || len(temps) > 0
	if wrote {
		if err := g.verify(ctx, r, files); err != nil {
			return nil, err
		}
	}
	if r.draft && !g.o.Draft {
		if err := g.publish(ctx, r); err != nil {
			return nil, err
		}
	}
	sum.URL = r.htmlURL
	sum.Draft = r.draft
	slices.Sort(sum.Uploaded)
	slices.Sort(sum.Skipped)
	slices.Sort(sum.Replaced)
	// The counts are the summary's (Summary.WriteText): not said here too.
	return sum, nil
}

// compare lists the assets of r, the release of the tag, compares them with
// files and refuses what Publish must not change (check). It returns the
// files to publish (without provenance for an immutable release published
// without it), the differences and the temporary uploads an interrupted
// run left.
func (g *Target) compare(ctx context.Context, r *ghRelease, files []release.File, sum *publish.Summary) ([]release.File, publish.Diff, map[string]*gh.ReleaseAsset, error) {
	if r.assets == nil {
		if err := g.listAssets(ctx, r); err != nil {
			return nil, publish.Diff{}, nil, err
		}
	}
	temps := takeTemps(r)
	if _, has := r.assets[publish.ProvenanceFile]; g.o.Provenance && !has && !r.draft && r.immutable {
		// Published before capirepo wrote provenance, and immutable:
		// GitHub refuses a new asset. A mutable release gets it, as
		// any file it lacks, without --replace: nothing anybody read
		// changes.
		files = publish.WithoutProvenance(files)
		g.warn(sum, "release %s was published without %s and is immutable; it stays without", r.tag, publish.ProvenanceFile)
	}
	d, err := publish.Compare(ctx, files, remotes(r), g.fetchFunc(r))
	if err != nil {
		return nil, d, nil, fmt.Errorf("github release %s: %w", r.tag, err)
	}
	return files, d, temps, g.check(r, d)
}

// Check says, uploading nothing, whether Publish would refuse rel: a
// release of its tag whose assets differ, published without Replace or
// immutable.
func (g *Target) Check(ctx context.Context, rel *release.Release) error {
	defer g.forget()
	tag, files, err := g.files(rel)
	if err != nil {
		return err
	}
	r, err := g.find(ctx, tag)
	if err != nil || r == nil {
		return err
	}
	_, _, _, err = g.compare(ctx, r, files, &publish.Summary{})
	return err
}

// warn reports a finding that does not stop the publish.
func (g *Target) warn(sum *publish.Summary, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	sum.Warnings = append(sum.Warnings, msg)
	g.progress("warning: %s", msg)
}

// ParseURL reads the OWNER/NAME of a github://OWNER/NAME target URL (rest is
// what follows github://).
func ParseURL(rest string) (owner, repo string, err error) {
	owner, repo, ok := strings.Cut(strings.Trim(rest, "/"), "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return "", "", errors.New("want github://OWNER/NAME")
	}
	return owner, repo, nil
}

// FromProviderURL recognizes clusterctl's GitHub provider URL,
// https://github.com/OWNER/REPO/releases/VERSION/COMPONENTS-FILE, VERSION
// being a tag or latest.
func FromProviderURL(u *url.URL) (owner, repo, version, components string, ok bool) {
	seg := strings.Split(strings.Trim(u.Path, "/"), "/")
	if u.Scheme != "https" || u.Host != "github.com" || len(seg) != 5 || seg[2] != "releases" {
		return "", "", "", "", false
	}
	return seg[0], seg[1], seg[3], seg[4], true
}

// Clusterctl says how clusterctl reads the repository's releases: by
// github.com URLs only (its GitHub repository talks to api.github.com).
func (g *Target) Clusterctl() publish.Reach {
	if g.o.APIURL != DefaultAPI {
		return publish.Reach{Why: "clusterctl reads GitHub releases only from github.com, not " + strings.TrimSuffix(g.o.APIURL, "/")}
	}
	return publish.Reach{ProviderURL: func(ref publish.Ref) string { return g.providerURL(ref) }}
}

// providerURL is the URL clusterctl's config takes: the latest release's
// components file, which clusterctl resolves to any version asked for.
func (g *Target) providerURL(ref publish.Ref) string {
	components := ref.Components
	if components == "" {
		components = ref.ID.DefaultComponentsFile()
	}
	return fmt.Sprintf("%s/%s/%s/releases/latest/%s", g.web, g.o.Owner, g.o.Repo, components)
}

// Flat says why mirror cannot write to GitHub.
func (g *Target) Flat() string {
	return "a GitHub release holds one flat set of files per tag, where the providers of several upstreams cannot stand side by side: mirror writes to a folder, GitLab or a registry, not to GitHub"
}

// forget drops what reading found, once the releases may have changed.
func (g *Target) forget() {
	g.readMu.Lock()
	defer g.readMu.Unlock()
	g.versions, g.releases = nil, nil
}
