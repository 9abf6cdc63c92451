package github

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v82/github"

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
}

var (
	_ publish.Target = (*Target)(nil)
	_ publish.Flat   = (*Target)(nil)
)

// New checks the options and returns the target.
func New(o Options) (*Target, error) {
	if o.Owner == "" || o.Repo == "" || strings.ContainsAny(o.Owner+o.Repo, "/ ") {
		return nil, fmt.Errorf("github repository %q/%q: want --repo OWNER/NAME", o.Owner, o.Repo)
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

// Publish creates or resumes the release for the tag, uploads what is
// missing, replaces what differs (with Replace), checks every asset read
// back, and publishes the release last unless Draft is set.
func (g *Target) Publish(ctx context.Context, rel *release.Release) (*publish.Summary, error) {
	defer g.forget() // what was read before may have changed
	files, err := rel.Flat()
	if err != nil {
		return nil, fmt.Errorf("github release: %w", err)
	}
	tag := g.o.Tag
	if tag == "" {
		tag = rel.Version
	}
	if tag == "" {
		return nil, errors.New("github release: no tag: pass --tag or build the release with a version")
	}
	sum := &publish.Summary{Kind: "github", Logged: true, Version: tag, Uploaded: []string{}, Skipped: []string{}, Replaced: []string{}}
	for _, p := range rel.Providers {
		sum.Providers = append(sum.Providers, publish.ProviderURL{Name: p.ID.Name, Type: string(p.ID.Type),
			URL: g.providerURL(publish.Ref{ID: p.ID, Version: tag, Components: p.ComponentsFile})})
	}

	if g.o.Provenance {
		if files, err = publish.AddProvenance(files, publish.ProvenanceSource{Repository: fmt.Sprintf("%s/%s/%s", g.web, g.o.Owner, g.o.Repo), Version: tag}); err != nil {
			return nil, err
		}
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
		if r.assets == nil {
			if err := g.listAssets(ctx, r); err != nil {
				return nil, err
			}
		}
		temps = takeTemps(r)
		if _, has := r.assets[publish.ProvenanceFile]; g.o.Provenance && !has && !r.draft && (!g.o.Replace || r.immutable) {
			// Published before capirepo wrote provenance: adding an asset
			// changes a published release, and an immutable one refuses it.
			files = publish.WithoutProvenance(files)
			if r.immutable {
				g.warn(sum, "release %s was published without %s and is immutable; it stays without", tag, publish.ProvenanceFile)
			} else {
				g.warn(sum, "release %s was published without %s; it is not added (re-run with --replace to add it)", tag, publish.ProvenanceFile)
			}
		}
		if d, err = publish.Compare(ctx, files, remotes(r), g.fetchFunc(r)); err != nil {
			return nil, fmt.Errorf("github release %s: %w", tag, err)
		}
		if err := g.check(r, d); err != nil {
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
	g.progress("%s %s: %d uploaded, %d skipped, %d replaced", tag, map[bool]string{true: "left as a draft", false: "published"}[r.draft],
		len(sum.Uploaded), len(sum.Skipped), len(sum.Replaced))
	return sum, nil
}

// check refuses changes the options do not allow, before anything is written.
func (g *Target) check(r *ghRelease, d publish.Diff) error {
	if !d.Changes() {
		return nil
	}
	switch {
	case r.immutable:
		return fmt.Errorf("github release %s of %s/%s is immutable and its assets differ from the build (%s): nothing was changed; "+
			"GitHub never lets assets of an immutable release be added, replaced or deleted (not even with --replace), "+
			"so a new version is the only fix", r.tag, g.o.Owner, g.o.Repo, d.Describe())
	case !r.draft && !g.o.Replace:
		return fmt.Errorf("github release %s of %s/%s is already published and differs (%s): nothing was changed; "+
			"publish a new version, or re-run with --replace to change it under users who may have installed it",
			r.tag, g.o.Owner, g.o.Repo, d.Describe())
	case len(d.Changed) > 0 && !g.o.Replace:
		return fmt.Errorf("draft release %s of %s/%s already has different %s: nothing was changed; re-run with --replace to overwrite",
			r.tag, g.o.Owner, g.o.Repo, publish.FileNames(d.Changed))
	}
	return nil
}

// write uploads the missing assets and replaces the changed ones, in
// parallel, largest first, so the last round does not wait on a big file.
func (g *Target) write(ctx context.Context, r *ghRelease, d publish.Diff, temps map[string]*gh.ReleaseAsset, sum *publish.Summary) error {
	type job struct {
		f       release.File
		replace bool
	}
	var jobs []job
	for _, f := range d.Missing {
		jobs = append(jobs, job{f: f})
	}
	for _, f := range d.Changed {
		jobs = append(jobs, job{f: f, replace: true})
	}
	slices.SortStableFunc(jobs, func(a, b job) int { return cmp.Compare(len(b.f.Data), len(a.f.Data)) })
	queue := make(chan job, len(jobs))
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for range min(g.o.Concurrency, len(jobs)) {
		wg.Go(func() {
			for j := range queue {
				if err := ctx.Err(); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("upload %s: %w", j.f.Name, err))
					mu.Unlock()
					continue
				}
				n, err := g.put(ctx, r, j.f, j.replace, temps[j.f.Name])
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case j.replace:
					sum.BytesUploaded += n
					sum.Replaced = append(sum.Replaced, j.f.Name)
				default:
					sum.BytesUploaded += n
					sum.Uploaded = append(sum.Uploaded, j.f.Name)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Leftover temporary assets of an earlier run that nothing needed.
	for name, a := range temps {
		if slices.ContainsFunc(jobs, func(j job) bool { return j.f.Name == name }) {
			continue
		}
		if err := g.deleteAsset(ctx, a); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		return fmt.Errorf("github release %s: %d of %d uploads failed; re-run to finish, assets already uploaded are kept and skipped: %w",
			r.tag, len(errs), len(jobs), errors.Join(errs...))
	}
	return nil
}

// put writes one file. A new file is uploaded under its name. A changed one
// is uploaded under a temporary name, the old asset deleted, and the new one
// renamed, so the release is never without the file for longer than the
// rename. temp is a temporary asset an earlier run left for this file.
func (g *Target) put(ctx context.Context, r *ghRelease, f release.File, replace bool, temp *gh.ReleaseAsset) (int64, error) {
	var uploaded int64
	if temp != nil {
		same, err := g.sameBytes(ctx, temp, f)
		if err != nil {
			return 0, err
		}
		if !same {
			if err := g.deleteAsset(ctx, temp); err != nil {
				return 0, err
			}
			temp = nil
		}
	}
	if !replace && temp == nil {
		_, err := g.upload(ctx, r, f.Name, f)
		if err != nil {
			return 0, err
		}
		g.progress("uploaded %s (%d bytes)", f.Name, len(f.Data))
		return int64(len(f.Data)), nil
	}
	if temp == nil {
		a, err := g.upload(ctx, r, tempPrefix+f.Name, f)
		if err != nil {
			return 0, err
		}
		temp, uploaded = a, int64(len(f.Data))
	}
	if old := r.assets[f.Name]; old != nil {
		if err := g.deleteAsset(ctx, old); err != nil {
			return uploaded, err
		}
	}
	err := g.retry.Do(ctx, func(ctx context.Context) error {
		_, _, err := g.c.Repositories.EditReleaseAsset(ctx, g.o.Owner, g.o.Repo, temp.GetID(), &gh.ReleaseAsset{Name: gh.Ptr(f.Name)})
		return g.convert(err)
	})
	if err != nil {
		return uploaded, fmt.Errorf("rename the new %s into place (the old one is deleted, the new one is %s%s; re-run to finish): %w",
			f.Name, tempPrefix, f.Name, err)
	}
	g.progress("replaced %s (%d bytes)", f.Name, len(f.Data))
	return uploaded, nil
}

// upload sends one asset. Every attempt reads the bytes from the start. If
// an earlier attempt reached GitHub but its reply was lost, the retry gets
// 422 already_exists: the asset there is then compared and accepted when
// its bytes are the same.
func (g *Target) upload(ctx context.Context, r *ghRelease, name string, f release.File) (*gh.ReleaseAsset, error) {
	mediaType := mime.TypeByExtension(path.Ext(name))
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	u := fmt.Sprintf("repos/%s/%s/releases/%d/assets?name=%s", url.PathEscape(g.o.Owner), url.PathEscape(g.o.Repo), r.id, url.QueryEscape(name))
	a, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gh.ReleaseAsset, error) {
		req, err := g.c.NewUploadRequest(u, bytes.NewReader(f.Data), int64(len(f.Data)), mediaType)
		if err != nil {
			return nil, publish.Permanent(err)
		}
		publish.WatchUpload(req, g.o.UploadProgress, name, f.Data)
		a := new(gh.ReleaseAsset)
		_, err = g.c.Do(ctx, req, a)
		if isAlreadyExists(err) {
			existing, lerr := g.findAsset(ctx, r, name)
			if lerr != nil {
				return nil, lerr
			}
			if existing != nil {
				same, herr := g.sameBytes(ctx, existing, f)
				if herr != nil {
					return nil, herr
				}
				if same {
					return existing, nil
				}
			}
			return nil, publish.Permanent(fmt.Errorf("another %s with different bytes appeared on the release while uploading (is another publish running?): %w", name, err))
		}
		return a, g.convert(err)
	})
	if err != nil {
		return nil, fmt.Errorf("upload %s (%d bytes) to release %s: %w", name, len(f.Data), r.tag, err)
	}
	return a, nil
}

func isAlreadyExists(err error) bool {
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	return slices.ContainsFunc(er.Errors, func(e gh.Error) bool { return e.Code == "already_exists" })
}

func (g *Target) deleteAsset(ctx context.Context, a *gh.ReleaseAsset) error {
	err := g.retry.Do(ctx, func(ctx context.Context) error {
		_, err := g.c.Repositories.DeleteReleaseAsset(ctx, g.o.Owner, g.o.Repo, a.GetID())
		err = g.convert(err)
		var se *publish.StatusError
		if errors.As(err, &se) && se.Status == http.StatusNotFound {
			return nil // an earlier attempt deleted it
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("delete asset %s: %w", a.GetName(), err)
	}
	return nil
}

// find returns the published release for tag, or else the oldest draft for
// it, or nil. The by-tag endpoint never returns drafts, so drafts are found
// by listing: the first page of releases is read alongside the by-tag
// lookup, and further pages only when by-tag finds nothing.
func (g *Target) find(ctx context.Context, tag string) (*ghRelease, error) {
	listCtx, cancel := context.WithCancel(ctx)
	var (
		wg      sync.WaitGroup
		first   []*gh.RepositoryRelease
		next    int
		listErr error
	)
	wg.Go(func() { first, next, listErr = g.releasesPage(listCtx, 1) })
	defer func() { cancel(); wg.Wait() }()

	rr, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gh.RepositoryRelease, error) {
		r, _, err := g.c.Repositories.GetReleaseByTag(ctx, g.o.Owner, g.o.Repo, tag)
		return r, g.convert(err)
	})
	var se *publish.StatusError
	switch {
	case err == nil:
		return toRelease(rr), nil // the published release wins; the listing is cancelled
	case errors.As(err, &se) && se.Status == http.StatusNotFound:
	default:
		return nil, g.hint(fmt.Errorf("look up release %s of %s/%s: %w", tag, g.o.Owner, g.o.Repo, err))
	}
	wg.Wait()
	if listErr != nil {
		return nil, g.hint(fmt.Errorf("look for a draft release %s of %s/%s: %w", tag, g.o.Owner, g.o.Repo, listErr))
	}
	d, err := g.oldestDraft(ctx, tag, first, next)
	if err != nil {
		return nil, g.hint(fmt.Errorf("look for a draft release %s of %s/%s: %w", tag, g.o.Owner, g.o.Repo, err))
	}
	if d != nil {
		g.progress("resuming draft release %s (id %d)", tag, d.id)
	}
	return d, nil
}

func (g *Target) findDraft(ctx context.Context, tag string) (*ghRelease, error) {
	page, next, err := g.releasesPage(ctx, 1)
	if err != nil {
		return nil, err
	}
	return g.oldestDraft(ctx, tag, page, next)
}

// oldestDraft returns the oldest draft for tag in the releases list, given
// a page already read and the number of the next one (0: none).
func (g *Target) oldestDraft(ctx context.Context, tag string, page []*gh.RepositoryRelease, next int) (*ghRelease, error) {
	var found *gh.RepositoryRelease
	for {
		for _, r := range page {
			// The oldest draft wins, so every run picks the same one.
			if r.GetDraft() && r.GetTagName() == tag && (found == nil || r.GetID() < found.GetID()) {
				found = r
			}
		}
		if next == 0 {
			break
		}
		var err error
		if page, next, err = g.releasesPage(ctx, next); err != nil {
			return nil, err
		}
	}
	if found == nil {
		return nil, nil
	}
	return toRelease(found), nil
}

// releasesPage reads one page of the repository's releases, newest first,
// and returns the next page's number (0: none).
func (g *Target) releasesPage(ctx context.Context, page int) ([]*gh.RepositoryRelease, int, error) {
	opts := &gh.ListOptions{PerPage: 100, Page: page}
	rs, resp, err := doResp(ctx, g, func(ctx context.Context) ([]*gh.RepositoryRelease, *gh.Response, error) {
		return g.c.Repositories.ListReleases(ctx, g.o.Owner, g.o.Repo, opts)
	})
	if err != nil {
		return nil, 0, err
	}
	return rs, resp.NextPage, nil
}

func (g *Target) create(ctx context.Context, tag string, rel *release.Release) (*ghRelease, error) {
	body, err := g.notes(ctx, tag)
	if err != nil {
		return nil, err
	}
	in := &gh.RepositoryRelease{TagName: gh.Ptr(tag), Name: gh.Ptr(g.title(tag)), Draft: gh.Ptr(true)}
	if body != "" {
		in.Body = gh.Ptr(body)
	}
	if g.o.Commitish != "" {
		in.TargetCommitish = gh.Ptr(g.o.Commitish)
	}
	if g.prerelease(tag) {
		in.Prerelease = gh.Ptr(true)
	}
	attempt := 0
	r, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*ghRelease, error) {
		attempt++
		if attempt > 1 {
			// The last attempt may have created the draft before failing.
			if d, err := g.findDraft(ctx, tag); err != nil || d != nil {
				return d, err
			}
		}
		r, _, err := g.c.Repositories.CreateRelease(ctx, g.o.Owner, g.o.Repo, in)
		if err != nil {
			return nil, g.convert(err)
		}
		return toRelease(r), nil
	})
	if err != nil {
		return nil, g.hint(fmt.Errorf("create draft release %s in %s/%s: %w", tag, g.o.Owner, g.o.Repo, err))
	}
	g.progress("created draft release %s (id %d)", tag, r.id)
	return r, nil
}

func isPrerelease(tag string) bool {
	v, _, _ := strings.Cut(tag, "+")
	return strings.Contains(v, "-")
}

func (g *Target) prerelease(tag string) bool {
	if g.o.Prerelease != nil {
		return *g.o.Prerelease
	}
	return isPrerelease(tag)
}

func (g *Target) title(tag string) string {
	if g.o.Title != "" {
		return g.o.Title
	}
	return tag
}

// notes returns the release notes: Notes, then the generated notes.
func (g *Target) notes(ctx context.Context, tag string) (string, error) {
	if !g.o.GenerateNotes {
		return g.o.Notes, nil
	}
	opts := &gh.GenerateNotesOptions{TagName: tag}
	if g.o.Commitish != "" {
		opts.TargetCommitish = gh.Ptr(g.o.Commitish)
	}
	if g.o.PreviousTag != "" {
		opts.PreviousTagName = gh.Ptr(g.o.PreviousTag)
	}
	n, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gh.RepositoryReleaseNotes, error) {
		n, _, err := g.c.Repositories.GenerateReleaseNotes(ctx, g.o.Owner, g.o.Repo, opts)
		return n, g.convert(err)
	})
	if err != nil {
		err = fmt.Errorf("generate release notes for %s in %s/%s: %w", tag, g.o.Owner, g.o.Repo, err)
		var se *publish.StatusError
		if errors.As(err, &se) && se.Status == http.StatusUnprocessableEntity {
			hint := "pass --target COMMITISH when the tag does not exist yet"
			if g.o.PreviousTag != "" {
				hint += ", and check that --previous-tag " + g.o.PreviousTag + " exists"
			}
			return "", fmt.Errorf("%w: %s", err, hint)
		}
		return "", g.hint(err)
	}
	g.progress("generated release notes for %s (%d bytes)", tag, len(n.Body))
	if g.o.Notes == "" {
		return n.Body, nil
	}
	return strings.TrimRight(g.o.Notes, "\n") + "\n\n" + n.Body, nil
}

// warn reports a finding that does not stop the publish.
func (g *Target) warn(sum *publish.Summary, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	sum.Warnings = append(sum.Warnings, msg)
	g.progress("warning: %s", msg)
}

// checkTarget warns when --target is given for a tag that already exists:
// GitHub keeps the tag where it is and ignores the target.
func (g *Target) checkCommitish(ctx context.Context, tag string, r *ghRelease, sum *publish.Summary) error {
	if g.o.Commitish == "" {
		return nil
	}
	if r != nil && !r.draft {
		g.warn(sum, "--target %s is ignored: release %s is published, its tag exists", g.o.Commitish, tag)
		return nil
	}
	ref, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gh.Reference, error) {
		ref, _, err := g.c.Git.GetRef(ctx, g.o.Owner, g.o.Repo, "tags/"+tag)
		return ref, g.convert(err)
	})
	var se *publish.StatusError
	switch {
	case err == nil:
		g.warn(sum, "--target %s is ignored: tag %s already exists (at %s) and GitHub publishes the release on it as it is",
			g.o.Commitish, tag, ref.GetObject().GetSHA())
	case errors.As(err, &se) && se.Status == http.StatusNotFound:
		// The tag is created when the release is published.
	default:
		return g.hint(fmt.Errorf("look up tag %s of %s/%s: %w", tag, g.o.Owner, g.o.Repo, err))
	}
	return nil
}

// updateMeta brings the title, notes and prerelease flag of an existing
// release to what the options ask for. Empty notes and a title that is the
// tag are filled in; notes, a title or a published release's flag that
// differ are changed only with Replace (GitHub lets them change even on an
// immutable release), else kept with a warning.
func (g *Target) updateMeta(ctx context.Context, r *ghRelease, sum *publish.Summary) error {
	edit := &gh.RepositoryRelease{}
	changed := false
	var kept []string
	if g.o.Title != "" && r.name != g.o.Title {
		if r.name == "" || r.name == r.tag || g.o.Replace {
			edit.Name, changed = gh.Ptr(g.o.Title), true
		} else {
			kept = append(kept, "title")
		}
	}
	if g.o.Notes != "" || g.o.GenerateNotes {
		// Generated again to compare: a resumed draft made by an earlier
		// run holds the same notes and needs nothing.
		body, err := g.notes(ctx, r.tag)
		if err != nil {
			return err
		}
		switch {
		case body == r.body:
		case r.body == "" || g.o.Replace:
			edit.Body, changed = gh.Ptr(body), true
		default:
			kept = append(kept, "notes")
		}
	}
	if g.o.Prerelease != nil && r.prerelease != *g.o.Prerelease {
		if r.draft || g.o.Replace {
			edit.Prerelease, changed = gh.Ptr(*g.o.Prerelease), true
		} else {
			kept = append(kept, "prerelease flag")
		}
	}
	if len(kept) > 0 {
		g.warn(sum, "release %s keeps its %s: re-run with --replace to change them", r.tag, strings.Join(kept, ", "))
	}
	if !changed {
		return nil
	}
	rr, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gh.RepositoryRelease, error) {
		rr, _, err := g.c.Repositories.EditRelease(ctx, g.o.Owner, g.o.Repo, r.id, edit)
		return rr, g.convert(err)
	})
	if err != nil {
		return g.hint(fmt.Errorf("update the title and notes of release %s: %w", r.tag, err))
	}
	nr := toRelease(rr)
	r.name, r.body, r.prerelease = nr.name, nr.body, nr.prerelease
	g.progress("updated the title, notes and prerelease flag of release %s", r.tag)
	return nil
}

// publish turns the draft into a release; GitHub creates the tag now, from
// Target or the default branch.
func (g *Target) publish(ctx context.Context, r *ghRelease) error {
	edit := &gh.RepositoryRelease{Draft: gh.Ptr(false)}
	if r.prerelease {
		edit.MakeLatest = gh.Ptr("false")
	}
	rr, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gh.RepositoryRelease, error) {
		rr, _, err := g.c.Repositories.EditRelease(ctx, g.o.Owner, g.o.Repo, r.id, edit)
		return rr, g.convert(err)
	})
	if err != nil {
		return g.hint(fmt.Errorf("publish draft release %s (all assets are uploaded and checked; re-run to publish): %w", r.tag, err))
	}
	nr := toRelease(rr)
	r.draft, r.htmlURL, r.immutable = nr.draft, nr.htmlURL, nr.immutable
	g.progress("published release %s: %s", r.tag, r.htmlURL)
	return nil
}

// verify reads the assets back and checks every file's size and sha256.
func (g *Target) verify(ctx context.Context, r *ghRelease, files []release.File) error {
	if err := g.listAssets(ctx, r); err != nil {
		return err
	}
	d, err := publish.Compare(ctx, files, remotes(r), g.fetchFunc(r))
	if err != nil {
		return fmt.Errorf("check release %s after upload: %w", r.tag, err)
	}
	if d.Changes() {
		return fmt.Errorf("release %s read back after upload is not what was uploaded (%s): re-run to repair (with --replace for the different ones)", r.tag, d.Describe())
	}
	g.progress("checked %d assets read back: sizes and sha256 match", len(files))
	return nil
}

func (g *Target) listAssets(ctx context.Context, r *ghRelease) error {
	r.assets = map[string]*gh.ReleaseAsset{}
	opts := &gh.ListOptions{PerPage: 100}
	for {
		page, resp, err := doResp(ctx, g, func(ctx context.Context) ([]*gh.ReleaseAsset, *gh.Response, error) {
			return g.c.Repositories.ListReleaseAssets(ctx, g.o.Owner, g.o.Repo, r.id, opts)
		})
		if err != nil {
			return g.hint(fmt.Errorf("list assets of release %s: %w", r.tag, err))
		}
		for _, a := range page {
			r.assets[a.GetName()] = a
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

func (g *Target) findAsset(ctx context.Context, r *ghRelease, name string) (*gh.ReleaseAsset, error) {
	tmp := &ghRelease{id: r.id, tag: r.tag}
	if err := g.listAssets(ctx, tmp); err != nil {
		return nil, err
	}
	return tmp.assets[name], nil
}

// takeTemps removes the temporary assets of an earlier run from r.assets and
// returns them by the name they stand in for.
func takeTemps(r *ghRelease) map[string]*gh.ReleaseAsset {
	out := map[string]*gh.ReleaseAsset{}
	for name, a := range r.assets {
		if target, ok := strings.CutPrefix(name, tempPrefix); ok {
			out[target] = a
			delete(r.assets, name)
		}
	}
	return out
}

func remotes(r *ghRelease) map[string]publish.Remote {
	out := map[string]publish.Remote{}
	for name, a := range r.assets {
		sum, _ := strings.CutPrefix(a.GetDigest(), "sha256:")
		if !strings.HasPrefix(a.GetDigest(), "sha256:") {
			sum = ""
		}
		out[name] = publish.Remote{Name: name, Size: int64(a.GetSize()), SHA256: sum}
	}
	return out
}

func (g *Target) fetchFunc(r *ghRelease) func(ctx context.Context, name string) ([]byte, error) {
	return func(ctx context.Context, name string) ([]byte, error) {
		return g.downloadBytes(ctx, r.assets[name])
	}
}

func (g *Target) sameBytes(ctx context.Context, a *gh.ReleaseAsset, f release.File) (bool, error) {
	if int64(a.GetSize()) != int64(len(f.Data)) {
		return false, nil
	}
	if d, ok := strings.CutPrefix(a.GetDigest(), "sha256:"); ok {
		return d == f.SHA256(), nil
	}
	sum, err := g.download(ctx, a)
	if err != nil {
		return false, fmt.Errorf("download %s to compare it: %w", a.GetName(), err)
	}
	return sum == f.SHA256(), nil
}

// download returns the sha256 of an asset's bytes (read as the Reader reads them).
func (g *Target) download(ctx context.Context, a *gh.ReleaseAsset) (string, error) {
	data, err := g.downloadBytes(ctx, a)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// doResp runs a listing call under the retry policy and keeps its response
// for the pagination links.
func doResp[T any](ctx context.Context, g *Target, call func(context.Context) (T, *gh.Response, error)) (T, *gh.Response, error) {
	var resp *gh.Response
	v, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (T, error) {
		v, r, err := call(ctx)
		resp = r
		return v, g.convert(err)
	})
	return v, resp, err
}

// convert turns go-github's errors into the retry policy's terms: rate
// limits become waits until the reset or the Retry-After, other replies a
// StatusError, network errors stay as they are.
func (g *Target) convert(err error) error {
	if err == nil {
		return nil
	}
	now := g.retry.Now()
	var rl *gh.RateLimitError
	if errors.As(err, &rl) {
		return &publish.StatusError{Status: http.StatusForbidden, RateLimited: true, RetryAfter: publish.UntilReset(rl.Rate.Reset.Time, now), Err: err}
	}
	var ab *gh.AbuseRateLimitError
	if errors.As(err, &ab) {
		wait := time.Minute // GitHub: without Retry-After, wait at least a minute
		if ab.RetryAfter != nil {
			wait = *ab.RetryAfter
		}
		if ab.Response != nil {
			if d := publish.RetryAfterHeader(ab.Response.Header, now); d > 0 {
				wait = d
			} else if d := publish.RateLimitReset(ab.Response.Header.Get("X-Ratelimit-Reset"), now); d > 0 {
				wait = d
			}
		}
		return &publish.StatusError{Status: http.StatusForbidden, RateLimited: true, RetryAfter: wait, Err: err}
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return publish.StatusErrorFrom(er.Response.StatusCode, er.Response.Header, now, err)
	}
	return err
}

// hint adds what to do to the errors of a publish people can fix.
func (g *Target) hint(err error) error {
	return publish.Hint(err, func(se *publish.StatusError) string {
		switch se.Status {
		case http.StatusUnauthorized:
			return fmt.Sprintf("the token was refused; set GITHUB_TOKEN to a token that can write releases (contents: write) of %s/%s", g.o.Owner, g.o.Repo)
		case http.StatusNotFound:
			return g.notFound()
		case http.StatusForbidden:
			if !se.RateLimited {
				return fmt.Sprintf("the token may not write releases of %s/%s (it needs contents: write)", g.o.Owner, g.o.Repo)
			}
		}
		return ""
	})
}

// readHint adds what to do to the errors of a read people can fix.
func (g *Target) readHint(err error) error {
	return publish.Hint(err, func(se *publish.StatusError) string {
		switch se.Status {
		case http.StatusUnauthorized:
			return fmt.Sprintf("the token was refused; set GITHUB_TOKEN to a token that can read %s/%s, or unset it for a public repository", g.o.Owner, g.o.Repo)
		case http.StatusNotFound:
			return g.notFound()
		}
		return ""
	})
}

func (g *Target) notFound() string {
	return fmt.Sprintf("repository %s/%s does not exist or the token cannot see it", g.o.Owner, g.o.Repo)
}

// embeddedAssetsMax bounds the asset list a release object carries that is
// taken as complete. The REST docs state no cap for it (lists of 54 are seen
// whole); a list this long is read again from the paginated assets endpoint.
const embeddedAssetsMax = 50

// toRelease keeps the assets the release object lists, when there are few
// enough to trust the list is whole (else assets stays nil: not known).
// They are the state compared before writing; the read back after the
// uploads always lists the assets anew.
func toRelease(r *gh.RepositoryRelease) *ghRelease {
	out := &ghRelease{id: r.GetID(), tag: r.GetTagName(), name: r.GetName(), body: r.GetBody(), draft: r.GetDraft(),
		prerelease: r.GetPrerelease(), immutable: r.GetImmutable(), htmlURL: r.GetHTMLURL()}
	if len(r.Assets) < embeddedAssetsMax {
		out.assets = map[string]*gh.ReleaseAsset{}
		for _, a := range r.Assets {
			out.assets[a.GetName()] = a
		}
	}
	return out
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
