package rehearse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client"

	"github.com/go-logr/logr"

	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/internal/kubeapi"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/values"
	"github.com/capirepo/capirepo/versions"
)

// Options say what a rehearsal upgrades and where.
type Options struct {
	// Kubeconfig is the kubeconfig file of a scratch cluster (its current
	// context): clusterctl installs Old there and upgrades it for real, and
	// everything is removed at the end. A cluster that already holds
	// anything the rehearsal would create is refused.
	Kubeconfig string
	// Old and New are the releases upgraded from and to: the same
	// providers, New's version above Old's.
	Old, New *release.Release
	// Core is the release core Cluster API is installed from, with the
	// bootstrap and control plane providers it holds (a capirepo build of
	// cluster-api holds kubeadm's); nil when Old and New are core's own.
	Core *release.Release
	// CertManager returns the cert-manager release clusterctl installs when
	// the cluster lacks cert-manager's CRDs: only its CRDs and objects are
	// created (no webhooks, nothing running). Nil refuses such a cluster and
	// says what to install: nothing is fetched.
	CertManager func(ctx context.Context) (*release.Provider, error)

	// KubernetesVersion is KUBERNETES_VERSION for Old's templates; "" is
	// values.KubernetesVersion.
	KubernetesVersion string
	// Values are the real values of the components' and templates'
	// variables (--var, --values, a Lookup of the environment and the
	// clusterctl config); a variable without one gets package values'
	// stand-in, as in the install check.
	Values values.Real

	// Log hears what is created and removed and clusterctl's own log; nil
	// discards it.
	Log io.Writer
}

// NamespacePrefix names the namespaces the rehearsal creates Old's
// templates in: NamespacePrefix-<run>-<n>.
const NamespacePrefix = "capirepo-rehearsal"

// Rehearse upgrades Old to New on a scratch cluster the way `clusterctl init`
// and `clusterctl upgrade apply` do, through clusterctl's client library in
// process:
//
//   - Core, Old and New are published into a temporary local repository,
//     their webhook configurations, APIServices and conversion webhooks
//     taken out and their workloads running no Pod (nothing serves a
//     webhook or runs a controller on a scratch cluster; Report.Served);
//   - clusterctl init installs Core and Old from it (cert-manager: the
//     cluster's CRDs, or with Options.CertManager installed by clusterctl
//     from the same repository);
//   - the objects of Old's flavors and ClusterClasses are created for real,
//     with the install check's values (install.Prepare), one namespace per file;
//   - clusterctl upgrade plan must offer New; New's CRDs are sent as
//     clusterctl will patch them with dryRun=All, and their
//     status.storedVersions checked, so that an upgrade the server refuses
//     is reported before clusterctl deletes anything (clusterctl would
//     retry for minutes and leave the provider half-upgraded);
//   - clusterctl upgrade apply installs New (stopped, with the server's
//     words, when it keeps retrying an object the server refuses);
//   - every object is read back (the same uid) and applied server-side,
//     unchanged, in its storage version, so CEL transition rules and
//     ratcheting validation run on it.
//
// Everything installed and created is removed at the end, also when
// interrupted. The error says what failed, in clusterctl's or the server's
// words, and the state it left; the report is returned whenever the
// cluster was reached.
func Rehearse(ctx context.Context, o Options) (*Report, error) {
	start := time.Now()
	if o.Log == nil {
		o.Log = io.Discard
	}
	l, err := layout(o.Old, o.New, o.Core)
	if err != nil {
		return nil, err
	}
	c, err := connect(o.Kubeconfig)
	if err != nil {
		return nil, err
	}
	run, err := kubeapi.RunID()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "capirepo-rehearsal-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	r := &rehearsal{o: o, l: l, c: c, run: run, tmp: tmp, log: &clusterctlLog{w: o.Log},
		rep: &Report{Server: c.Host, Old: o.Old.Version, New: o.New.Version, Providers: l.labels(), Core: l.coreLabels()}}
	restore := r.log.hear()
	// controller-runtime's client (under clusterctl's) logs the server's
	// warnings through the context's logger.
	err = r.rehearse(logr.NewContext(ctx, logr.New(&sink{l: r.log})))
	restore()
	if r.owned.claimed {
		cleanup := time.Now()
		r.cleanup(ctx)
		r.rep.step("cleanup", StatusOK, fmt.Sprintf("%d removed, %d left", len(r.rep.Removed), len(r.rep.Left)), cleanup)
	}
	r.rep.Seconds = seconds(time.Since(start))
	if err != nil {
		return r.rep, err
	}
	return r.rep, r.rep.err()
}

// rehearsal is one run.
type rehearsal struct {
	o   Options
	l   *plan
	c   *cluster
	rep *Report
	run string
	tmp string
	log *clusterctlLog

	// client is clusterctl's client on the rehearsal's config; kubeconfig
	// reaches the cluster.
	client     client.Client
	kubeconfig client.Kubeconfig
	// repo is the rehearsal's repository; cm is cert-manager's release when
	// clusterctl installs it from there.
	repo string
	cm   *release.Provider
	// served are the providers as the repository serves them.
	served map[*release.Provider]*release.Provider
	// owned are what clusterctl installs (every object of the components
	// files) and the rehearsal's own namespaces: what the cluster must not
	// hold before, and what is removed after.
	owned owned
	// objects are the objects created from Old's templates, as created.
	objects []*created
	// processed are the components of each provider as clusterctl
	// processes them with the rehearsal's config.
	processed map[*release.Provider][]unstructured.Unstructured
	// planMissing names the providers clusterctl upgrade plan does not
	// offer at New's version.
	planMissing []string
}

// plan is what a rehearsal installs and upgrades.
type plan struct {
	// core are the providers installed from Options.Core; old and new
	// Old's and New's, in the same order.
	core, old, new []*release.Provider
}

// layout checks that Old, New and Core make an upgrade clusterctl can
// rehearse and lays them out.
func layout(old, new, core *release.Release) (*plan, error) {
	if old == nil || new == nil || len(old.Providers) == 0 || len(new.Providers) == 0 {
		return nil, errors.New("upgrade rehearsal: an old and a new release are needed")
	}
	ov, ok := versions.Parse(old.Version)
	if !ok {
		return nil, fmt.Errorf("upgrade rehearsal: old version %q is no semantic version clusterctl takes", old.Version)
	}
	nv, ok := versions.Parse(new.Version)
	if !ok {
		return nil, fmt.Errorf("upgrade rehearsal: new version %q is no semantic version clusterctl takes", new.Version)
	}
	if !ov.Less(nv) {
		return nil, fmt.Errorf("upgrade rehearsal: %s is not below %s: clusterctl upgrades only to a newer version", old.Version, new.Version)
	}
	l := &plan{}
	for _, p := range old.Providers {
		np, ok := new.Provider(p.Label())
		if !ok {
			return nil, fmt.Errorf("upgrade rehearsal: %s is in %s and not in %s: clusterctl upgrades the providers a cluster runs; give releases of the same providers", p.Label(), old.Version, new.Version)
		}
		l.old, l.new = append(l.old, p), append(l.new, np)
	}
	for _, p := range new.Providers {
		if _, ok := old.Provider(p.Label()); !ok {
			return nil, fmt.Errorf("upgrade rehearsal: %s is in %s and not in %s: a provider new in a release is installed, not upgraded; give releases of the same providers", p.Label(), new.Version, old.Version)
		}
	}
	hasCore := slices.ContainsFunc(l.old, isCore)
	if core != nil && !hasCore {
		for _, p := range core.Providers {
			if _, ok := old.Provider(p.Label()); ok {
				continue // the release upgraded wins over the core release
			}
			l.core = append(l.core, p)
		}
	}
	if !hasCore && !slices.ContainsFunc(l.core, isCore) {
		return nil, fmt.Errorf("upgrade rehearsal: %s holds no core Cluster API, which clusterctl init installs first: name a release of cluster-api to install it from (%s: a folder, a capirepo build, or a published URL such as github://kubernetes-sigs/cluster-api@v1.14.2)", old.Version, option.Core)
	}
	return l, nil
}

func isCore(p *release.Provider) bool { return p.ID.Type == clusterctlv1.CoreProviderType }

// labels are the labels of the providers upgraded.
func (l *plan) labels() []string {
	var out []string
	for _, p := range l.old {
		out = append(out, p.Label())
	}
	return out
}

// coreLabels are the providers installed from the core release.
func (l *plan) coreLabels() []string { return labelsAt(l.core) }

// installed is what clusterctl init installs: the core release's providers
// and Old's, in clusterctl's order.
func (l *plan) installed() []*release.Provider {
	out := slices.Concat(l.core, l.old)
	slices.SortStableFunc(out, func(a, b *release.Provider) int { return a.ID.Type.Order() - b.ID.Type.Order() })
	return out
}

// initOptions are clusterctl init's options for the providers: every type
// clusterctl would add by default that the providers lack is opted out of
// ("-"), so nothing else is fetched.
func initOptions(kc client.Kubeconfig, provs []*release.Provider) client.InitOptions {
	o := client.InitOptions{Kubeconfig: kc}
	for _, p := range provs {
		ref := p.ID.Name + ":" + p.Version
		switch p.ID.Type {
		case clusterctlv1.CoreProviderType:
			o.CoreProvider = ref
		case clusterctlv1.BootstrapProviderType:
			o.BootstrapProviders = append(o.BootstrapProviders, ref)
		case clusterctlv1.ControlPlaneProviderType:
			o.ControlPlaneProviders = append(o.ControlPlaneProviders, ref)
		case clusterctlv1.InfrastructureProviderType:
			o.InfrastructureProviders = append(o.InfrastructureProviders, ref)
		case clusterctlv1.IPAMProviderType:
			o.IPAMProviders = append(o.IPAMProviders, ref)
		case clusterctlv1.RuntimeExtensionProviderType:
			o.RuntimeExtensionProviders = append(o.RuntimeExtensionProviders, ref)
		case clusterctlv1.AddonProviderType:
			o.AddonProviders = append(o.AddonProviders, ref)
		}
	}
	if len(o.BootstrapProviders) == 0 {
		o.BootstrapProviders = []string{client.NoopProvider}
	}
	if len(o.ControlPlaneProviders) == 0 {
		o.ControlPlaneProviders = []string{client.NoopProvider}
	}
	return o
}

// applyOptions are clusterctl upgrade apply's options that upgrade each
// provider to its new version (name:version; clusterctl finds the
// namespace in its inventory).
func applyOptions(kc client.Kubeconfig, news []*release.Provider) client.ApplyUpgradeOptions {
	in := initOptions(kc, news)
	o := client.ApplyUpgradeOptions{Kubeconfig: kc, CoreProvider: in.CoreProvider, InfrastructureProviders: in.InfrastructureProviders,
		IPAMProviders: in.IPAMProviders, RuntimeExtensionProviders: in.RuntimeExtensionProviders, AddonProviders: in.AddonProviders}
	if !slices.Equal(in.BootstrapProviders, []string{client.NoopProvider}) {
		o.BootstrapProviders = in.BootstrapProviders
	}
	if !slices.Equal(in.ControlPlaneProviders, []string{client.NoopProvider}) {
		o.ControlPlaneProviders = in.ControlPlaneProviders
	}
	return o
}

// rehearse runs the steps; the first that fails ends it.
func (r *rehearsal) rehearse(ctx context.Context) error {
	var values *templateValues
	for _, st := range []struct {
		name string
		run  func(context.Context) (string, error)
	}{
		{"prepare", func(ctx context.Context) (string, error) {
			var err error
			values, err = r.prepare(ctx)
			if err != nil {
				return "", err
			}
			objs := 0
			for _, t := range values.templates {
				objs += len(t.Objects)
			}
			return fmt.Sprintf("%d components files served, %d objects to install, %d to create from %d template files",
				len(r.rep.Served), len(r.owned.all()), objs, len(values.templates)), nil
		}},
		{"init", r.init},
		{"objects", func(ctx context.Context) (string, error) { return r.create(ctx, values.templates) }},
		{"plan", r.plan},
		{"check", r.check},
		{"apply", r.apply},
		{"read back", r.readBack},
	} {
		start := time.Now()
		detail, err := st.run(ctx)
		switch {
		case err != nil:
			r.rep.step(st.name, StatusFailed, firstLine(err.Error()), start)
			return err
		case r.rep.Failure != nil:
			r.rep.step(st.name, StatusFailed, detail, start)
			return nil
		}
		r.rep.step(st.name, StatusOK, detail, start)
	}
	return nil
}

// prepare serves the releases, asks the install check for the values,
// opens clusterctl's client and claims the cluster.
func (r *rehearsal) prepare(ctx context.Context) (*templateValues, error) {
	if err := r.serve(ctx); err != nil {
		return nil, err
	}
	values, err := r.values(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.configure(ctx, values.components); err != nil {
		return nil, err
	}
	return values, r.claim(ctx)
}

// fail records the failure of a step.
func (r *rehearsal) fail(step, message, state string) {
	r.rep.Failure = &Failure{Step: step, Message: message, State: state}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// namespace names the namespace of the n-th template file.
func (r *rehearsal) namespace(n int) string {
	return fmt.Sprintf("%s-%s-%d", NamespacePrefix, r.run, n)
}

// templateValues are the values install.Prepare chose.
type templateValues struct {
	// components are the values of every components file's required
	// variables, for clusterctl's config.
	components map[string]string
	// templates are Old's template files with their objects.
	templates []install.Template
}

// values asks the install check for the values of the components'
// variables (Core's and Old's) and for the objects of Old's templates,
// each file in a namespace of its own; New's components file gets values
// for the variables Old's lack (clusterctl's config holds one value per
// name, Old's first).
func (r *rehearsal) values(ctx context.Context) (*templateValues, error) {
	iopts := install.Options{Config: r.c.Config, KubernetesVersion: r.o.KubernetesVersion, Values: r.o.Values}
	n := 0
	ns := func(string, string) string {
		n++
		return r.namespace(n)
	}
	installed := &release.Release{Version: r.o.Old.Version, Providers: r.l.installed()}
	prep, err := install.Prepare(ctx, installed, iopts, ns)
	if err != nil {
		return nil, fmt.Errorf("upgrade rehearsal: %w", err)
	}
	out := &templateValues{components: map[string]string{}}
	standIns := map[string]string{}
	for _, f := range prep.Components {
		for _, v := range f.Variables {
			if _, ok := out.components[v.Name]; !ok {
				out.components[v.Name] = v.Value
				if v.Placeholder {
					standIns[v.Name] = v.Value
				}
			}
		}
	}
	if err := componentValues(r.l.new, r.o.Values, r.c.OpenAPI, out.components, standIns); err != nil {
		return nil, err
	}
	for _, t := range prep.Templates {
		if slices.ContainsFunc(r.l.old, func(p *release.Provider) bool { return p.Label() == t.File.Provider }) {
			out.templates = append(out.templates, t)
			for _, v := range t.File.Variables {
				if _, ok := standIns[v.Name]; v.Placeholder && !ok {
					standIns[v.Name] = v.Value
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(standIns)) {
		r.rep.StandIns = append(r.rep.StandIns, name+"="+standIns[name])
	}
	return out, nil
}

// componentValues adds to set the values of the variables the providers'
// components files use that set and real do not give, as package values
// chooses them: a real value (real.Lookup), else a stand-in that fits the
// fields of the providers' CRDs and, with openAPI, the server's built-in
// kinds. standIns, when set, hears those that are stand-ins.
func componentValues(provs []*release.Provider, real values.Real, openAPI func(schema.GroupVersion) (*spec3.OpenAPI, error), set, standIns map[string]string) error {
	ch := values.New(values.Options{Real: real, OpenAPI: openAPI})
	for _, p := range provs {
		if f, ok := p.File(p.ComponentsFile); ok {
			ch.LearnComponents(f.Data)
		}
	}
	given := maps.Clone(set)
	maps.Copy(given, real.Variables)
	for _, p := range provs {
		s, err := ch.File(p, p.ComponentsFile, given)
		if err != nil {
			return fmt.Errorf("upgrade rehearsal: %s %s: %w", p.Label(), p.Version, err)
		}
		for name, v := range s.Values {
			if _, ok := given[name]; !ok {
				set[name], given[name] = v, v
				if s.StandIns[name] && standIns != nil {
					standIns[name] = v
				}
			}
		}
	}
	return nil
}
