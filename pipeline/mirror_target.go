package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/publish/local"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
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
	GitLabTokenType gitlab.TokenType
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
		t := &local.Target{Root: root, Replace: o.Replace}
		return MirrorSink{Providers: t, CertManager: t, Reader: t,
			ProviderURL: func(id provider.ID, version, components string) string {
				return local.FileURL(filepath.Join(root, id.Label(), version, components))
			}}, nil
	case GitLab:
		if o.GitLabToken == "" {
			return MirrorSink{}, errors.New("gitlab target: set GITLAB_ACCESS_TOKEN (or CI_JOB_TOKEN with --gitlab-token-type job)")
		}
		opts := gitlab.Options{URL: t.GitLabURL(o.GitLabURL), Project: t.Project, Replace: o.Replace,
			Token: o.GitLabToken, TokenType: o.GitLabTokenType, HTTPClient: o.HTTPClient, Retry: o.Retry, Progress: o.Progress,
			UploadProgress: o.UploadProgress}
		p, err := gitlab.New(opts)
		if err != nil {
			return MirrorSink{}, err
		}
		r, err := gitlab.New(opts)
		if err != nil {
			return MirrorSink{}, err
		}
		opts.Package = provider.CertManager.Name
		cm, err := gitlab.New(opts)
		if err != nil {
			return MirrorSink{}, err
		}
		host := t.Host
		if u, err := url.Parse(opts.URL); err == nil && u.Host != "" {
			host = u.Host
		}
		return MirrorSink{Providers: p, CertManager: cm, Reader: r,
			ProviderURL: func(id provider.ID, version, components string) string {
				return gitlab.PackageURL(host, t.Project, id.Label(), version, components)
			}}, nil
	case OCI:
		if NewOCISink == nil {
			return MirrorSink{}, fmt.Errorf("%s: this build of capirepo cannot write OCI registries", t.Raw)
		}
		return NewOCISink(ctx, t, o)
	}
	return MirrorSink{}, fmt.Errorf("%s: unknown mirror target", t.Raw)
}
