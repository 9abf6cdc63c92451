// Package targets turns a URL into a publish.Target: capirepo's target URLs
// (github://OWNER/NAME, gitlab://HOST/PROJECT, file://DIR,
// oci://REGISTRY/PATH) and the provider URLs of a clusterctl config (a
// GitHub release, a GitLab package, a local repository folder) alike. It is
// the one place that knows which backend serves which URL, as clusterctl's
// repositoryFactory, GoReleaser's client.New and ko's makePublisher are.
//
// Parse checks a URL without any network call or credential, so a command
// refuses a mistyped target first; Open makes the target, reading the
// credentials it needs through Options.Getenv. What clusterctl makes of a
// target is the target's own answer (publish.Target.Clusterctl).
package targets

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/publish/local"
	"github.com/capirepo/capirepo/publish/oci"
)

// Options are what opening a target takes besides its URL. The fields of a
// backend a URL does not name are ignored.
type Options struct {
	// Publish opens the target to publish: credentials are required.
	// Without it (reading) they are used when set.
	Publish bool
	// Replace lets published files that differ be replaced.
	Replace bool
	// Getenv reads the credentials (GITHUB_TOKEN, GITLAB_ACCESS_TOKEN or
	// CI_JOB_TOKEN, OCI_USERNAME/OCI_PASSWORD/OCI_ACCESS_TOKEN/
	// OCI_REFRESH_TOKEN); nil reads none.
	Getenv func(string) string
	// HTTPClient makes every HTTP request (bounded waits, see
	// publish.NewHTTPClient); nil means the backend's default.
	HTTPClient *http.Client
	// Retry is the retry policy; nil means publish.DefaultRetry.
	Retry *publish.Retry
	// Progress receives one line per step; nil discards it.
	Progress io.Writer
	// UploadProgress follows the bytes of every upload.
	UploadProgress publish.UploadProgress
	// LockTimeout bounds the wait for another run writing into a folder.
	LockTimeout time.Duration
	// Overrides says a file:// URL names clusterctl's overrides folder
	// (publish local --overrides), not a repository tree.
	Overrides bool

	// GitHub, GitLab and OCI hold each backend's own settings (release
	// notes, the GitLab instance, the artifact layout, ...); the factory
	// fills in what the URL and the fields above say.
	GitHub github.Options
	GitLab gitlab.Options
	OCI    oci.Options
}

func (o Options) getenv(k string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(k)
}

// Opener makes the target a Location names.
type Opener func(ctx context.Context, o Options) (publish.Target, error)

// Location is a target URL, checked but not opened.
type Location struct {
	// URL is the URL as given.
	URL string
	// Scheme is the backend's scheme: github, gitlab, file, oci.
	Scheme string
	// Key names the repository behind the URL: the provider URLs of one
	// key are read through one target (cluster-api's three providers share
	// one GitHub repository).
	Key string
	// Source is the web URL of the source repository the target belongs
	// to (a GitHub repository), for provenance; "" when it names none.
	Source string
	// Opener makes the target.
	Opener Opener
}

func (l Location) String() string { return l.URL }

// Open makes the target.
func (l Location) Open(ctx context.Context, o Options) (publish.Target, error) {
	t, err := l.Opener(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.URL, err)
	}
	return t, nil
}

// Backend is one kind of target.
type Backend struct {
	// Scheme is the scheme of its target URLs (github for github://OWNER/NAME).
	Scheme string
	// Form is the form of its target URLs, for messages.
	Form string
	// Parse checks what follows scheme:// in a target URL and returns the
	// location without Scheme and URL, which the factory fills in. An
	// error says what form is wanted.
	Parse func(rest string) (Location, error)
	// FromProviderURL recognizes a clusterctl provider URL of this backend
	// and returns the location of its repository, the version it names
	// (a version, or latest) and the components file; ok is false for a
	// URL of another backend. Nil when clusterctl has no such URL.
	FromProviderURL func(u *url.URL) (loc Location, version, components string, ok bool, err error)
}

var (
	mu       sync.Mutex
	backends = []Backend{
		{Scheme: "github", Form: "github://OWNER/NAME", Parse: parseGitHub, FromProviderURL: githubProviderURL},
		{Scheme: "gitlab", Form: "gitlab://HOST/PROJECT", Parse: parseGitLab, FromProviderURL: gitlabProviderURL},
		{Scheme: "file", Form: "file://DIR", Parse: parseFile, FromProviderURL: fileProviderURL},
		{Scheme: "oci", Form: "oci://REGISTRY/PATH", Parse: parseOCI},
	}
)

// Register adds a backend (a test's, or one built into another program);
// the returned function removes it again. A scheme is served once.
func Register(b Backend) (unregister func()) {
	mu.Lock()
	defer mu.Unlock()
	if slices.ContainsFunc(backends, func(o Backend) bool { return o.Scheme == b.Scheme }) {
		panic("targets: scheme " + b.Scheme + " registered twice")
	}
	backends = append(backends, b)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		backends = slices.DeleteFunc(backends, func(o Backend) bool { return o.Scheme == b.Scheme })
	}
}

func registered() []Backend {
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(backends)
}

// Parse checks a target URL. The error quotes the URL and says what form
// was wanted; it is a publish.UsageError.
func Parse(raw string) (Location, error) {
	bs := registered()
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		forms := make([]string, len(bs))
		for i, b := range bs {
			forms[i] = b.Form
		}
		return Location{}, publish.Usagef("%q: want %s", raw, orList(forms))
	}
	i := slices.IndexFunc(bs, func(b Backend) bool { return b.Scheme == scheme })
	if i < 0 {
		schemes := make([]string, len(bs))
		for i, b := range bs {
			schemes[i] = b.Scheme
		}
		return Location{}, publish.Usagef("%q: unknown scheme %q (%s)", raw, scheme, orList(schemes))
	}
	loc, err := bs[i].Parse(rest)
	if err != nil {
		return Location{}, publish.Usagef("%q: %v", raw, err)
	}
	loc.URL, loc.Scheme = raw, scheme
	if loc.Key == "" {
		loc.Key = raw
	}
	return loc, nil
}

// Open parses a target URL and makes the target.
func Open(ctx context.Context, raw string, o Options) (publish.Target, error) {
	loc, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	return loc.Open(ctx, o)
}

// ParseProviderURL reads a provider URL of a clusterctl config: the
// location of the repository it points into, and the version (a version,
// or latest) and the components file it names.
func ParseProviderURL(raw string) (loc Location, version, components string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Location{}, "", "", fmt.Errorf("provider URL %q: %w", raw, err)
	}
	for _, b := range registered() {
		if b.FromProviderURL == nil {
			continue
		}
		loc, version, components, ok, err := b.FromProviderURL(u)
		if err != nil {
			return Location{}, "", "", err
		}
		if ok {
			loc.URL, loc.Scheme = raw, b.Scheme
			return loc, version, components, nil
		}
	}
	return Location{}, "", "", fmt.Errorf("provider URL %s: capirepo reads GitHub releases (https://github.com/OWNER/REPO/releases/...), GitLab packages and file:// folders", raw)
}

func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// requireToken returns the value of the first of vars that is set; when
// none is and the target is opened to publish, a UsageError naming them.
func requireToken(o Options, what string, vars ...string) (string, error) {
	for _, v := range vars {
		if t := o.getenv(v); t != "" {
			return t, nil
		}
	}
	if o.Publish {
		return "", publish.Usagef("set %s %s", strings.Join(vars, " or "), what)
	}
	return "", nil
}

func parseGitHub(rest string) (Location, error) {
	owner, repo, err := github.ParseURL(rest)
	if err != nil {
		return Location{}, err
	}
	return githubLocation(owner, repo), nil
}

func githubLocation(owner, repo string) Location {
	return Location{Key: "github://" + owner + "/" + repo, Source: "https://github.com/" + owner + "/" + repo,
		Opener: func(_ context.Context, o Options) (publish.Target, error) {
			g := o.GitHub
			g.Owner, g.Repo = owner, repo
			g.Replace = g.Replace || o.Replace
			g.HTTPClient, g.Retry, g.Progress, g.UploadProgress = o.HTTPClient, o.Retry, o.Progress, o.UploadProgress
			if g.Token == "" {
				var err error
				if g.Token, err = requireToken(o, "to a token that may write releases of "+owner+"/"+repo, "GITHUB_TOKEN"); err != nil {
					return nil, err
				}
			}
			t, err := github.New(g)
			if err != nil {
				return nil, publish.UsageError{Err: err}
			}
			return t, nil
		}}
}

func githubProviderURL(u *url.URL) (Location, string, string, bool, error) {
	owner, repo, version, components, ok := github.FromProviderURL(u)
	if !ok {
		return Location{}, "", "", false, nil
	}
	return githubLocation(owner, repo), version, components, true, nil
}

func parseGitLab(rest string) (Location, error) {
	host, project, err := gitlab.ParseURL(rest)
	if err != nil {
		return Location{}, err
	}
	return gitlabLocation(host, project, ""), nil
}

func gitlabLocation(host, project, pkg string) Location {
	return Location{Key: "gitlab://" + host + "/" + project + "#" + pkg,
		Opener: func(ctx context.Context, o Options) (publish.Target, error) {
			g := o.GitLab
			if g.URL == "" {
				g.URL = "https://" + host
			}
			g.Project = project
			if pkg != "" {
				g.Package = pkg
			}
			g.Replace = g.Replace || o.Replace
			g.HTTPClient, g.Retry, g.Progress, g.UploadProgress = o.HTTPClient, o.Retry, o.Progress, o.UploadProgress
			if g.Token == "" {
				var err error
				if g.TokenType == gitlab.JobToken {
					g.Token, err = requireToken(o, "(GitLab CI sets it in a job)", "CI_JOB_TOKEN")
				} else {
					g.Token, err = requireToken(o, "(or use "+option.Flag(ctx, option.GitLabTokenType)+" job with CI_JOB_TOKEN)", "GITLAB_ACCESS_TOKEN")
				}
				if err != nil {
					return nil, err
				}
			}
			t, err := gitlab.New(g)
			if err != nil {
				return nil, publish.UsageError{Err: err}
			}
			return t, nil
		}}
}

func gitlabProviderURL(u *url.URL) (Location, string, string, bool, error) {
	host, project, pkg, version, components, ok, err := gitlab.FromProviderURL(u)
	if !ok || err != nil {
		return Location{}, "", "", ok, err
	}
	return gitlabLocation(host, project, pkg), version, components, true, nil
}

func parseFile(rest string) (Location, error) {
	dir, err := local.ParseURL(rest)
	if err != nil {
		return Location{}, err
	}
	return fileLocation(dir), nil
}

func fileLocation(dir string) Location {
	return Location{Key: "file://" + dir, Opener: func(_ context.Context, o Options) (publish.Target, error) {
		t := &local.Target{Root: dir, Replace: o.Replace, LockTimeout: o.LockTimeout, Progress: o.Progress}
		if o.Overrides {
			t.Kind = local.KindOverrides
		}
		return t, nil
	}}
}

func fileProviderURL(u *url.URL) (Location, string, string, bool, error) {
	root, version, components, ok := local.FromProviderURL(u)
	if !ok {
		return Location{}, "", "", false, nil
	}
	return fileLocation(root), version, components, true, nil
}

func parseOCI(rest string) (Location, error) {
	repo, err := oci.ParseURL(rest)
	if err != nil {
		return Location{}, err
	}
	return Location{Key: "oci://" + repo, Opener: func(_ context.Context, o Options) (publish.Target, error) {
		c := o.OCI
		c.Repository = repo
		c.Replace = c.Replace || o.Replace
		c.Retry, c.Progress = o.Retry, o.Progress
		if c.Transport == nil && o.HTTPClient != nil {
			c.Transport = o.HTTPClient.Transport
		}
		if c.Keychain == nil {
			c.Keychain, c.Secrets = oci.KeychainFromEnv(o.getenv)
		}
		t, err := oci.New(c)
		if err != nil {
			return nil, publish.UsageError{Err: err}
		}
		return t, nil
	}}, nil
}
