package gitlab

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// TokenType says which header carries the GitLab token.
type TokenType string

const (
	// PrivateToken sends a personal, project or group access token
	// in the PRIVATE-TOKEN header.
	PrivateToken TokenType = "private"
	// JobToken sends a CI/CD job token (CI_JOB_TOKEN) in the
	// JOB-TOKEN header, so publishing runs inside a GitLab CI job.
	JobToken TokenType = "job"
	// BearerToken sends an access or OAuth token as Authorization: Bearer.
	BearerToken TokenType = "bearer"
)

// Options configures a GitLab generic package publisher.
type Options struct {
	// URL is the GitLab instance, e.g. https://gitlab.example.com; a
	// trailing /api/v4 is accepted.
	URL string
	// Project is the numeric project id or its full path (group/subgroup/name).
	Project string
	// Package names the generic package; empty means each provider's label
	// (infrastructure-aws, ...). It may be set only for a release of one provider.
	Package string
	// Token authenticates every call. It is never printed.
	Token string
	// TokenType picks the header; empty means PrivateToken.
	TokenType TokenType
	// Replace lets files that differ be uploaded anew; the older copies are
	// deleted so that exactly one copy of each file remains.
	Replace bool
	// Concurrency is how many packages are written at once; 0 means 4.
	// Files of one package are always written one after the other, as
	// GitLab asks.
	Concurrency int
	// HTTPClient makes the requests; nil means a new http.Client. It is
	// copied, never changed.
	HTTPClient *http.Client
	// Retry is the retry policy; nil means DefaultRetry.
	Retry *publish.Retry
	// Progress receives one line per step and the warnings; nil means io.Discard.
	Progress io.Writer
	// UploadProgress, when set, follows the bytes of every file upload
	// (named PACKAGE/VERSION/FILE).
	UploadProgress publish.UploadProgress

	// Release also makes a GitLab Release for the version's tag whose asset
	// links point at the package files.
	Release bool
	// Title and Notes are the release's name (default: the tag) and
	// description. An existing release's differ only change with Replace.
	Title, Notes string
	// Ref is the branch or commit the tag is created from when it does not
	// exist yet.
	Ref string
	// Provenance adds provenance.intoto.json to each package: an in-toto
	// statement with an SLSA provenance v1 predicate whose subjects are the
	// package's files.
	Provenance bool
}

// Target publishes each provider of a release as one generic package
// (name = provider label, version = the exact tag) in a project's package
// registry, where clusterctl reads it, and reads packages back (a
// publish.Source).
type Target struct {
	o        Options
	c        *gl.Client
	pid      any    // int64 id or path, as the client takes it
	slug     string // the project as it goes into a URL path: id or escaped path
	web      string // scheme://host[/root]
	host     string
	retry    publish.Retry
	warnings []string
	mu       sync.Mutex
}

var (
	_ publish.Target  = (*Target)(nil)
	_ publish.Planner = (*Target)(nil)
	_ publish.Checker = (*Target)(nil)
	_ publish.Noted   = (*Target)(nil)
)

// AddNotes appends a section to the GitLab Release's notes
// (publish.Noted); false without a Release, which has none.
func (g *Target) AddNotes(section string) bool {
	if !g.o.Release {
		return false
	}
	g.o.Notes = publish.AppendNotes(g.o.Notes, section)
	return true
}

// Planned names the files Publish uploads for rel, package by package, as
// its summary names them (the unsigned provenance with Provenance
// included).
func (g *Target) Planned(rel *release.Release) ([]string, error) {
	pks, err := g.packages(rel)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, pk := range pks {
		for _, f := range pk.files {
			out = append(out, pk.name+"/"+f.Name)
		}
	}
	return out, nil
}

// Generic package names: GitLab allows letters, digits, '.', '_' and '-';
// we also keep them free of leading dots and dashes so they are plain names.
var glPackageNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// New checks the options and returns a publisher. Warnings about a
// URL clusterctl will not accept are kept for Warnings and printed by Publish.
func New(o Options) (*Target, error) {
	base, err := url.Parse(strings.TrimSpace(o.URL))
	if err != nil || base.Host == "" || (base.Scheme != "https" && base.Scheme != "http") {
		return nil, fmt.Errorf("gitlab URL %q: want the instance URL, e.g. %s https://gitlab.example.com", o.URL, option.GitLabURL)
	}
	base.Path = strings.TrimSuffix(strings.TrimSuffix(base.Path, "/"), "/api/v4")
	base.RawPath, base.RawQuery, base.Fragment = "", "", ""
	userinfo := base.User != nil
	base.User = nil // never sent, never printed: the token comes from the environment
	g := &Target{o: o, web: strings.TrimSuffix(base.String(), "/"), host: base.Host}
	if userinfo {
		g.warnings = append(g.warnings, "the GitLab URL carries a user name or password: it is ignored (and never printed); give the token in GITLAB_ACCESS_TOKEN")
	}

	project, err := url.PathUnescape(strings.Trim(strings.TrimSpace(o.Project), "/"))
	switch {
	case err != nil || project == "" || strings.ContainsAny(project, " \t\n") || strings.Contains(project, "//"):
		return nil, fmt.Errorf("gitlab project %q: want %s GROUP/[SUBGROUP/]NAME or the numeric project id", o.Project, option.Project)
	case isDigits(project):
		id, _ := strconv.ParseInt(project, 10, 64)
		g.pid, g.slug = id, project
	default:
		g.pid, g.slug = project, url.PathEscape(project)
	}
	if o.Package != "" && !glPackageNameRE.MatchString(o.Package) {
		return nil, fmt.Errorf("gitlab package name %q: use letters, digits, '.', '_' and '-' only (the default is the provider label)", o.Package)
	}
	if o.Token == "" {
		return nil, fmt.Errorf("gitlab: no token: set GITLAB_ACCESS_TOKEN, or CI_JOB_TOKEN with %s job inside GitLab CI", option.GitLabTokenType)
	}

	if !strings.HasPrefix(base.Host, "gitlab.") {
		g.warnings = append(g.warnings, fmt.Sprintf("host %q does not start with \"gitlab.\": clusterctl reads a provider URL as GitLab only when its host does, so it will refuse the URLs below; serve this GitLab under a gitlab.* name (a DNS alias is enough) for clusterctl", base.Host))
	}
	if base.Scheme != "https" {
		g.warnings = append(g.warnings, fmt.Sprintf("%s is not https: clusterctl only reads https:// provider URLs", g.web))
	}
	if base.Path != "" {
		g.warnings = append(g.warnings, fmt.Sprintf("GitLab is served under %q: clusterctl expects /api/v4/projects/ at the root of the host, so it will refuse the URLs below", base.Path))
	}

	if o.Concurrency <= 0 {
		g.o.Concurrency = 4
	}
	if o.Progress == nil {
		g.o.Progress = io.Discard
	}
	g.retry = publish.DefaultRetry()
	if o.Retry != nil {
		g.retry = o.Retry.WithDefaults()
	}
	notify := g.retry.Notify
	g.retry.Notify = func(attempt int, err error, wait time.Duration) {
		g.progress("retrying in %s after attempt %d failed: %v", wait.Round(time.Millisecond), attempt, g.redact(err))
		if notify != nil {
			notify(attempt, err, wait)
		}
	}

	// A copy (the client library wraps the transport: never touch the
	// caller's client) that sends the token to this GitLab only, never to
	// a host a redirect names.
	hc := publish.GuardCredentials(o.HTTPClient, g.web)
	opts := []gl.ClientOptionFunc{
		gl.WithBaseURL(g.web + "/api/v4"),
		gl.WithHTTPClient(hc),
		// The library would retry 5xx and 429 itself (go-retryablehttp),
		// out of sight of our policy, its waits and its attempt count.
		gl.WithoutRetries(),
		gl.WithInterceptor(captureErrorBodies),
		gl.WithUserAgent("capirepo"),
	}
	switch o.TokenType {
	case "", PrivateToken:
		g.c, err = gl.NewClient(o.Token, opts...)
	case JobToken:
		g.c, err = gl.NewJobClient(o.Token, opts...)
	case BearerToken:
		g.c, err = gl.NewAuthSourceClient(bearerSource(o.Token), opts...)
	default:
		return nil, fmt.Errorf("gitlab token type %q: want private, job or bearer", o.TokenType)
	}
	if err != nil {
		return nil, fmt.Errorf("gitlab client for %s: %w", g.web, g.redact(err))
	}
	return g, nil
}

// Warnings returns what New found wrong with the URL for clusterctl.
func (g *Target) Warnings() []string { return slices.Clone(g.warnings) }

// PackageURL is the URL clusterctl's config takes for a provider
// published as a generic package: https://HOST/api/v4/projects/SLUG/
// packages/generic/PACKAGE/VERSION/COMPONENTS-FILE, with SLUG the numeric
// id or the URL-escaped path (group%2Fproject).
func PackageURL(host, project, pkg, version, componentsFile string) string {
	slug := project
	if !isDigits(project) {
		slug = url.PathEscape(project)
	}
	return fmt.Sprintf("https://%s/api/v4/projects/%s/packages/generic/%s/%s/%s",
		host, slug, url.PathEscape(pkg), url.PathEscape(version), url.PathEscape(componentsFile))
}

// glPackage is one provider's package: what should be there, what is.
type glPackage struct {
	prov    *release.Provider
	name    string
	version string
	files   []release.File // upload order
	// copies holds every remote copy of each file name, oldest first.
	copies map[string][]*gl.PackageFile
	diff   publish.Diff
	// warning is a finding of plan that does not stop the publish.
	warning string
	// written by act
	uploaded, replaced []string
	removed            int
	bytes              int64
}

// Publish plans every package first (list the package files, compare
// sha256), refuses changed files unless Replace before anything is written,
// then uploads what is missing or changed: packages in parallel, the files
// of one package one after the other, metadata.yaml last. With Replace the
// older copies of each written file are deleted afterwards, leaving one.
func (g *Target) Publish(ctx context.Context, rel *release.Release) (*publish.Summary, error) {
	sum, err := g.publish(ctx, rel)
	return sum, g.redact(err)
}

// Check says, uploading nothing, whether Publish would refuse rel: a
// package of its version that holds other files, without Replace.
func (g *Target) Check(ctx context.Context, rel *release.Release) error {
	pkgs, err := g.packages(rel)
	if err != nil {
		return err
	}
	if err := g.each(ctx, pkgs, g.plan); err != nil {
		return g.redact(err)
	}
	return g.check(pkgs)
}

func (g *Target) publish(ctx context.Context, rel *release.Release) (*publish.Summary, error) {
	for _, w := range g.warnings {
		g.progress("warning: %s", w)
	}
	pkgs, err := g.packages(rel)
	if err != nil {
		return nil, err
	}
	if err := g.each(ctx, pkgs, g.plan); err != nil {
		return nil, err
	}
	if err := g.check(pkgs); err != nil {
		return nil, err
	}
	if err := g.each(ctx, pkgs, g.act); err != nil {
		return nil, err
	}

	sum := &publish.Summary{Kind: "gitlab", Logged: true, URL: g.packagesPage(), Version: rel.Version,
		Uploaded: []string{}, Skipped: []string{}, Replaced: []string{}}
	for _, pk := range pkgs {
		for _, f := range pk.diff.Same {
			sum.Skipped = append(sum.Skipped, pk.name+"/"+f.Name)
		}
		for _, n := range pk.uploaded {
			sum.Uploaded = append(sum.Uploaded, pk.name+"/"+n)
		}
		for _, n := range pk.replaced {
			sum.Replaced = append(sum.Replaced, pk.name+"/"+n)
		}
		sum.BytesUploaded += pk.bytes
		if pk.warning != "" {
			sum.Warnings = append(sum.Warnings, pk.warning)
		}
		sum.Providers = append(sum.Providers, publish.ProviderURL{Name: pk.prov.ID.Name, Type: string(pk.prov.ID.Type),
			URL: PackageURL(g.host, g.projectName(), pk.name, pk.version, pk.prov.ComponentsFile)})
		// The summary adds up the packages: a package's own counts are said
		// when there are several, or when older copies were deleted, which
		// the summary does not count.
		if len(pkgs) > 1 || pk.removed > 0 {
			g.progress("package %s %s: %d uploaded, %d skipped, %d replaced, %d older copies deleted",
				pk.name, pk.version, len(pk.uploaded), len(pk.diff.Same), len(pk.replaced), pk.removed)
		}
	}
	slices.Sort(sum.Uploaded)
	slices.Sort(sum.Skipped)
	slices.Sort(sum.Replaced)
	if g.o.Release {
		if err := g.release(ctx, rel, pkgs, sum); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// packages names one package per provider, each with its files in upload order.
func (g *Target) packages(rel *release.Release) ([]*glPackage, error) {
	if len(rel.Providers) == 0 {
		return nil, errors.New("gitlab: the release holds no provider: run capirepo build first")
	}
	if g.o.Package != "" && len(rel.Providers) > 1 {
		labels := make([]string, len(rel.Providers))
		for i, p := range rel.Providers {
			labels[i] = p.Label()
		}
		return nil, fmt.Errorf("gitlab: %s %s names one package, but the release holds %d providers (%s) and each needs its own package: leave %s out to name each package after its provider label",
			option.Package, g.o.Package, len(rel.Providers), strings.Join(labels, ", "), option.Package)
	}
	var out []*glPackage
	for _, p := range rel.Providers {
		version := p.Version
		if version == "" {
			version = rel.Version
		}
		if version == "" {
			return nil, fmt.Errorf("gitlab: provider %s has no version: build the release with %s", p.Label(), option.Version)
		}
		name := g.o.Package
		if name == "" {
			name = p.Label()
		}
		if _, ok := p.File(p.ComponentsFile); !ok {
			return nil, fmt.Errorf("gitlab: provider %s %s has no components file %q in the release", p.Label(), version, p.ComponentsFile)
		}
		files := p.Assets()
		if g.o.Provenance {
			var err error
			if files, err = publish.AddProvenance(files, publish.ProvenanceSource{Repository: g.projectURL(), Version: version}); err != nil {
				return nil, err
			}
		}
		files = uploadOrder(files, p.ComponentsFile)
		out = append(out, &glPackage{prov: p, name: name, version: version, files: files})
	}
	return out, nil
}

// uploadOrder puts the components file and metadata.yaml last: clusterctl
// reads metadata.yaml first, so a package whose upload stopped half-way
// fails to install with "metadata.yaml not found" instead of installing a
// mix of old and new files.
func uploadOrder(files []release.File, components string) []release.File {
	rank := func(name string) int {
		switch name {
		case "metadata.yaml":
			return 3
		case components:
			return 2
		case release.ChecksumsFile:
			return 1
		}
		return 0
	}
	files = slices.Clone(files)
	slices.SortStableFunc(files, func(a, b release.File) int {
		if d := rank(a.Name) - rank(b.Name); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	return files
}

// each runs fn for every package, at most Concurrency at a time, and joins the errors.
func (g *Target) each(ctx context.Context, pkgs []*glPackage, fn func(context.Context, *glPackage) error) error {
	sem := make(chan struct{}, g.o.Concurrency)
	errs := make([]error, len(pkgs))
	var wg sync.WaitGroup
	for i, pk := range pkgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = context.Cause(ctx)
				return
			}
			defer func() { <-sem }()
			errs[i] = fn(ctx, pk)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// plan reads what the package holds and compares it with the release.
func (g *Target) plan(ctx context.Context, pk *glPackage) error {
	copies, err := g.remoteFiles(ctx, pk)
	if err != nil {
		return err
	}
	pk.copies = copies
	have := map[string]publish.Remote{}
	for name, cs := range copies {
		newest := cs[len(cs)-1] // what clusterctl downloads
		have[name] = publish.Remote{Name: name, Size: newest.Size, SHA256: newest.FileSHA256}
	}
	fetch := func(ctx context.Context, name string) ([]byte, error) {
		return g.downloadLimited(ctx, pk, name, min(have[name].Size, publish.MaxReplySize))
	}
	if pk.diff, err = publish.Compare(ctx, pk.files, have, fetch); err != nil {
		return fmt.Errorf("gitlab package %s %s of project %s: %w", pk.name, pk.version, g.projectName(), err)
	}
	if len(copies) > 0 && len(pk.diff.Missing)+len(pk.diff.Changed) > 0 { // all the same: the summary's "skipped"
		g.progress("package %s %s: %d files there, %d the same, %d missing, %d different",
			pk.name, pk.version, len(copies), len(pk.diff.Same), len(pk.diff.Missing), len(pk.diff.Changed))
	}
	return nil
}

// check refuses changed files without Replace, before anything is written anywhere.
func (g *Target) check(pkgs []*glPackage) error {
	if g.o.Replace {
		return nil
	}
	var lines []string
	for _, pk := range pkgs {
		for _, f := range pk.diff.NeedReplace() {
			cs := pk.copies[f.Name]
			lines = append(lines, fmt.Sprintf("package %s %s: %s (GitLab has sha256 %s, the release %s)",
				pk.name, pk.version, f.Name, publish.ShortSum(cs[len(cs)-1].FileSHA256), publish.ShortSum(f.SHA256())))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return &publish.Refusal{Err: fmt.Errorf("gitlab project %s already holds different files for this version:\n  %s\nnothing was uploaded: a published version should not change under users who installed it; publish a new version, or re-run with %s to upload the new files and delete the old copies",
		g.projectName(), strings.Join(lines, "\n  "), option.Replace)}
}

// act writes one package: serially, as GitLab asks for files of one package.
func (g *Target) act(ctx context.Context, pk *glPackage) error {
	write := map[string]bool{}
	for _, f := range pk.diff.Missing {
		write[f.Name] = true
	}
	for _, f := range pk.diff.Changed {
		write[f.Name] = true
	}
	for _, f := range pk.files {
		old := pk.copies[f.Name]
		keep := int64(0)
		if write[f.Name] {
			pf, err := g.upload(ctx, pk, f, old)
			if err != nil {
				return err
			}
			keep = pf.ID
			pk.bytes += int64(len(f.Data))
			if len(old) > 0 {
				pk.replaced = append(pk.replaced, f.Name)
			} else {
				pk.uploaded = append(pk.uploaded, f.Name)
			}
		} else {
			if !g.o.Replace || len(old) < 2 {
				continue
			}
			keep = old[len(old)-1].ID
		}
		// A superseded file (an unsigned provenance, signed now) keeps no
		// older copy either: it replaces the old one without --replace.
		if !g.o.Replace && !slices.Contains(pk.diff.Superseded, f.Name) {
			continue
		}
		for _, c := range old {
			if c.ID == keep {
				continue
			}
			if err := g.deleteFile(ctx, pk, c); err != nil {
				return err
			}
			pk.removed++
		}
	}
	if len(write) > 0 || pk.removed > 0 {
		return g.verify(ctx, pk)
	}
	return nil
}

// upload puts one file. An attempt that failed may still have stored the
// file (a lost response); GitLab keeps duplicates, so before trying again
// upload looks for a copy with our bytes that was not there before.
func (g *Target) upload(ctx context.Context, pk *glPackage, f release.File, before []*gl.PackageFile) (*gl.PackageFile, error) {
	known := map[int64]bool{}
	for _, c := range before {
		known[c.ID] = true
	}
	attempt := 0
	pf, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) (*gl.PackageFile, error) {
		attempt++
		if attempt > 1 {
			copies, err := g.remoteFiles(ctx, pk)
			if err != nil {
				return nil, err
			}
			for _, c := range copies[f.Name] {
				if !known[c.ID] && c.FileSHA256 == f.SHA256() {
					g.progress("package %s %s: %s arrived despite the failed attempt, not uploading it again", pk.name, pk.version, f.Name)
					return c, nil
				}
			}
		}
		ctx, cap := withCapture(ctx)
		got, resp, err := g.c.GenericPackages.PublishPackageFile(g.pid, pk.name, pk.version, f.Name,
			publish.UploadBody(g.o.UploadProgress, pk.name+"/"+pk.version+"/"+f.Name, f.Data),
			&gl.PublishPackageFileOptions{Status: gl.Ptr(gl.PackageDefault), Select: gl.Ptr(gl.SelectPackageFile)},
			gl.WithContext(ctx))
		if err != nil {
			return nil, g.convert(resp, cap, err)
		}
		return &gl.PackageFile{ID: got.ID, PackageID: got.PackageID, FileName: got.FileName, Size: got.Size, FileSHA256: got.FileSHA256}, nil
	})
	if err != nil {
		return nil, g.hint(fmt.Errorf("gitlab: upload %s to package %s %s of project %s: %w", f.Name, pk.name, pk.version, g.projectName(), err))
	}
	if pf.FileSHA256 != "" && pf.FileSHA256 != f.SHA256() {
		return nil, fmt.Errorf("gitlab: upload %s to package %s %s of project %s: GitLab stored sha256 %s, the release has %s: re-run to upload it again",
			f.Name, pk.name, pk.version, g.projectName(), publish.ShortSum(pf.FileSHA256), publish.ShortSum(f.SHA256()))
	}
	g.progress("package %s %s: uploaded %s (%d bytes)", pk.name, pk.version, f.Name, len(f.Data))
	return pf, nil
}

func (g *Target) deleteFile(ctx context.Context, pk *glPackage, c *gl.PackageFile) error {
	err := g.retry.Do(ctx, func(ctx context.Context) error {
		ctx, cap := withCapture(ctx)
		resp, err := g.c.Packages.DeletePackageFile(g.pid, c.PackageID, c.ID, gl.WithContext(ctx))
		if errors.Is(err, gl.ErrNotFound) {
			return nil // already gone (an earlier attempt whose answer was lost)
		}
		return g.convert(resp, cap, err)
	})
	if err != nil {
		return g.hint(fmt.Errorf("gitlab: delete the older copy %d of %s in package %s %s of project %s (the new copy is already uploaded; re-run with %s to finish): %w",
			c.ID, c.FileName, pk.name, pk.version, g.projectName(), option.Flag(ctx, option.Replace), err))
	}
	return nil
}

// verify lists the package again and checks that clusterctl gets our bytes
// for every file (the newest copy), and with Replace that only one copy is left.
func (g *Target) verify(ctx context.Context, pk *glPackage) error {
	copies, err := g.remoteFiles(ctx, pk)
	if err != nil {
		return err
	}
	var bad []string
	for _, f := range pk.files {
		cs := copies[f.Name]
		switch {
		case len(cs) == 0:
			bad = append(bad, f.Name+" is missing")
		case cs[len(cs)-1].FileSHA256 != f.SHA256():
			bad = append(bad, fmt.Sprintf("%s has sha256 %s, not %s", f.Name, publish.ShortSum(cs[len(cs)-1].FileSHA256), publish.ShortSum(f.SHA256())))
		case g.o.Replace && len(cs) > 1:
			bad = append(bad, fmt.Sprintf("%s has %d copies", f.Name, len(cs)))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("gitlab package %s %s of project %s does not hold the release after the upload (%s): another job may be writing to it; re-run when it is done",
			pk.name, pk.version, g.projectName(), strings.Join(bad, "; "))
	}
	return nil
}

// remoteFiles lists every file of the generic package name/version, by
// name, oldest first. package_name is a fuzzy filter in GitLab, so names
// are compared here.
func (g *Target) remoteFiles(ctx context.Context, pk *glPackage) (map[string][]*gl.PackageFile, error) {
	what := fmt.Sprintf("gitlab: list package %s %s of project %s", pk.name, pk.version, g.projectName())
	pkgs, err := listAll(ctx, g, what, func(ctx context.Context, page gl.RequestOptionFunc) ([]*gl.Package, *gl.Response, error) {
		return g.c.Packages.ListProjectPackages(g.pid, &gl.ListProjectPackagesOptions{
			ListOptions:    gl.ListOptions{PerPage: 100},
			PackageType:    gl.Ptr("generic"),
			PackageName:    gl.Ptr(pk.name),
			PackageVersion: gl.Ptr(pk.version),
		}, gl.WithContext(ctx), page)
	})
	if err != nil {
		return nil, err
	}
	out := map[string][]*gl.PackageFile{}
	for _, p := range pkgs {
		if p.Name != pk.name || p.Version != pk.version || p.PackageType != "generic" {
			continue
		}
		files, err := listAll(ctx, g, fmt.Sprintf("%s: package files of package id %d", what, p.ID),
			func(ctx context.Context, page gl.RequestOptionFunc) ([]*gl.PackageFile, *gl.Response, error) {
				return g.c.Packages.ListPackageFiles(g.pid, p.ID, &gl.ListPackageFilesOptions{ListOptions: gl.ListOptions{PerPage: 100}},
					gl.WithContext(ctx), page)
			})
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if f.PackageID == 0 {
				f.PackageID = p.ID
			}
			out[f.FileName] = append(out[f.FileName], f)
		}
	}
	for _, cs := range out {
		// File ids grow with each upload; the highest is the copy GitLab serves.
		slices.SortFunc(cs, func(a, b *gl.PackageFile) int { return cmp.Compare(a.ID, b.ID) })
	}
	return out, nil
}

// listAll follows the pages of a list call, each page under the retry policy.
func listAll[T any](ctx context.Context, g *Target, what string, call func(context.Context, gl.RequestOptionFunc) ([]T, *gl.Response, error)) ([]T, error) {
	var (
		out  []T
		page gl.RequestOptionFunc // nil: the first page; the library skips nil options
	)
	for range 10000 {
		var resp *gl.Response
		items, err := publish.DoValue(ctx, g.retry, func(ctx context.Context) ([]T, error) {
			ctx, cap := withCapture(ctx)
			items, r, err := call(ctx, page)
			resp = r
			if err != nil {
				return nil, g.convert(r, cap, err)
			}
			return items, nil
		})
		if err != nil {
			return nil, g.hint(fmt.Errorf("%s: %w", what, err))
		}
		out = append(out, items...)
		next, ok := gl.WithNext(resp)
		if !ok {
			return out, nil
		}
		page = next
	}
	return nil, fmt.Errorf("%s: more than 10000 pages", what)
}

// APIError is a GitLab error reply: the request and GitLab's message.
type APIError struct {
	Method  string
	URL     string
	Status  int
	Message string
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.URL, e.Status, msg)
}

// convert turns the client library's error into the retry policy's terms.
// Replies become a StatusError carrying GitLab's message (the library drops
// the body of a 404); 429 and 5xx waits come from Retry-After or, failing
// that, RateLimit-Reset.
func (g *Target) convert(resp *gl.Response, cap *captured, err error) error {
	if err == nil {
		return nil
	}
	if resp == nil || resp.Response == nil || resp.StatusCode < 400 {
		return err
	}
	ae := &APIError{Status: resp.StatusCode, Message: cap.message()}
	if resp.Request != nil {
		ae.Method = resp.Request.Method
		u := *resp.Request.URL
		u.RawQuery = ""
		ae.URL = u.String()
	}
	var er *gl.ErrorResponse
	if ae.Message == "" && errors.As(err, &er) {
		ae.Message = er.Message
	}
	now := g.retry.Now()
	se := publish.StatusErrorFrom(resp.StatusCode, resp.Header, now, ae)
	if se.RetryAfter == 0 && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500) {
		// GitLab sends RateLimit-Reset as a Unix time.
		if n, perr := strconv.ParseInt(strings.TrimSpace(resp.Header.Get("RateLimit-Reset")), 10, 64); perr == nil && n > 0 {
			se.RetryAfter = publish.UntilReset(time.Unix(n, 0), now)
		}
	}
	return se
}

// hint adds what to do to the errors people can fix.
func (g *Target) hint(err error) error {
	return publish.Hint(err, func(se *publish.StatusError) string {
		switch se.Status {
		case http.StatusUnauthorized:
			return "GitLab refused the token; set GITLAB_ACCESS_TOKEN to a personal, project or group access token with the api scope, or inside GitLab CI pass " + option.GitLabTokenType.String() + " job to use CI_JOB_TOKEN"
		case http.StatusForbidden:
			if strings.Contains(strings.ToLower(se.Error()), "duplicate") {
				return "the project's group rejects duplicate generic packages, which " + option.Replace.String() + " needs; allow duplicates (Settings > Packages and registries) or delete the package version first"
			}
			return fmt.Sprintf("the token may not write packages of project %s; it needs the api scope and at least the Developer role (a job token only reaches projects that allow its project)", g.projectName())
		case http.StatusNotFound:
			return fmt.Sprintf("project %s does not exist at %s or the token cannot see it; check %s and %s", g.projectName(), g.web, option.GitLabURL, option.Project)
		}
		return ""
	})
}

func (g *Target) projectName() string {
	if id, ok := g.pid.(int64); ok {
		return strconv.FormatInt(id, 10)
	}
	return g.pid.(string)
}

// projectURL is the project's web page.
func (g *Target) projectURL() string {
	if _, ok := g.pid.(int64); ok {
		return fmt.Sprintf("%s/projects/%s", g.web, g.slug)
	}
	return g.web + "/" + g.projectName()
}

func (g *Target) packagesPage() string {
	if _, ok := g.pid.(int64); ok {
		return fmt.Sprintf("%s/projects/%s", g.web, g.slug)
	}
	return fmt.Sprintf("%s/%s/-/packages", g.web, g.projectName())
}

func (g *Target) progress(format string, args ...any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	line := fmt.Sprintf("gitlab %s: "+format+"\n", append([]any{g.projectName()}, args...)...)
	_, _ = io.WriteString(g.o.Progress, g.redactString(line))
}

// redact keeps the token out of an error's text, whatever a library put there.
func (g *Target) redact(err error) error {
	if err == nil || g.o.Token == "" || !strings.Contains(err.Error(), g.o.Token) {
		return err
	}
	return &redactedError{msg: g.redactString(err.Error()), err: err}
}

func (g *Target) redactString(s string) string {
	if g.o.Token == "" {
		return s
	}
	return strings.ReplaceAll(s, g.o.Token, "[REDACTED]")
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// captured holds the body of an error reply, read by captureErrorBodies.
type captured struct {
	mu   sync.Mutex
	body []byte
}

type captureKey struct{}

func withCapture(ctx context.Context) (context.Context, *captured) {
	c := &captured{}
	return context.WithValue(ctx, captureKey{}, c), c
}

// message returns GitLab's message from an error body ({"message": ...} or {"error": ...}).
func (c *captured) message() string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var body struct {
		Message json.RawMessage `json:"message"`
		Error   string          `json:"error"`
	}
	if err := json.Unmarshal(c.body, &body); err != nil {
		return strings.TrimSpace(string(c.body))
	}
	var s string
	if json.Unmarshal(body.Message, &s) == nil && s != "" {
		return s
	}
	if len(body.Message) > 0 && string(body.Message) != "null" {
		return string(body.Message)
	}
	return body.Error
}

// captureErrorBodies keeps a copy of every error reply's body (up to 64 KiB)
// for the request's captured holder, and hands the body on unchanged.
func captureErrorBodies(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		c, _ := req.Context().Value(captureKey{}).(*captured)
		if err != nil || c == nil || resp.StatusCode < 400 {
			return resp, err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		c.mu.Lock()
		c.body = body
		c.mu.Unlock()
		return resp, nil
	})
}

// bearerSource sends the token as Authorization: Bearer.
type bearerSource string

func (bearerSource) Init(context.Context, *gl.Client) error { return nil }

func (b bearerSource) Header(context.Context) (string, string, error) {
	return "Authorization", "Bearer " + string(b), nil
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// ParseURL reads a gitlab://HOST/GROUP/[SUBGROUP/]PROJECT target URL (rest
// is what follows gitlab://).
func ParseURL(rest string) (host, project string, err error) {
	host, project, ok := strings.Cut(strings.Trim(rest, "/"), "/")
	if !ok || host == "" || project == "" {
		return "", "", errors.New("want gitlab://HOST/GROUP/[SUBGROUP/]PROJECT")
	}
	return host, project, nil
}

// FromProviderURL recognizes clusterctl's GitLab provider URL,
// https://gitlab.HOST/api/v4/projects/SLUG/packages/generic/PACKAGE/VERSION/FILE,
// SLUG being the numeric id or the escaped path (group%2Fproject); clusterctl
// reads it only from hosts whose name starts with "gitlab.".
func FromProviderURL(u *url.URL) (host, project, pkg, version, components string, ok bool, err error) {
	esc := strings.Split(strings.Trim(u.EscapedPath(), "/"), "/")
	if u.Scheme != "https" || !strings.HasPrefix(u.Host, "gitlab.") || len(esc) != 9 || esc[0] != "api" || esc[1] != "v4" ||
		esc[2] != "projects" || esc[4] != "packages" || esc[5] != "generic" {
		return "", "", "", "", "", false, nil
	}
	parts := make([]string, 0, 4)
	for _, i := range []int{3, 6, 7, 8} {
		p, err := url.PathUnescape(esc[i])
		if err != nil {
			return "", "", "", "", "", false, fmt.Errorf("provider URL %q: %w", u, err)
		}
		parts = append(parts, p)
	}
	return u.Host, parts[0], parts[1], parts[2], parts[3], true, nil
}

// Clusterctl says how clusterctl reads the packages: by their package URLs,
// from https hosts whose name starts with "gitlab." serving GitLab at the
// root (cmd/clusterctl/client/repository/client.go).
func (g *Target) Clusterctl() publish.Reach {
	u, _ := url.Parse(g.web)
	host := u.Hostname()
	switch {
	case !strings.HasPrefix(host, "gitlab."):
		return publish.Reach{Why: fmt.Sprintf("clusterctl reads GitLab packages only from hosts whose name starts with \"gitlab.\" (%s does not); serve GitLab under a gitlab.* name (a DNS alias is enough)", host)}
	case u.Scheme != "https":
		return publish.Reach{Why: fmt.Sprintf("clusterctl reads GitLab packages only from https:// URLs, not %s", g.web)}
	case u.Path != "":
		return publish.Reach{Why: fmt.Sprintf("clusterctl expects GitLab at the root of %s, not under %s", host, u.Path)}
	}
	return publish.Reach{ProviderURL: func(ref publish.Ref) string {
		components := ref.Components
		if components == "" {
			components = ref.ID.DefaultComponentsFile()
		}
		return PackageURL(g.host, g.projectName(), g.packageName(ref.ID), ref.Version, components)
	}}
}
