package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"k8s.io/client-go/tools/clientcmd"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"

	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/values"
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
	// KubernetesVersion and Variables (--var NAME=VALUE) are as for
	// install.Options.
	KubernetesVersion string
	Variables         map[string]string
	// ValuesFiles are files of real values, each a YAML map of variable
	// names to values (as a clusterctl config holds them), as FILE (every
	// flavor) or FLAVOR=FILE (that flavor's template; "default" is
	// cluster-template.yaml). Variables win over them; a flavor's file wins
	// over a file for every flavor.
	ValuesFiles []string
	// NoLookup leaves out the values clusterctl would find in the
	// environment and the clusterctl config: only Variables and
	// ValuesFiles are real values then.
	NoLookup bool
	// Core is the release whose core Cluster API, kubeadm bootstrap and
	// control plane providers a management cluster runs (--core): a folder,
	// or a target URL with @VERSION. The install check creates their CRDs
	// first, so the release's objects are judged against them; the upgrade
	// rehearsal installs them with clusterctl init. nil: the check takes
	// them from the folder it is given, when it holds them (verify), and the
	// rehearsal needs none for core's own releases.
	Core *Side
	// Log hears what the check creates and removes; nil discards it.
	Log io.Writer

	// base are the providers whose CRDs the check creates first, read
	// once from Core (or the folder) for every release it checks.
	base []*release.Provider
}

// baseTypes are the provider types whose CRDs a management cluster holds
// before a release is installed: what the install check judges a
// release's objects against.
var baseTypes = []clusterctlv1.ProviderType{clusterctlv1.CoreProviderType, clusterctlv1.BootstrapProviderType, clusterctlv1.ControlPlaneProviderType}

// readBase reads Core once for the checks to come: its core, bootstrap and
// control plane providers.
func (o *InstallCheckOptions) readBase(ctx context.Context) error {
	if o.Core == nil || o.base != nil {
		return nil
	}
	rd := &reader{o: readOptions(o.Sources), log: o.Log}
	core, err := rd.readCore(ctx, *o.Core)
	if err != nil {
		return fmt.Errorf("install check: --core %s: %w", o.Core, err)
	}
	for _, p := range core.Providers {
		if slices.Contains(baseTypes, p.ID.Type) {
			o.base = append(o.base, p)
		}
	}
	if len(o.base) == 0 {
		return fmt.Errorf("install check: --core %s holds no core, bootstrap or control plane provider", o.Core)
	}
	return nil
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
	reals, err := o.reals(ctx)
	if err != nil {
		return nil, fmt.Errorf("install check: %w", err)
	}
	if err := o.readBase(ctx); err != nil {
		return nil, err
	}
	return install.Check(ctx, rel, install.Options{
		Base:       o.base,
		Config:     cfg,
		Values:     reals,
		DryRunOnly: o.DryRunOnly,
		Force:      o.Force,
		CertManager: func(ctx context.Context) (*release.Provider, error) {
			return CertManager(ctx, o.ClusterctlConfig, o.Sources)
		},
		KubernetesVersion: o.KubernetesVersion,
		Variables:         o.Variables,
		Log:               o.Log,
	})
}

// reals are the real values of the options, for the install check and the
// upgrade rehearsal alike: Variables over the values files (read by
// values.ReadFiles) and, unless NoLookup, clusterctl's own variables client
// on ClusterctlConfig (the environment, then the config file's variables).
func (o InstallCheckOptions) reals(ctx context.Context) (values.Real, error) {
	reals, err := values.ReadFiles(o.Variables, o.ValuesFiles)
	if err != nil || o.NoLookup {
		return reals, err
	}
	cc, err := config.New(ctx, o.ClusterctlConfig)
	if err != nil {
		return values.Real{}, fmt.Errorf("read clusterctl config %s: %w", o.ClusterctlConfig, err)
	}
	reals.Lookup = func(name string) (string, bool) {
		v, err := cc.Variables().Get(name)
		return v, err == nil
	}
	return reals, nil
}

// CertManager reads the cert-manager release clusterctl would install with
// the clusterctl config at path ("": clusterctl's own), from where that
// config says (its cert-manager: url:, else GitHub): what the install check
// takes cert-manager's CRDs from when the cluster has none. When it cannot
// be fetched (a scratch cluster without internet), the error says what it
// was fetching and the ways on.
func CertManager(ctx context.Context, path string, sources targets.Options) (*release.Provider, error) {
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
	p, err := certManagerRelease(ctx, src, cm.Version(), file)
	if err != nil {
		where := cmp.Or(loc.Source, cm.URL())
		return nil, certManagerFetchError(file, cm.Version(), where, path, err)
	}
	return p, nil
}

// certManagerFetchError says what the install check was fetching, why it
// needs it and the three ways on without a network.
func certManagerFetchError(file, version, where, config string, err error) error {
	from := "clusterctl's default config"
	if config != "" {
		from = config
	}
	return fmt.Errorf("fetching cert-manager's CRDs (%s of cert-manager %s from %s, as %s says clusterctl installs it): %w\n"+
		"the cluster has no cert-manager CRDs and the release uses cert-manager's kinds, so the install check creates them from cert-manager's release; without internet, any of:\n"+
		"  - install cert-manager's CRDs in the cluster first (kubectl apply -f cert-manager.crds.yaml, from cert-manager's release): the check then takes the cluster's\n"+
		"  - --clusterctl-config FILE whose cert-manager: url: names a copy the machine can read, such as a capirepo mirror folder (capirepo mirror ... --to file:///DIR --config-out FILE writes both)\n"+
		"  - --dry-run-only: nothing is created; objects of kinds the cluster does not serve are listed as not checked",
		file, version, where, from, err)
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
		r.sum.Install = rep
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
