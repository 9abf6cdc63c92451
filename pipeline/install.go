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
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/values"
)

// Clusterctl is the user's clusterctl config as clusterctl itself reads it
// (the file, else its default in the user's folders; the environment's
// variables before the file's), opened by the caller: reading it is
// reading the user's environment, which the caller does.
type Clusterctl struct {
	// File names the config in messages; "" is clusterctl's default.
	File string
	// Config is the config opened (clusterctl's config.New).
	Config config.Client
}

// InstallCheckOptions say where the install check applies a release (see
// install.Check).
type InstallCheckOptions struct {
	// Kubeconfig is the kubeconfig file of the API server (its current
	// context); only this file is read.
	Kubeconfig string
	// DryRunOnly creates nothing; Force runs on a cluster that already has
	// the release's CRDs (replaced for the check, put back after).
	DryRunOnly, Force bool
	// Clusterctl is the user's clusterctl config: its cert-manager: entry
	// says which cert-manager clusterctl installs and from where, and its
	// variables client (the environment's, then the file's) gives real
	// values. Without one, only Variables and ValuesFiles are real values
	// and cert-manager's CRDs must be in the cluster.
	Clusterctl Clusterctl
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
		return fmt.Errorf("install check: %s %s: %w", option.Flag(ctx, option.Core), o.Core, err)
	}
	for _, p := range core.Providers {
		if slices.Contains(baseTypes, p.ID.Type) {
			o.base = append(o.base, p)
		}
	}
	if len(o.base) == 0 {
		return fmt.Errorf("install check: %s %s holds no core, bootstrap or control plane provider", option.Flag(ctx, option.Core), o.Core)
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
			return CertManager(ctx, o.Clusterctl, o.Sources)
		},
		KubernetesVersion: o.KubernetesVersion,
		Variables:         o.Variables,
		Log:               o.Log,
	})
}

// reals are the real values of the options, for the install check and the
// upgrade rehearsal alike: Variables over the values files (read by
// values.ReadFiles) and, with a Clusterctl config, clusterctl's own
// variables client (the environment, then the config file's variables).
func (o InstallCheckOptions) reals(context.Context) (values.Real, error) {
	reals, err := values.ReadFiles(o.Variables, o.ValuesFiles)
	if cc := o.Clusterctl.Config; err == nil && cc != nil {
		reals.Lookup = func(name string) (string, bool) {
			v, err := cc.Variables().Get(name)
			return v, err == nil
		}
	}
	return reals, err
}

// CertManager reads the cert-manager release clusterctl would install with
// the clusterctl config cc, from where that config says (its cert-manager:
// url:, else GitHub): what the install check takes cert-manager's CRDs from
// when the cluster has none. When it cannot be fetched (a scratch cluster
// without internet), the error says what it was fetching and the ways on.
func CertManager(ctx context.Context, cc Clusterctl, sources targets.Options) (*release.Provider, error) {
	if cc.Config == nil {
		return nil, errors.New("no clusterctl config to say which cert-manager clusterctl installs: install its CRDs in the cluster first")
	}
	cm, err := cc.Config.CertManager().Get()
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
	p, err := publish.ReadCertManager(ctx, src, cm.Version(), file)
	if err != nil {
		where := cmp.Or(loc.Source, cm.URL())
		return nil, certManagerFetchError(ctx, file, cm.Version(), where, cc.File, err)
	}
	return p, nil
}

// certManagerFetchError says what the install check was fetching, why it
// needs it and the three ways on without a network.
func certManagerFetchError(ctx context.Context, file, version, where, config string, err error) error {
	from := "clusterctl's default config"
	if config != "" {
		from = config
	}
	return fmt.Errorf("fetching cert-manager's CRDs (%s of cert-manager %s from %s, as %s says clusterctl installs it): %w\n"+
		"the cluster has no cert-manager CRDs and the release uses cert-manager's kinds, so the install check creates them from cert-manager's release; without internet, any of:\n"+
		"  - install cert-manager's CRDs in the cluster first (kubectl apply -f cert-manager.crds.yaml, from cert-manager's release): the check then takes the cluster's\n"+
		"  - %s FILE whose cert-manager: url: names a copy the machine can read, such as a capirepo mirror folder (capirepo mirror ... --to file:///DIR --config-out FILE writes both)\n"+
		"  - %s: nothing is created; objects of kinds the cluster does not serve are listed as not checked",
		file, version, where, from, err, option.Flag(ctx, option.ClusterctlConfig), option.Flag(ctx, option.DryRunOnly))
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
