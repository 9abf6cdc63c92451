package pipeline

import (
	"context"
	"fmt"

	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/rehearse"
	"github.com/capirepo/capirepo/release"
)

// RehearseOptions say where the upgrade rehearsal runs (rehearse.Rehearse)
// and what it installs besides the two releases.
type RehearseOptions struct {
	// InstallCheckOptions are shared with the install check: the scratch
	// cluster (Kubeconfig), core Cluster API (Core, installed by clusterctl
	// init first; nil when the releases are core's own), the clusterctl config (where cert-manager is read
	// from, and real values), the real values (Variables, ValuesFiles,
	// KubernetesVersion), Sources (to read targets) and Log.
	// DryRunOnly and Force do not apply: a rehearsal installs for real, on a
	// cluster without the providers.
	InstallCheckOptions
	// From is the release upgraded from (verify --upgrade-from): a folder,
	// or a target URL with an optional @VERSION (without one, the release
	// before the new one there). The release step upgrades from the
	// release its upgrade check compared with instead.
	From *Side
	// WithCertManager lets clusterctl install cert-manager from the
	// rehearsal's repository when the cluster lacks its CRDs, read from
	// where Clusterctl says (GitHub by default); without it such a
	// cluster is refused and nothing is fetched.
	WithCertManager bool
}

// Rehearse rehearses the upgrade from old to rel on the scratch cluster of
// the options, core Cluster API read from Core.
func Rehearse(ctx context.Context, old, rel *release.Release, o RehearseOptions) (*rehearse.Report, error) {
	reals, err := o.reals(ctx)
	if err != nil {
		return nil, fmt.Errorf("upgrade rehearsal: %w", err)
	}
	rd := &reader{o: readOptions(o.Sources), log: o.Log}
	var core *release.Release
	if o.Core != nil {
		if core, err = rd.readCore(ctx, *o.Core); err != nil {
			return nil, fmt.Errorf("upgrade rehearsal: %s %s: %w", option.Flag(ctx, option.Core), o.Core, err)
		}
	}
	ro := rehearse.Options{Kubeconfig: o.Kubeconfig, Old: old, New: rel, Core: core, KubernetesVersion: o.KubernetesVersion,
		Values: reals, Log: o.Log}
	if o.WithCertManager {
		ro.CertManager = func(ctx context.Context) (*release.Provider, error) {
			return CertManager(ctx, o.Clusterctl, o.Sources)
		}
	}
	return rehearse.Rehearse(ctx, ro)
}

// coreIDs are the providers clusterctl init installs by default: what a
// core release read from a target holds.
var coreIDs = []provider.ID{
	{Name: provider.CoreProviderName, Type: clusterctlv1.CoreProviderType},
	{Name: "kubeadm", Type: clusterctlv1.BootstrapProviderType},
	{Name: "kubeadm", Type: clusterctlv1.ControlPlaneProviderType},
}

// readCore reads the core release of --core: a folder as it is, a target
// at its version (core Cluster API, and kubeadm's bootstrap and control
// plane providers when it holds them).
func (rd *reader) readCore(ctx context.Context, s Side) (*release.Release, error) {
	if s.Location == nil {
		rel, _, err := rd.readFolderSide(s)
		return rel, err
	}
	if s.Version == "" {
		return nil, publish.Usagef("give the version of core Cluster API to install: %s@vX.Y.Z", s.Arg)
	}
	src, err := rd.open(ctx, *s.Location)
	if err != nil {
		return nil, err
	}
	return rd.readTarget(ctx, src, s.Location.URL, coreIDs, s.Version)
}

// rehearseFrom reads the release --upgrade-from names for rel: a folder as
// it is, a target at its version or the release before rel there.
func (o RehearseOptions) rehearseFrom(ctx context.Context, rel *release.Release) (*release.Release, error) {
	rd := &reader{o: readOptions(o.Sources), log: o.Log}
	old, _, _, err := rd.readOld(ctx, *o.From, rel)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", option.Flag(ctx, option.UpgradeFrom), o.From, err)
	}
	if old == nil {
		return nil, fmt.Errorf("%s %s: no release below %s there to upgrade from", option.Flag(ctx, option.UpgradeFrom), o.From, rel.Version)
	}
	return old, nil
}

// rehearsal is release's upgrade rehearsal step: the upgrade from the release the
// upgrade check compared with (the release before this one) to the one
// built, on the scratch cluster, before anything is published.
func (r *run) rehearsal(ctx context.Context) (string, bool, error) {
	if r.old == nil {
		return "no release before " + r.b.Result.Release.Version + " was compared with: nothing to rehearse", true, nil
	}
	o := *r.o.Rehearse
	if o.Log == nil {
		o.Log = r.o.Log
	}
	rep, err := Rehearse(ctx, r.old, r.b.Result.Release, o)
	if rep != nil {
		r.sum.Rehearsal = rep
		_ = rep.WriteText(r.o.Log)
	}
	if err != nil {
		return "", false, err
	}
	return fmt.Sprintf("%s -> %s on %s: %d objects read back and applied unchanged, in %.0fs",
		rep.Old, rep.New, rep.Server, rep.CreatedObjects(), rep.Seconds), false, nil
}
