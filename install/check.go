package install

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"

	"github.com/capirepo/capirepo/release"

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
	// KubernetesVersion is KUBERNETES_VERSION; "" means verify.KubernetesVersion.
	KubernetesVersion string
	// Variables are real values for variables; they win over stand-ins.
	Variables map[string]string
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
		opts.KubernetesVersion = verify.KubernetesVersion
	}
	c, err := newCluster(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("install check: %w", err)
	}
	if _, err := c.disc.ServerVersion(); err != nil {
		return nil, fmt.Errorf("install check: cannot reach the API server at %s: %w", c.host, err)
	}
	run, err := runID()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "capirepo-install-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	in := &installer{
		o:       opts,
		c:       c,
		rep:     &Report{Server: c.host, DryRunOnly: opts.DryRunOnly},
		run:     run,
		tmp:     tmp,
		schemas: &schemaSet{openAPI: c.openAPI},
		kinds:   map[schema.GroupKind]*releaseCRD{},
		groups:  map[string]bool{},
	}
	err = in.check(ctx, rel)
	in.cleanup(ctx)
	if err != nil {
		return in.rep, err
	}
	return in.rep, in.rep.refusedError()
}

// runID names one run's namespaces: five lowercase letters and digits.
func runID() (string, error) {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return string(b), nil
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

	schemas *schemaSet
	// kinds are the kinds the release's CRDs serve; groups their groups.
	kinds  map[schema.GroupKind]*releaseCRD
	groups map[string]bool
	// clusterGroups are the groups the cluster's CRDs served before the run.
	clusterGroups map[string]bool
	// certManager is true when cert-manager's kinds can be judged.
	certManager bool

	// namespaces and crds were created by this run (crds also cert-manager's);
	// replaced holds the CRDs --force replaced, as they were.
	namespaces []string
	crds       []string
	replaced   []*unstructured.Unstructured
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
		in.schemas.addCRD(&crds[i])
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
		for i := range ip.objs {
			if o := &ip.objs[i]; isCRD(o) && existing[o.GetName()] != nil {
				there = append(there, o.GetName())
			}
		}
	}
	if len(there) > 0 && !in.o.DryRunOnly && !in.o.Force {
		return fmt.Errorf("install check: the cluster at %s already has CRDs of the release (%s): it looks like a cluster the provider is installed in, "+
			"and the check creates and deletes CRDs; use a scratch cluster (kind create cluster), --dry-run-only (creates nothing), "+
			"or --force to replace them for the check and put them back after", in.c.host, strings.Join(there, ", "))
	}
	if err := in.announce(provs, len(there)); err != nil {
		return err
	}
	if err := in.ensureCertManager(ctx, rel, provs, existing); err != nil {
		return err
	}
	for _, ip := range provs {
		if err := in.install(ctx, ip, existing); err != nil {
			return err
		}
	}
	templatesNS := in.namespace("")
	if in.o.DryRunOnly {
		templatesNS = metav1.NamespaceDefault
	} else if err := in.createNamespace(ctx, nil, templatesNS, nil); err != nil {
		return err
	}
	for _, ip := range provs {
		if err := in.templates(ctx, ip, templatesNS); err != nil {
			return err
		}
	}
	return nil
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
	if objs, err := utilyaml.ToUnstructured(raw); err == nil {
		for i := range objs {
			if isCRD(&objs[i]) {
				in.schemas.addCRD(&objs[i])
			}
		}
	}
	vars, err := yamlprocessor.NewSimpleProcessor().GetVariableMap(raw)
	if err != nil {
		return err
	}
	stand := in.standIns(s, raw, vars, nil)
	c, err := cc.Get(ctx, repository.ComponentsOptions{Version: ip.p.Version, TargetNamespace: ip.namespace})
	if err != nil {
		return err
	}
	ip.objs = c.Objs()
	ip.file = &File{Provider: ip.p.Label(), Version: ip.p.Version, File: ip.p.ComponentsFile, Variables: stand}
	for i := range ip.objs {
		o := &ip.objs[i]
		if !isCRD(o) {
			continue
		}
		in.schemas.addCRD(o)
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

// standIns sets the session's required variables without a value to
// stand-ins the schemas accept (over the name guesses), and describes them.
// extra are values that win over the session's (the template namespace).
func (in *installer) standIns(s *verify.Session, raw []byte, vars map[string]*string, extra map[string]string) []verify.Variable {
	for k, v := range extra {
		s.Set(k, v)
	}
	given := s.Values()
	var required []string
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if _, ok := given[name]; !ok && vars[name] == nil {
			required = append(required, name)
		}
	}
	chosen := standIns(raw, given, required, in.schemas)
	var out []verify.Variable
	for _, name := range required {
		s.SetPlaceholder(name, chosen[name])
		out = append(out, verify.Variable{Name: name, Required: true, Value: chosen[name], Placeholder: true})
	}
	return out
}

// session opens a clusterctl config on a provider's staged repository.
func (in *installer) session(ctx context.Context, ip *installProvider) (*verify.Session, error) {
	return verify.NewSession(ctx, ip.target, verify.Options{Version: ip.p.Version, KubernetesVersion: in.o.KubernetesVersion, Variables: in.o.Variables}, in.overrides)
}

// announce says plainly what the check is about to create.
func (in *installer) announce(provs []*installProvider, replaced int) error {
	if in.o.DryRunOnly {
		_, err := fmt.Fprintf(in.o.Log, "install check on %s: dry-run only, nothing is created\n", in.c.host)
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
	msg := fmt.Sprintf("install check on %s: creates %d CustomResourceDefinitions (and cert-manager's, if the release needs them and the cluster lacks them) and %d namespaces (%s-*) for real, and removes them at the end; every other object is only dry-run",
		in.c.host, n, len(provs)+1, in.namespace(""))
	if replaced > 0 {
		msg += fmt.Sprintf("; --force: %d CRDs already there are replaced and put back after", replaced)
	}
	_, err := fmt.Fprintln(in.o.Log, msg)
	return err
}

// usesCertManager says whether the release has objects of cert-manager's kinds.
func usesCertManager(rel *release.Release, provs []*installProvider) bool {
	for _, ip := range provs {
		for i := range ip.objs {
			if isCertManagerGroup(ip.objs[i].GroupVersionKind().Group) {
				return true
			}
		}
	}
	for _, p := range rel.Providers {
		for _, f := range p.Files {
			if f.Name != p.ComponentsFile && strings.Contains(string(f.Data), "cert-manager.io/") {
				return true
			}
		}
	}
	return false
}

func isCertManagerGroup(group string) bool {
	return group == "cert-manager.io" || strings.HasSuffix(group, ".cert-manager.io")
}

// ensureCertManager makes cert-manager's kinds known: from the cluster when
// it has them, else by creating the CRDs of the release CertManager returns.
func (in *installer) ensureCertManager(ctx context.Context, rel *release.Release, provs []*installProvider, existing map[string]*unstructured.Unstructured) error {
	if !usesCertManager(rel, provs) {
		return nil
	}
	if existing["certificates.cert-manager.io"] != nil && existing["issuers.cert-manager.io"] != nil {
		in.certManager, in.rep.CertManager = true, "cluster"
		return nil
	}
	if in.o.DryRunOnly || in.o.CertManager == nil {
		return nil
	}
	cm, err := in.o.CertManager(ctx)
	if err != nil {
		return fmt.Errorf("install check: cert-manager: %w", err)
	}
	objs, err := utilyaml.ToUnstructured(cm.Components().Data)
	if err != nil {
		return fmt.Errorf("install check: cert-manager %s: %s: %w", cm.Version, cm.ComponentsFile, err)
	}
	f := &File{Provider: cm.Label(), Version: cm.Version, File: cm.ComponentsFile}
	in.rep.Files = append(in.rep.Files, f)
	var crds []*unstructured.Unstructured
	for i := range objs {
		if isCRD(&objs[i]) && existing[objs[i].GetName()] == nil {
			crds = append(crds, &objs[i])
		}
	}
	if err := in.createCRDs(ctx, f, crds, existing); err != nil {
		return err
	}
	in.certManager = len(f.Refused) == 0
	in.rep.CertManager = cm.Version
	return nil
}

// install sends one provider's components: its Namespace and CRDs for
// real, then every other object dry-run, in the file's order.
func (in *installer) install(ctx context.Context, ip *installProvider, existing map[string]*unstructured.Unstructured) error {
	f := ip.file
	in.rep.Files = append(in.rep.Files, f)
	ns := ip.namespace
	if in.o.DryRunOnly {
		ns = metav1.NamespaceDefault
	}
	var crds []*unstructured.Unstructured
	created := false
	for i := range ip.objs {
		o := &ip.objs[i]
		switch {
		case isCRD(o):
			crds = append(crds, o)
		case o.GetKind() == "Namespace" && o.GroupVersionKind().Group == "" && o.GetName() == ip.namespace:
			if in.o.DryRunOnly {
				if err := in.send(ctx, f, o, ""); err != nil {
					return err
				}
				continue
			}
			if err := in.createNamespace(ctx, f, ip.namespace, o); err != nil {
				return err
			}
			created = true
		}
	}
	if !created && !in.o.DryRunOnly {
		if err := in.createNamespace(ctx, f, ip.namespace, nil); err != nil {
			return err
		}
	}
	if err := in.createCRDs(ctx, f, crds, existing); err != nil {
		return err
	}
	for i := range ip.objs {
		o := &ip.objs[i]
		if isCRD(o) || o.GetKind() == "Namespace" && o.GroupVersionKind().Group == "" && o.GetName() == ip.namespace {
			continue
		}
		if err := in.send(ctx, f, o, ns); err != nil {
			return err
		}
	}
	return nil
}

// createNamespace creates a namespace of this run for real: obj when the
// components hold it (so its labels and fields are judged), else a bare one.
func (in *installer) createNamespace(ctx context.Context, f *File, name string, obj *unstructured.Unstructured) error {
	if obj == nil {
		obj = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
		obj.SetName(name)
	} else {
		obj = obj.DeepCopy()
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[NamespacePrefix] = in.run
	obj.SetLabels(labels)
	m, err := in.c.mapping(ctx, obj.GroupVersionKind(), false)
	if err != nil {
		return fmt.Errorf("install check: %w", err)
	}
	a := in.c.create(ctx, m, obj, false)
	if a.err == nil {
		in.namespaces = append(in.namespaces, name)
		in.rep.Created = append(in.rep.Created, "Namespace/"+name)
	}
	if f == nil {
		if a.err != nil {
			return fmt.Errorf("install check: create Namespace %s: %w", name, a.err)
		}
		return nil
	}
	return in.record(f, objectName(obj), a)
}

// createCRDs sends each CRD as shipped with dryRun=All (its conversion
// webhook validated), then creates it for real with conversion None (or,
// with --force, replaces the cluster's), and waits until each is Established.
func (in *installer) createCRDs(ctx context.Context, f *File, crds []*unstructured.Unstructured, existing map[string]*unstructured.Unstructured) error {
	if len(crds) == 0 {
		return nil
	}
	m, err := in.c.mapping(ctx, crdGVR.GroupVersion().WithKind("CustomResourceDefinition"), false)
	if err != nil {
		return fmt.Errorf("install check: %w", err)
	}
	var made []*unstructured.Unstructured
	for _, crd := range crds {
		name := crd.GetName()
		old := existing[name]
		var a answer
		if old != nil {
			a = in.c.update(ctx, m, crd, true)
		} else {
			a = in.c.create(ctx, m, crd, true)
		}
		before := len(f.Refused)
		if err := in.record(f, objectName(crd), a); err != nil {
			return err
		}
		if a.err != nil || len(f.Refused) > before {
			in.refuseCRD(crd, "refused")
			continue
		}
		if in.o.DryRunOnly {
			in.refuseCRD(crd, "dry-run only: not created")
			continue
		}
		live := crd.DeepCopy()
		_ = unstructured.SetNestedMap(live.Object, map[string]any{"strategy": "None"}, "spec", "conversion")
		if old != nil {
			a = in.c.update(ctx, m, live, false)
		} else {
			a = in.c.create(ctx, m, live, false)
		}
		if a.err != nil {
			refused, _, err := judge(objectName(crd), a)
			if err != nil {
				return fmt.Errorf("install check: create %s: %w", objectName(crd), err)
			}
			f.Refused = append(f.Refused, refused...)
			f.Accepted--
			in.refuseCRD(crd, "refused")
			continue
		}
		if old != nil {
			in.replaced = append(in.replaced, old)
		} else {
			in.crds = append(in.crds, name)
			in.served = append(in.served, storageResource(crd))
			in.rep.Created = append(in.rep.Created, "CustomResourceDefinition/"+name)
		}
		made = append(made, crd)
	}
	for _, crd := range made {
		why, err := in.c.established(ctx, crd.GetName())
		if err != nil {
			return fmt.Errorf("install check: %s: %w", objectName(crd), err)
		}
		if why != "" {
			f.Refused = append(f.Refused, Refusal{Object: objectName(crd), Field: "status.conditions", Message: why})
			f.Accepted--
			in.refuseCRD(crd, why)
			continue
		}
		for _, rc := range in.kinds {
			if rc.name == crd.GetName() {
				rc.created = true
			}
		}
	}
	in.c.mapper.Reset()
	return nil
}

// refuseCRD records that a release CRD serves nothing in this run.
func (in *installer) refuseCRD(crd *unstructured.Unstructured, why string) {
	for _, rc := range in.kinds {
		if rc.name == crd.GetName() && rc.refused == "" {
			rc.refused = why
		}
	}
}

// templates sends every flavor and ClusterClass of a provider, each
// processed by clusterctl into the templates' namespace.
func (in *installer) templates(ctx context.Context, ip *installProvider, ns string) error {
	type tmpl struct{ file, flavor, class string }
	var files []tmpl
	for _, f := range ip.p.Files {
		if flavor, ok := verify.FlavorOf(f.Name); ok {
			files = append(files, tmpl{file: f.Name, flavor: flavor})
		}
	}
	slices.SortFunc(files, func(a, b tmpl) int { return strings.Compare(a.flavor, b.flavor) })
	for _, f := range ip.p.Files {
		if class, ok := verify.ClassOf(f.Name); ok {
			files = append(files, tmpl{file: f.Name, class: class})
		}
	}
	for _, t := range files {
		raw, _ := ip.p.File(t.file)
		f := &File{Provider: ip.p.Label(), Version: ip.p.Version, File: t.file}
		in.rep.Files = append(in.rep.Files, f)
		s, err := in.session(ctx, ip)
		if err != nil {
			return fmt.Errorf("install check: %s: %w", f.Path(), err)
		}
		var objs []unstructured.Unstructured
		vars, err := yamlprocessor.NewSimpleProcessor().GetVariableMap(raw.Data)
		if err == nil {
			f.Variables = in.standIns(s, raw.Data, vars, map[string]string{"NAMESPACE": ns})
			var tpl repository.Template
			if t.class != "" {
				tpl, err = s.Repository().ClusterClasses(ip.p.Version).Get(ctx, t.class, ns, false)
			} else {
				tpl, err = s.Repository().Templates(ip.p.Version).Get(ctx, t.flavor, ns, false)
			}
			if err == nil {
				objs = tpl.Objs()
			}
		}
		if err != nil {
			f.NotChecked = append(f.NotChecked, NotChecked{Object: t.file, Why: "clusterctl cannot process it: " + err.Error()})
			continue
		}
		for i := range objs {
			if err := in.send(ctx, f, &objs[i], ns); err != nil {
				return err
			}
		}
	}
	return nil
}

// send dry-runs one object in namespace ns (when it is namespaced) and
// records the answer; an object whose kind the cluster does not serve is
// judged here: refused when the release should serve it, else not checked.
func (in *installer) send(ctx context.Context, f *File, obj *unstructured.Unstructured, ns string) error {
	gvk := obj.GroupVersionKind()
	name := objectName(obj)
	rc := in.kinds[gvk.GroupKind()]
	if rc != nil {
		switch {
		case in.o.DryRunOnly:
			f.NotChecked = append(f.NotChecked, NotChecked{Object: name, Why: "dry-run only: the release's CustomResourceDefinition " + rc.name + " is not created"})
			return nil
		case rc.refused != "":
			f.NotChecked = append(f.NotChecked, NotChecked{Object: name, Why: "its CustomResourceDefinition " + rc.name + " was " + rc.refused})
			return nil
		case !rc.created:
			f.NotChecked = append(f.NotChecked, NotChecked{Object: name, Why: "its CustomResourceDefinition " + rc.name + " comes with a provider clusterctl installs later"})
			return nil
		case !slices.Contains(rc.versions, gvk.Version):
			f.Refused = append(f.Refused, Refusal{Object: name, Field: "apiVersion",
				Message: fmt.Sprintf("no matches for kind %q in version %q: the release's CustomResourceDefinition %s serves %s", gvk.Kind, gvk.GroupVersion(), rc.name, strings.Join(rc.versions, ", ")),
				Reason:  "not served"})
			return nil
		}
	}
	if isCertManagerGroup(gvk.Group) && !in.certManager {
		why := "cert-manager's CRDs are not in the cluster"
		if in.o.DryRunOnly {
			why += " (dry-run only: not created)"
		}
		f.NotChecked = append(f.NotChecked, NotChecked{Object: name, Why: why})
		return nil
	}
	m, err := in.c.mapping(ctx, gvk, rc != nil) // a CRD just created may take a moment to be discovered
	if meta.IsNoMatchError(err) {
		in.unserved(f, obj)
		return nil
	}
	if err != nil {
		return fmt.Errorf("install check: %s: %s: %w", f.Path(), name, err)
	}
	obj = obj.DeepCopy()
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		obj.SetNamespace(ns)
	}
	a := in.c.create(ctx, m, obj, true)
	if apierrors.IsAlreadyExists(a.err) {
		// Already in the cluster (a cluster-scoped object of an installed
		// provider, with --force or --dry-run-only): judged as the update
		// clusterctl would make.
		a = in.c.update(ctx, m, obj, true)
	}
	return in.record(f, name, a)
}

// unserved judges an object of a kind the cluster serves no resource for.
func (in *installer) unserved(f *File, obj *unstructured.Unstructured) {
	gvk := obj.GroupVersionKind()
	name := objectName(obj)
	msg := fmt.Sprintf("no matches for kind %q in version %q", gvk.Kind, gvk.GroupVersion())
	switch {
	case in.groups[gvk.Group]:
		f.Refused = append(f.Refused, Refusal{Object: name, Field: "kind", Reason: "not served",
			Message: msg + ": no CustomResourceDefinition of the release or the cluster defines it, though the release's CRDs serve its group"})
	case in.clusterGroups[gvk.Group]:
		f.NotChecked = append(f.NotChecked, NotChecked{Object: name, Why: msg + ": the cluster's CRDs for " + gvk.Group + " do not serve it (another provider's, at another version?)"})
	case !strings.Contains(gvk.Group, ".") || strings.HasSuffix(gvk.Group, ".k8s.io"):
		f.Refused = append(f.Refused, Refusal{Object: name, Field: "apiVersion", Reason: "not served", Message: msg + ": the API server does not serve it"})
	default:
		f.NotChecked = append(f.NotChecked, NotChecked{Object: name, Why: msg + ": needs another provider's CustomResourceDefinition, which the cluster does not have"})
	}
}

// record adds an answer to the file's report.
func (in *installer) record(f *File, name string, a answer) error {
	refused, warnings, err := judge(name, a)
	if err != nil {
		return fmt.Errorf("install check: %s: %s: %w", f.Path(), name, err)
	}
	f.Refused = append(f.Refused, refused...)
	f.Warnings = append(f.Warnings, warnings...)
	if len(refused) == 0 {
		f.Accepted++
	}
	return nil
}

// cleanup removes what the run created, within cleanupTimeout, also after
// an interruption: namespaces, then CRDs (waiting until they are gone, so a
// next run finds a clean cluster), and puts back the CRDs --force replaced.
func (in *installer) cleanup(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	errs := in.c.deleteAll(ctx, namespaceGVR, in.namespaces)
	for i, ns := range in.namespaces {
		in.removed("Namespace/"+ns, errs[i])
	}
	// The server deletes a CRD once its finalizer has listed the instances
	// (none) from the resource's watch cache; asked before the cache is
	// ready, it backs off for longer each time. So every resource is listed
	// from the cache first, which starts it and waits until it is ready.
	in.c.settle(ctx, in.served)
	var deleted []string
	errs = in.c.deleteAll(ctx, crdGVR, in.crds)
	for i, name := range in.crds {
		if errs[i] == nil {
			deleted = append(deleted, name)
			continue
		}
		in.removed("CustomResourceDefinition/"+name, errs[i])
	}
	left := in.c.gone(ctx, crdGVR, deleted, goneTimeout)
	for _, name := range deleted {
		if slices.Contains(left, name) {
			name += " (the server is still deleting it)"
		}
		in.rep.Removed = append(in.rep.Removed, "CustomResourceDefinition/"+name)
	}
	for _, old := range in.replaced {
		name := "CustomResourceDefinition/" + old.GetName()
		put := old.DeepCopy()
		unstructured.RemoveNestedField(put.Object, "status")
		unstructured.RemoveNestedField(put.Object, "metadata", "managedFields")
		m, err := in.c.mapping(ctx, crdGVR.GroupVersion().WithKind("CustomResourceDefinition"), false)
		if err == nil {
			err = in.c.update(ctx, m, put, false).err
		}
		if err != nil {
			in.rep.Left = append(in.rep.Left, fmt.Sprintf("%s (as the release has it; putting it back failed: %v)", name, err))
			continue
		}
		in.rep.Restored = append(in.rep.Restored, name)
	}
	if len(in.rep.Removed)+len(in.rep.Restored)+len(in.rep.Left) > 0 {
		fmt.Fprintf(in.o.Log, "install check: removed %d, put back %d, left %d\n", len(in.rep.Removed), len(in.rep.Restored), len(in.rep.Left))
	}
}

func (in *installer) removed(name string, err error) {
	if err != nil && !apierrors.IsNotFound(err) {
		in.rep.Left = append(in.rep.Left, fmt.Sprintf("%s (delete failed: %v)", name, err))
		return
	}
	in.rep.Removed = append(in.rep.Removed, name)
}

// storageResource is the resource a CRD serves at its storage version.
func storageResource(crd *unstructured.Unstructured) schema.GroupVersionResource {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	gvr := schema.GroupVersionResource{Group: group, Resource: plural}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok && m["storage"] == true {
			gvr.Version = fmt.Sprint(m["name"])
		}
	}
	return gvr
}

func isCRD(o *unstructured.Unstructured) bool {
	return o.GetKind() == "CustomResourceDefinition" && o.GroupVersionKind().Group == "apiextensions.k8s.io"
}

// objectName is Kind/name.
func objectName(o *unstructured.Unstructured) string {
	return o.GetKind() + "/" + o.GetName()
}
