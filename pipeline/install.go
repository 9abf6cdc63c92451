package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"

	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
)

// InstallCheckOptions say where the install check applies a release (see
// install.Check).
type InstallCheckOptions struct {
	// Kubeconfig is the kubeconfig file of the API server (its current
	// context); only this file is read.
	Kubeconfig string
	// DryRunOnly creates nothing; Force runs on a cluster that already has
	// the release's CRDs (replaced for the check, put back after).
	DryRunOnly, Force bool
	// ClusterctlConfig is the clusterctl config whose cert-manager: entry
	// says which cert-manager clusterctl installs and from where; "" is
	// clusterctl's default config.
	ClusterctlConfig string
	// Sources open the repository cert-manager's URL points into (as
	// mirror's sources do): the GitHub API base, tokens, the HTTP client.
	Sources targets.Options
	// KubernetesVersion and Variables are as for install.Options.
	KubernetesVersion string
	Variables         map[string]string
	// Log hears what the check creates and removes; nil discards it.
	Log io.Writer
}

// InstallCheck applies rel to the API server of the kubeconfig with
// install.Check, taking cert-manager's CRDs, when the cluster lacks them,
// from cert-manager's release at the version clusterctl installs, read
// from where the clusterctl config says, as mirror reads it.
func InstallCheck(ctx context.Context, rel *release.Release, o InstallCheckOptions) (*install.Report, error) {
	if o.Kubeconfig == "" {
		return nil, errors.New("install check: no kubeconfig given")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("install check: kubeconfig %s: %w", o.Kubeconfig, err)
	}
	return install.Check(ctx, rel, install.Options{
		Config:     cfg,
		DryRunOnly: o.DryRunOnly,
		Force:      o.Force,
		CertManager: func(ctx context.Context) (*release.Provider, error) {
			return clusterctlCertManager(ctx, o.ClusterctlConfig, o.Sources)
		},
		KubernetesVersion: o.KubernetesVersion,
		Variables:         o.Variables,
		Log:               o.Log,
	})
}

// clusterctlCertManager reads the cert-manager release clusterctl would
// install with the config at path.
func clusterctlCertManager(ctx context.Context, path string, sources targets.Options) (*release.Provider, error) {
	cfg, err := config.New(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("read clusterctl config %s: %w", path, err)
	}
	cm, err := cfg.CertManager().Get()
	if err != nil {
		return nil, err
	}
	if cm.ExternallyProvisioned() {
		return nil, errors.New("the clusterctl config says cert-manager is provisioned outside clusterctl: install its CRDs in the cluster first")
	}
	loc, _, file, err := targets.ParseProviderURL(cm.URL())
	if err != nil {
		return nil, fmt.Errorf("cert-manager URL %s: %w", cm.URL(), err)
	}
	src, err := loc.Open(ctx, sources)
	if err != nil {
		return nil, fmt.Errorf("cert-manager URL %s: %w", cm.URL(), err)
	}
	return certManagerRelease(ctx, src, cm.Version(), file)
}

// certManagerRelease reads cert-manager's manifest file at version from
// src: the one file clusterctl reads of cert-manager's release.
func certManagerRelease(ctx context.Context, src publish.Source, version, file string) (*release.Provider, error) {
	files, err := publish.ReadFiles(ctx, src, publish.Ref{ID: provider.CertManager, Version: version}, file)
	if err != nil {
		return nil, err
	}
	return &release.Provider{ID: provider.CertManager, Version: version, ComponentsFile: file, Files: files, NoChecksums: true}, nil
}

// installCheck is release's install check step: the built release applied
// to the API server before anything is published.
func (r *run) installCheck(ctx context.Context) (string, bool, error) {
	o := *r.o.InstallCheck
	if o.Log == nil {
		o.Log = r.o.Log
	}
	rep, err := InstallCheck(ctx, r.b.Result.Release, o)
	if rep != nil {
		_ = rep.WriteText(r.o.Log)
	}
	if err != nil {
		return "", false, err
	}
	d := fmt.Sprintf("%d objects accepted by %s", rep.Accepted(), rep.Server)
	if o.DryRunOnly {
		d += " (dry-run only)"
	}
	if n := rep.NotCheckedCount(); n > 0 {
		d += fmt.Sprintf("; %d not checked", n)
	}
	return d, false, nil
}
