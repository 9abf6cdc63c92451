package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/capirepo/capirepo/localrepo"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// MirrorTarget is where mirror writes: file://DIR, gitlab://HOST/PROJECT or
// oci://REGISTRY/PATH.
type MirrorTarget struct {
	Target
	// Ref is REGISTRY/PATH of an oci:// target.
	Ref string
}

// ParseMirrorTarget reads a mirror target. A gitlab:// target whose host
// does not start with "gitlab." is refused here, before anything is read or
// copied: clusterctl reads GitLab only from such hosts
// (cmd/clusterctl/client/repository/client.go), so the mirror would be of no use.
func ParseMirrorTarget(s string) (MirrorTarget, error) {
	if rest, ok := strings.CutPrefix(s, "oci://"); ok {
		ref := strings.Trim(rest, "/")
		if reg, path, ok := strings.Cut(ref, "/"); !ok || reg == "" || path == "" {
			return MirrorTarget{}, fmt.Errorf("%q: want oci://REGISTRY/PATH", s)
		}
		return MirrorTarget{Target: Target{Raw: s, Kind: OCI}, Ref: ref}, nil
	}
	t, err := ParseTarget(s)
	if err != nil {
		return MirrorTarget{}, fmt.Errorf("%w (mirror also takes oci://REGISTRY/PATH)", err)
	}
	switch t.Kind {
	case GitHub:
		return MirrorTarget{}, fmt.Errorf("%q: mirror writes to file://DIR, gitlab://HOST/PROJECT or oci://REGISTRY/PATH, not to GitHub", s)
	case GitLab:
		host := t.Host
		if h, _, ok := strings.Cut(host, ":"); ok {
			host = h
		}
		if !strings.HasPrefix(host, "gitlab.") {
			return MirrorTarget{}, fmt.Errorf("%q: clusterctl reads GitLab packages only from hosts whose name starts with \"gitlab.\" (%s does not), so it could not install from this mirror; serve GitLab under a gitlab.* name (a DNS alias is enough)", s, t.Host)
		}
	}
	return MirrorTarget{Target: t}, nil
}

// MirrorSink writes to one target: the providers, and cert-manager's
// manifest as clusterctl's cert-manager config points at it.
type MirrorSink struct {
	Providers publish.Publisher
	// CertManager publishes a release holding one provider, cert-manager
	// (ID name cert-manager, no type); nil when the target cannot hold it.
	CertManager publish.Publisher
	// Reader lists what the target holds, so versions already there are
	// not downloaded again; nil means every version is read and compared
	// by the publisher. ProviderURL is the URL clusterctl reads a provider
	// version from at the target; Reader is used only with it.
	Reader      publish.Source
	ProviderURL func(id provider.ID, version, componentsFile string) string
}

// SinkOptions are what a sink needs besides the target.
type SinkOptions struct {
	Replace bool
	// GitLabURL overrides https://HOST for gitlab:// targets (tests).
	GitLabURL       string
	GitLabToken     string
	GitLabTokenType publish.GitLabTokenType
	HTTPClient      *http.Client
	Retry           *publish.Retry
	Progress        io.Writer
	// UploadProgress follows the bytes of uploads to a gitlab:// target.
	UploadProgress publish.UploadProgress
}

// NewOCISink makes the sink of an oci:// target. It is set by the package
// that publishes to OCI registries (wired in cmd/); nil means this build
// cannot write oci:// targets.
var NewOCISink func(ctx context.Context, t MirrorTarget, o SinkOptions) (MirrorSink, error)

// NewMirrorSink makes the sink of a target.
func NewMirrorSink(ctx context.Context, t MirrorTarget, o SinkOptions) (MirrorSink, error) {
	switch t.Kind {
	case File:
		root, err := filepath.Abs(t.Dir)
		if err != nil {
			return MirrorSink{}, err
		}
		return MirrorSink{Providers: &localrepo.Publisher{Root: root, Replace: o.Replace},
			CertManager: &certManagerDir{root: root, replace: o.Replace},
			Reader:      &localrepo.Reader{Root: root},
			ProviderURL: func(id provider.ID, version, components string) string {
				return localrepo.FileURL(filepath.Join(root, id.Label(), version, components))
			}}, nil
	case GitLab:
		if o.GitLabToken == "" {
			return MirrorSink{}, errors.New("gitlab target: set GITLAB_ACCESS_TOKEN (or CI_JOB_TOKEN with --gitlab-token-type job)")
		}
		opts := publish.GitLabOptions{URL: t.GitLabURL(o.GitLabURL), Project: t.Project, Replace: o.Replace,
			Token: o.GitLabToken, TokenType: o.GitLabTokenType, HTTPClient: o.HTTPClient, Retry: o.Retry, Progress: o.Progress,
			UploadProgress: o.UploadProgress}
		p, err := publish.NewGitLab(opts)
		if err != nil {
			return MirrorSink{}, err
		}
		r, err := publish.NewGitLabReader(opts)
		if err != nil {
			return MirrorSink{}, err
		}
		opts.Package = CertManagerName
		cm, err := publish.NewGitLab(opts)
		if err != nil {
			return MirrorSink{}, err
		}
		host := t.Host
		if u, err := url.Parse(opts.URL); err == nil && u.Host != "" {
			host = u.Host
		}
		return MirrorSink{Providers: p, CertManager: cm, Reader: r,
			ProviderURL: func(id provider.ID, version, components string) string {
				return publish.GitLabProviderURL(host, t.Project, id.Label(), version, components)
			}}, nil
	case OCI:
		if NewOCISink == nil {
			return MirrorSink{}, fmt.Errorf("%s: this build of capirepo cannot write OCI registries", t.Raw)
		}
		return NewOCISink(ctx, t, o)
	}
	return MirrorSink{}, fmt.Errorf("%s: unknown mirror target", t.Raw)
}

// certManagerDir writes cert-manager's manifest into ROOT/cert-manager/VERSION/,
// the layout clusterctl's local repository reads for cert-manager's URL
// (its fake provider has no type, so the folder is its bare name).
type certManagerDir struct {
	root    string
	replace bool
}

func (c *certManagerDir) Publish(ctx context.Context, rel *release.Release) (*publish.Summary, error) {
	p := rel.Providers[0]
	dir := filepath.Join(c.root, CertManagerName, p.Version)
	sum := &publish.Summary{Target: "local", URL: localrepo.FileURL(dir), Version: p.Version,
		Uploaded: []string{}, Skipped: []string{}, Replaced: []string{},
		Providers: []publish.ProviderURL{{Name: CertManagerName, URL: localrepo.FileURL(filepath.Join(dir, p.ComponentsFile))}}}
	var changed []string
	for _, f := range p.Files {
		have, err := os.ReadFile(filepath.Join(dir, f.Name))
		switch {
		case errors.Is(err, os.ErrNotExist):
			sum.Uploaded = append(sum.Uploaded, f.Name)
		case err != nil:
			return nil, err
		case string(have) == string(f.Data):
			sum.Skipped = append(sum.Skipped, f.Name)
		default:
			changed = append(changed, f.Name)
		}
	}
	if len(changed) > 0 && !c.replace {
		return nil, &localrepo.ConflictError{Dir: dir, Changed: changed}
	}
	sum.Replaced = changed
	if len(sum.Uploaded)+len(changed) == 0 {
		return sum, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	staged, err := release.StageDir(filepath.Dir(dir), p.Version, p.Files)
	if err != nil {
		return nil, err
	}
	if err := release.ReplaceDir(staged, dir); err != nil {
		_ = os.RemoveAll(staged)
		return nil, err
	}
	for _, f := range p.Files {
		sum.BytesUploaded += int64(len(f.Data))
	}
	return sum, nil
}
