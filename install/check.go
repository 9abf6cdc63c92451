package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"

	"github.com/capirepo/capirepo/internal/kubeapi"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/values"
	"github.com/capirepo/capirepo/verify"
)

// Options say where and how Check applies a release.
type Options struct {
	// Config reaches the API server: a scratch cluster (kind, say), where
	// the check creates CRDs and namespaces for real and removes them at the
	// end; with DryRunOnly, any cluster.
	Config *rest.Config
	// DryRunOnly creates nothing: every object is sent with dryRun=All.
	// Objects of the release's own kinds cannot be judged then (their CRDs
	// are not created) and are listed as not checked.
	DryRunOnly bool
	// Force runs the check on a cluster that already has some of the
	// release's CRDs: they are replaced by the release's for the check and
	// put back as they were at the end. Without it such a cluster is refused.
	Force bool
	// CertManager returns cert-manager's release at the version clusterctl
	// installs (its components file holds the CRDs). It is called only when
	// the release uses cert-manager's kinds, the cluster lacks its CRDs and
	// the check may create them; nil leaves those kinds not checked then.
	CertManager func(ctx context.Context) (*release.Provider, error)
	// KubernetesVersion is KUBERNETES_VERSION; "" means values.KubernetesVersion.
	KubernetesVersion string
	// Values are the real values for variables (--var, --values, and a
	// Lookup of the environment and the clusterctl config); a variable
	// without one gets a stand-in (package values).
	Values values.Real
	// Variables are clusterctl config values that are no template
	// variables (github-token, gitlab-access-token).
	Variables map[string]string
	// Base are providers a management cluster runs before the release is
	// installed (core Cluster API, kubeadm's bootstrap and control plane
	// providers): their CRDs are created first where the cluster lacks them
	// (and removed at the end), so the release's objects are judged against
	// them; nothing else of theirs is sent, and their files are not
	// reported (their own release is checked on its own). A provider of the
	// release itself is never a base.
	Base []*release.Provider
	// Log hears what is created and removed; nil discards it.
	Log io.Writer
}

// Namespaces the check works in are named NamespacePrefix-<run>[-<n>].
const NamespacePrefix = "capirepo-install"

// Check applies a release to a Kubernetes API server the way `clusterctl
// init` and `clusterctl generate cluster | kubectl apply` would, and reports
// every object the server refuses, grouped by file, with the object, the
// field and the server's message:
//
//   - cert-manager's CRDs first (the cluster's when it has them);
//   - each provider's components in clusterctl's order (core, bootstrap,
//     control plane, infrastructure, ...), processed by clusterctl into a
//     namespace of the check's own: the Namespace and CRDs created for real
//     (each CRD first sent as shipped with dryRun=All, so its conversion
//     webhook is validated, then created with conversion None, so the server
//     never calls a webhook, and waited for until Established); every other
//     object, webhook configurations and Services included, only dry-run;
//   - every flavor and ClusterClass file, processed by clusterctl with the
//     required variables given stand-ins their fields' schemas accept, each
//     object dry-run.
//
// Objects are sent with fieldValidation=Warn, so the server runs every
// schema and CEL check at once; the unknown and duplicate fields it then
// reports as warnings are refusals (kubectl's default, Strict, refuses them).
// Objects of kinds the cluster has no CRD for (another provider's, without
// it installed) are listed as not checked. Whatever the check created is
// removed before Check returns, also when it was interrupted.
//
// The error lists every refusal, grouped by file; it is nil when the server
// accepted everything. The report is returned whenever the server was reached.
func Check(ctx context.Context, rel *release.Release, opts Options) (*Report, error) {
	in, err := start(rel, opts)
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(in.tmp) }()
	err = in.check(ctx, rel)
	in.cleanup(ctx)
	if err != nil {
		return in.rep, err
	}
	return in.rep, in.rep.refusedError()
}

// start reaches the API server and makes one run of the check; the caller
// removes its temporary folder (tmp).
func start(rel *release.Release, opts Options) (*installer, error) {
	if opts.Config == nil {
		return nil, errors.New("install check: no API server given")
	}
	if len(rel.Providers) == 0 {
		return nil, errors.New("install check: the release holds no provider")
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.KubernetesVersion == "" {
		opts.KubernetesVersion = values.KubernetesVersion
	}
	c, err := newCluster(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("install check: %w", err)
	}
	if _, err := c.Disc.ServerVersion(); err != nil {
		return nil, fmt.Errorf("install check: cannot reach the API server at %s: %w", c.Host, err)
	}
	run, err := kubeapi.RunID()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "capirepo-install-")
	if err != nil {
		return nil, err
	}
	in := &installer{
		o:      opts,
		c:      c,
		rep:    &Report{Server: c.Host, DryRunOnly: opts.DryRunOnly},
		run:    run,
		tmp:    tmp,
		vals:   values.New(values.Options{Real: opts.Values, OpenAPI: c.openAPI}),
		kinds:  map[schema.GroupKind]*releaseCRD{},
		groups: map[string]bool{},
		labels: map[string]bool{},
	}
	for _, p := range rel.Providers {
		in.labels[p.Label()] = true
	}
	return in, nil
}

// installer holds one run of the check.
type installer struct {
	o   Options
	c   *cluster
	rep *Report
	run string
	tmp string
	// overrides is clusterctl's overrides folder: empty.
	overrides string

	// vals chooses the variables' values: real ones, else stand-ins.
	vals *values.Chooser
	// kinds are the kinds the release's CRDs serve; groups their groups.
	kinds  map[schema.GroupKind]*releaseCRD
	groups map[string]bool
	// clusterGroups are the groups the cluster's CRDs served before the run.
	clusterGroups map[string]bool
	// labels are the release's providers, by label.
	labels map[string]bool
	// certManager is true when cert-manager's kinds can be judged.
	certManager bool

	// namespaces and crds were created by this run (crds also cert-manager's);
	// replaced holds the CRDs --force replaced, as they were.
	namespaces []string
	crds       []string
	replaced   []*unstructured.Unstructured
	// unsure are the crds whose create was sent and not answered (yet):
	// cleanup removes them if the server holds them.
	unsure map[string]bool
	// served are the resources the created CRDs serve, at their storage versions.
	served []schema.GroupVersionResource
}

// releaseCRD is one CRD of the release and what became of it.
type releaseCRD struct {
	name     string
	versions []string // served
	// created is set once it is created and Established; refused says why
	// it was not (refused, or not Established).
	created bool
	refused string
}

// installProvider is one provider of the release on its way in.
type installProvider struct {
	p *release.Provider
	// target is the provider staged as a local repository.
	target    verify.Repo
	namespace string
	objs      []unstructured.Unstructured
	file      *File
	// base is one of Options.Base: only its CRDs are created.
	base bool
}

func (in *installer) check(ctx context.Context, rel *release.Release) error {
	provs, err := in.providers(rel)
	if err != nil {
		return err
	}
	crds, err := in.c.crds(ctx)
	if err != nil {
		return fmt.Errorf("install check: %w", err)
	}
	in.clusterGroups = map[string]bool{}
	existing := map[string]*unstructured.Unstructured{}
	for i := range crds {
		crd := &crds[i]
		existing[crd.GetName()] = crd
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		in.clusterGroups[group] = true
	}

	// Every provider's components go through clusterctl before anything
	// is created, so a release clusterctl cannot read creates nothing.
	var errs []error
	for _, ip := range provs {
		if err := in.components(ctx, ip); err != nil {
			errs = append(errs, fmt.Errorf("install check: %s %s: %s: %w", ip.p.Label(), ip.p.Version, ip.p.ComponentsFile, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i := range crds { // the cluster's CRDs serve the kinds the release does not
		in.vals.AddCRD(&crds[i])
	}
	// CRDs an earlier run (or anyone) is deleting are waited for.
	var terminating []string
	for _, ip := range provs {
		for i := range ip.objs {
			if o := &ip.objs[i]; isCRD(o) && existing[o.GetName()] != nil && existing[o.GetName()].GetDeletionTimestamp() != nil {
				terminating = append(terminating, o.GetName())
			}
		}
	}
	if len(terminating) > 0 {
		fmt.Fprintf(in.o.Log, "install check: waiting for %d CRDs being deleted (%s)\n", len(terminating), strings.Join(terminating, ", "))
		for _, name := range terminating {
			if !slices.Contains(in.c.gone(ctx, crdGVR, []string{name}, establishTimeout), name) {
				delete(existing, name)
			}
		}
	}
	var there []string
	for _, ip := range provs {
		if ip.base { // a base the cluster has is the cluster's to keep
			continue
		}
		for i := range ip.objs {
			if o := &ip.objs[i]; isCRD(o) && existing[o.GetName()] != nil {
				there = append(there, o.GetName())
			}
		}
	}
	if len(there) > 0 && !in.o.DryRunOnly && !in.o.Force {
		return fmt.Errorf("install check: the cluster at %s already has CRDs of the release (%s): it looks like a cluster the provider is installed in, "+
			"and the check creates and deletes CRDs; use a scratch cluster (kind create cluster), %s (creates nothing), "+
			"or %s to replace them for the check and put them back after", in.c.Host, strings.Join(there, ", "), option.Flag(ctx, option.DryRunOnly), option.Flag(ctx, option.Force))
	}
	own := slices.DeleteFunc(slices.Clone(provs), func(ip *installProvider) bool { return ip.base })
	if err := in.announce(ctx, provs, len(there)); err != nil {
		return err
	}
	if err := in.ensureCertManager(ctx, rel, own, existing); err != nil {
		return err
	}
	for _, ip := range provs {
		install := in.install
		if ip.base {
			install = in.installBase
		}
		if err := install(ctx, ip, existing); err != nil {
			return err
		}
	}
	provs = own
	templatesNS := in.namespace("")
	if in.o.DryRunOnly {
		templatesNS = metav1.NamespaceDefault
	} else if err := in.createNamespace(ctx, nil, templatesNS, nil); err != nil {
		return err
	}
	in.learnTemplates(provs)
	for _, ip := range provs {
		if err := in.templates(ctx, ip, templatesNS); err != nil {
			return err
		}
	}
	return nil
}

// learnTemplates makes the ClusterClasses of every flavor and clusterclass
// file known to the values' chooser, before any template is processed: a
// topology Cluster's variables take the schema its class gives them.
func (in *installer) learnTemplates(provs []*installProvider) {
	for _, ip := range provs {
		for _, f := range ip.p.Files {
			in.vals.LearnTemplate(f.Name, f.Data)
		}
	}
}

// namespace names a namespace of this run; suffix "" is the templates'.
func (in *installer) namespace(suffix string) string {
	if suffix == "" {
		return NamespacePrefix + "-" + in.run
	}
	return NamespacePrefix + "-" + in.run + "-" + suffix
}

// providers stages the release as a local repository and orders its
// providers as clusterctl init installs them.
func (in *installer) providers(rel *release.Release) ([]*installProvider, error) {
	in.overrides = filepath.Join(in.tmp, "overrides")
	if err := os.Mkdir(in.overrides, 0o700); err != nil {
		return nil, err
	}
	repo := filepath.Join(in.tmp, "repository")
	var out []*installProvider
	for i, p := range rel.Providers {
		if err := release.Write(repo, &release.Release{Version: p.Version, Providers: []*release.Provider{p}}); err != nil {
			return nil, fmt.Errorf("install check: stage %s %s: %w", p.Label(), p.Version, err)
		}
		t := verify.Repo{ID: p.ID, Version: p.Version, URL: "file://" + filepath.ToSlash(filepath.Join(p.Dir(repo), p.ComponentsFile))}
		out = append(out, &installProvider{p: p, target: t, namespace: in.namespace(fmt.Sprint(i + 1))})
	}
	for _, p := range in.o.Base {
		if in.labels[p.Label()] {
			continue
		}
		if err := release.Write(repo, &release.Release{Version: p.Version, Providers: []*release.Provider{p}}); err != nil {
			return nil, fmt.Errorf("install check: stage %s %s: %w", p.Label(), p.Version, err)
		}
		t := verify.Repo{ID: p.ID, Version: p.Version, URL: "file://" + filepath.ToSlash(filepath.Join(p.Dir(repo), p.ComponentsFile))}
		out = append(out, &installProvider{p: p, target: t, namespace: in.namespace("base-" + p.Label()), base: true})
		in.rep.Base = append(in.rep.Base, p.Label()+" "+p.Version)
	}
	slices.SortStableFunc(out, func(a, b *installProvider) int { return a.p.ID.Type.Order() - b.p.ID.Type.Order() })
	return out, nil
}

// components processes a provider's components as clusterctl init does,
// into the provider's namespace of this run, with stand-ins for the
// required variables, and learns the CRDs they hold.
func (in *installer) components(ctx context.Context, ip *installProvider) error {
	s, err := in.session(ctx, ip)
	if err != nil {
		return err
	}
	cc := s.Repository().Components()
	raw, err := cc.Raw(ctx, repository.ComponentsOptions{Version: ip.p.Version})
	if err != nil {
		return err
	}
	// The components' own CRDs give the schemas of their own objects.
	in.vals.LearnComponents(raw)
	ip.file = &File{Provider: ip.p.Label(), Version: ip.p.Version, File: ip.p.ComponentsFile}
	if err := in.standIns(s, ip.file, raw); err != nil {
		return err
	}
	c, err := cc.Get(ctx, repository.ComponentsOptions{Version: ip.p.Version, TargetNamespace: ip.namespace})
	if err != nil {
		return err
	}
	ip.objs = c.Objs()
	for i := range ip.objs {
		o := &ip.objs[i]
		if !isCRD(o) {
			continue
		}
		in.vals.AddCRD(o)
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		rc := &releaseCRD{name: o.GetName()}
		versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
		for _, v := range versions {
			if m, ok := v.(map[string]any); ok && m["served"] == true {
				rc.versions = append(rc.versions, fmt.Sprint(m["name"]))
			}
		}
		in.kinds[schema.GroupKind{Group: group, Kind: kind}] = rc
		in.groups[group] = true
	}
	return nil
}

// session opens a clusterctl config on a provider's staged repository.
func (in *installer) session(ctx context.Context, ip *installProvider) (*verify.Session, error) {
	return verify.NewSession(ctx, ip.target, verify.Options{Version: ip.p.Version, KubernetesVersion: in.o.KubernetesVersion, Variables: in.sessionVariables()}, in.overrides)
}

// announce says plainly what the check is about to create.
func (in *installer) announce(ctx context.Context, provs []*installProvider, replaced int) error {
	if in.o.DryRunOnly {
		_, err := fmt.Fprintf(in.o.Log, "install check on %s: dry-run only, nothing is created\n", in.c.Host)
		return err
	}
	n := 0
	for _, ip := range provs {
		for i := range ip.objs {
			if isCRD(&ip.objs[i]) {
				n++
			}
		}
	}
	namespaces := 1
	for _, ip := range provs {
		if !ip.base {
			namespaces++
		}
	}
	msg := fmt.Sprintf("install check on %s: creates %d CustomResourceDefinitions (and cert-manager's, if the release needs them and the cluster lacks them) and %d namespaces (%s-*) for real, and removes them at the end; every other object is only dry-run",
		in.c.Host, n, namespaces, in.namespace(""))
	if len(in.rep.Base) > 0 {
		msg += fmt.Sprintf("; the CRDs of %s are created first where the cluster lacks them, so the release is judged against them (their own files are not checked here)", strings.Join(in.rep.Base, ", "))
	}
	if replaced > 0 {
		msg += fmt.Sprintf("; %s: %d CRDs already there are replaced and put back after", option.Flag(ctx, option.Force), replaced)
	}
	_, err := fmt.Fprintln(in.o.Log, msg)
	return err
}

// sessionVariables are the clusterctl config values every session holds:
// the tokens and the real values for every file.
func (in *installer) sessionVariables() map[string]string {
	out := maps.Clone(in.o.Variables)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, in.o.Values.Variables)
	return out
}

// standIns sets the session's values for the file's variables the session
// does not hold, as package values chooses them (real values, else
// stand-ins), and describes them in f with the fields the stand-ins land in.
func (in *installer) standIns(s *verify.Session, f *File, raw []byte) error {
	set, err := in.vals.For(f.File, raw, s.Values())
	if err != nil {
		return err
	}
	s.Apply(set)
	vars, _ := yamlprocessor.NewSimpleProcessor().GetVariableMap(raw)
	for _, name := range set.Names() {
		if _, has := vars[name]; !has || vars[name] != nil && !set.StandIns[name] {
			continue // a real value for a variable with a default is no news
		}
		f.Variables = append(f.Variables, verify.Variable{Name: name, Required: vars[name] == nil, Default: vars[name], Value: set.Values[name], Placeholder: set.StandIns[name]})
	}
	f.places = set.Places
	return nil
}
