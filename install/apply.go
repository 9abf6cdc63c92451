package install

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"

	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/values"
)

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

// installBase creates the CRDs of a base provider (Options.Base) the
// cluster lacks, as a management cluster holds them; a CRD the server
// refuses stops the check, since nothing of the release could be judged
// against it.
func (in *installer) installBase(ctx context.Context, ip *installProvider, existing map[string]*unstructured.Unstructured) error {
	var crds []*unstructured.Unstructured
	for i := range ip.objs {
		o := &ip.objs[i]
		switch {
		case !isCRD(o):
		case existing[o.GetName()] == nil:
			crds = append(crds, o)
		default: // the cluster's CRD serves its kinds
			for gk, rc := range in.kinds {
				if rc.name == o.GetName() {
					delete(in.kinds, gk)
				}
			}
		}
	}
	f := &File{Provider: ip.p.Label(), Version: ip.p.Version, File: ip.p.ComponentsFile}
	if err := in.createCRDs(ctx, f, crds, existing); err != nil {
		return err
	}
	if len(f.Refused) > 0 {
		return fmt.Errorf("install check: the CRDs of %s %s, which the release is judged against, were refused: %s", ip.p.Label(), ip.p.Version, f.Refused[0])
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

// templates sends every flavor and ClusterClass of a provider, each
// processed by clusterctl into the templates' namespace.
func (in *installer) templates(ctx context.Context, ip *installProvider, ns string) error {
	for _, t := range templateFiles(ip.p) {
		f, objs, set, err := in.process(ctx, ip, t, ns)
		in.rep.Files = append(in.rep.Files, f)
		if err != nil {
			return err
		}
		// The class a need names is the one of the flavor applied first.
		from := func(class string) string {
			for _, n := range t.needs {
				if name, ok := n.Resolve(set); ok && name == class && len(n.Files) == 1 {
					return n.Files[0]
				}
			}
			return ""
		}
		for i := range objs {
			if err := in.send(ctx, f, &objs[i], ns); err != nil {
				return err
			}
			n := len(f.Refused)
			f.Refused = append(f.Refused, topologyRefusals(&objs[i], in.vals.Classes(), from)...)
			in.standInRefusals(f, objs[i].GroupVersionKind(), n)
		}
	}
	return nil
}

// template is a flavor (cluster-template[-flavor].yaml) or ClusterClass
// (clusterclass-class.yaml) file of a provider.
type template struct {
	file, flavor, class string
	// needs are the flavors that ship the classes its topology Clusters
	// name (package values' Topology), applied before it.
	needs []values.Need
}

// templateFiles lists a provider's template files in the order users
// apply them: its flavors by flavor name, those that ship the class of
// another flavor's topology first, then its ClusterClass files.
func templateFiles(p *release.Provider) []template {
	var files []template
	topo := values.TopologyOf(p.Files)
	for _, f := range p.Files {
		if flavor, ok := release.FlavorOf(f.Name); ok {
			files = append(files, template{file: f.Name, flavor: flavor, needs: topo.Needs(f.Name)})
		}
	}
	slices.SortFunc(files, func(a, b template) int { return strings.Compare(a.flavor, b.flavor) })
	slices.SortStableFunc(files, func(a, b template) int {
		return boolOrder(topo.Needed(b.file)) - boolOrder(topo.Needed(a.file))
	})
	for _, f := range p.Files {
		if class, ok := release.ClassOf(f.Name); ok {
			files = append(files, template{file: f.Name, class: class, needs: topo.Needs(f.Name)})
		}
	}
	return files
}

// process processes one template file as clusterctl does, into namespace
// ns, with the variables given the values package values chooses (real
// values, else stand-ins); set are the session's values then. When
// clusterctl cannot process it, the file says so (NotChecked) and there
// are no objects; the error is a clusterctl config that cannot be opened.
func (in *installer) process(ctx context.Context, ip *installProvider, t template, ns string) (f *File, objs []unstructured.Unstructured, set map[string]string, err error) {
	raw, _ := ip.p.File(t.file)
	f = &File{Provider: ip.p.Label(), Version: ip.p.Version, File: t.file}
	for _, n := range t.needs {
		f.After = append(f.After, n.Files...)
	}
	s, err := in.session(ctx, ip)
	if err != nil {
		return f, nil, nil, fmt.Errorf("install check: %s: %w", f.Path(), err)
	}
	s.Set("NAMESPACE", ns)
	err = in.standIns(s, f, raw.Data)
	if err == nil {
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
		return f, nil, s.Values(), nil
	}
	return f, objs, s.Values(), nil
}

// boolOrder is 1 for true, 0 for false.
func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
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
		f.NotChecked = append(f.NotChecked, NotChecked{Object: name, Why: why, Group: gvk.Group, Needs: "cert-manager"})
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
	if coreDefaults(obj) {
		f.Defaulted = append(f.Defaulted, name)
	}
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
	n := len(f.Refused)
	if err := in.record(f, name, a); err != nil {
		return err
	}
	in.standInRefusals(f, gvk, n)
	return nil
}

// standInRefusals names, in each refusal of f from the n-th on, the
// stand-ins in the refused field, and moves those a CEL rule made to
// f.RefusedWithStandIns.
func (in *installer) standInRefusals(f *File, gvk schema.GroupVersionKind, n int) {
	stand := map[string]string{}
	for _, v := range f.Variables {
		if v.Placeholder {
			stand[v.Name] = v.Value
		}
	}
	kept := f.Refused[:n]
	for _, r := range f.Refused[n:] {
		for _, name := range slices.Sorted(maps.Keys(stand)) {
			if slices.ContainsFunc(f.places[name], func(p values.Place) bool { return p.Kind == gvk.Kind && fieldWithin(p.Field, r.Field) }) {
				r.StandIns = append(r.StandIns, name+"="+stand[name])
			}
		}
		if len(r.StandIns) > 0 && in.isCEL(gvk, r) {
			f.RefusedWithStandIns = append(f.RefusedWithStandIns, r)
			continue
		}
		kept = append(kept, r)
	}
	f.Refused = kept
}

// fieldWithin says whether field lies in (or is) the refused field.
func fieldWithin(field, refused string) bool {
	return refused == "" || field == refused || strings.HasPrefix(field, refused+".") || strings.HasPrefix(field, refused+"[")
}

// isCEL says whether a refusal is a CEL rule's: the server's own words,
// or a rule on the refused field's schema.
func (in *installer) isCEL(gvk schema.GroupVersionKind, r Refusal) bool {
	if strings.Contains(r.Message, "failed rule") {
		return true
	}
	if r.Field == "" {
		return false
	}
	s := in.vals.FieldSchema(gvk, parseField(r.Field))
	if s == nil {
		return false
	}
	_, ok := s.Extensions["x-kubernetes-validations"]
	return ok
}

// parseField reads a field path the server wrote (spec.a[0].b).
func parseField(field string) []any {
	var out []any
	for _, part := range strings.Split(field, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, name)
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			if i, err := strconv.Atoi(idx); err == nil {
				out = append(out, i)
			} else {
				out = append(out, idx)
			}
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out
}

// unserved judges an object of a kind the cluster serves no resource for:
// refused when the release should serve it (its CRDs serve the group, and
// the kind is not known as another provider's) or Kubernetes should; else
// not checked, naming whose CRDs it needs where its kind tells.
func (in *installer) unserved(f *File, obj *unstructured.Unstructured) {
	gvk := obj.GroupVersionKind()
	name := objectName(obj)
	msg := fmt.Sprintf("no matches for kind %q in version %q", gvk.Kind, gvk.GroupVersion())
	needs := owner(gvk.GroupKind())
	switch {
	case in.groups[gvk.Group] && (needs == "" || in.labels[needs]):
		f.Refused = append(f.Refused, Refusal{Object: name, Field: "kind", Reason: "not served",
			Message: msg + ": no CustomResourceDefinition of the release or the cluster defines it, though the release's CRDs serve its group"})
	case in.clusterGroups[gvk.Group]:
		why := msg + ": the cluster's CRDs for " + gvk.Group + " do not serve it (another provider's, at another version?)"
		if needs != "" {
			why = msg + ": the cluster's CRDs for " + gvk.Group + " do not serve it: needs " + needs + "'s CRDs at a version that serves it"
		}
		f.NotChecked = append(f.NotChecked, NotChecked{Object: name, Why: why, Group: gvk.Group, Needs: needs})
	case !strings.Contains(gvk.Group, ".") || strings.HasSuffix(gvk.Group, ".k8s.io"):
		f.Refused = append(f.Refused, Refusal{Object: name, Field: "apiVersion", Reason: "not served", Message: msg + ": the API server does not serve it"})
	default:
		whose := "another provider's"
		if needs != "" {
			whose = needs + "'s"
		}
		f.NotChecked = append(f.NotChecked, NotChecked{Object: name, Why: msg + ": needs " + whose + " CustomResourceDefinition, which the cluster does not have", Group: gvk.Group, Needs: needs})
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

// objectName is Kind/name.
func objectName(o *unstructured.Unstructured) string {
	return o.GetKind() + "/" + o.GetName()
}

// fieldWarning matches the warnings fieldValidation=Warn gives for what
// Strict (kubectl's default) refuses.
var fieldWarning = regexp.MustCompile(`^(unknown|duplicate) field "([^"]*)"`)

// celSkipped begins what the API server adds, as a cause of no field, after
// a custom resource's blocking schema errors (apiextensions-apiserver's
// hasBlockingErr): a note on those refusals, not a refusal of its own.
const celSkipped = "some validation rules were not checked"

// judge turns an answer into refusals of object (the server's causes, each
// with its field, and the field warnings) and other warnings. An error that
// is not the server's answer (a timeout, a refused connection) is returned.
func judge(object string, a answer) (refused []Refusal, warnings []string, err error) {
	for _, w := range a.warnings {
		if m := fieldWarning.FindStringSubmatch(w); m != nil {
			refused = append(refused, Refusal{Object: object, Field: m[2], Message: w, Reason: "strict field validation"})
			continue
		}
		warnings = append(warnings, object+": "+w)
	}
	if a.err == nil {
		return refused, warnings, nil
	}
	var st apierrors.APIStatus
	if !errors.As(a.err, &st) || st.Status().Code == 0 || isTransient(a.err) {
		return refused, warnings, a.err
	}
	s := st.Status()
	reason := fmt.Sprintf("%d %s", s.Code, s.Reason)
	if s.Details != nil && len(s.Details.Causes) > 0 {
		first := len(refused)
		for _, c := range s.Details.Causes {
			field := c.Field
			if field == "<nil>" {
				field = ""
			}
			if i := strings.Index(c.Message, celSkipped); field == "" && i >= 0 && len(refused) > first {
				refused[len(refused)-1].Message += "; the server then skipped the object's validation rules (x-kubernetes-validations): " + c.Message[i:]
				continue
			}
			refused = append(refused, Refusal{Object: object, Field: field, Message: c.Message, Reason: reason})
		}
		return refused, warnings, nil
	}
	return append(refused, Refusal{Object: object, Message: s.Message, Reason: reason}), warnings, nil
}

// isTransient says whether an answer is about the server or the check's
// credentials, not the object.
func isTransient(err error) bool {
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err)
}
