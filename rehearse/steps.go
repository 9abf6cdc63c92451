package rehearse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client"

	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/release"
)

// fieldManager is the field manager of the rehearsal's no-op applies.
const fieldManager = "capirepo-rehearsal"

// init is clusterctl init of Core and Old.
func (r *rehearsal) init(ctx context.Context) (string, error) {
	provs := r.l.installed()
	var comps []client.Components
	err := r.clusterctl(ctx, func(ctx context.Context) error {
		var err error
		comps, err = r.client.Init(ctx, initOptions(r.kubeconfig, provs))
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		r.fail("init", r.words(err), fmt.Sprintf("clusterctl init did not finish: %s is not installed (what it installed is removed)", strings.Join(labelsAt(provs), ", ")))
		return "clusterctl init " + r.o.Old.Version + " failed", nil
	}
	n := 0
	for _, c := range comps {
		n += len(c.Objs())
	}
	return fmt.Sprintf("clusterctl init installed %s: %d objects", strings.Join(labelsAt(provs), ", "), n), nil
}

// clusterctl runs one of clusterctl's commands, stopped when clusterctl
// keeps retrying an object the API server refuses: the error is then the
// refusal (a RefusedError).
func (r *rehearsal) clusterctl(ctx context.Context, run func(context.Context) error) error {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := r.log.stopOnRefusal(cancel)
	err := run(cctx)
	done()
	var refused *RefusedError
	if cause := context.Cause(cctx); err != nil && errors.As(cause, &refused) {
		return refused
	}
	return err
}

// words is clusterctl's error, with the cause of its last retry when the
// error does not hold it (a retry that ran out says only how many times it tried).
func (r *rehearsal) words(err error) string {
	var refused *RefusedError
	if errors.As(err, &refused) {
		return refused.Error()
	}
	msg := err.Error()
	if cause := r.log.retried(); cause != "" && !strings.Contains(msg, cause) {
		msg += " (its last retry: " + cause + ")"
	}
	return msg
}

// created is one object of Old's templates, as created and read before the
// upgrade.
type created struct {
	rep *Object
	gvk schema.GroupVersionKind
	ns  string
	// before is the object read back before the upgrade, in version.
	before  *unstructured.Unstructured
	version string
}

// create creates the objects of Old's templates for real, each file in a
// namespace of its own, then reads each back in its storage version.
func (r *rehearsal) create(ctx context.Context, templates []install.Template) (string, error) {
	r.c.Mapper.Reset() // init installed the CRDs
	crds, err := r.c.crds(ctx)
	if err != nil {
		return "", fmt.Errorf("upgrade rehearsal: %w", err)
	}
	installed := map[schema.GroupKind]bool{}
	for _, crd := range crds {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		installed[schema.GroupKind{Group: group, Kind: kind}] = true
	}
	files := 0
	for _, t := range templates {
		if len(t.Objects) == 0 {
			continue
		}
		files++
		ns := ref{gvr: namespaceGVR, name: t.Namespace, kind: "Namespace"}
		r.owned.templates = append(r.owned.templates, ns)
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": t.Namespace, "labels": map[string]any{NamespacePrefix: r.run}}}}
		if _, err := r.c.Dyn.Resource(namespaceGVR).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
			return "", fmt.Errorf("upgrade rehearsal: create Namespace %s: %w", t.Namespace, err)
		}
		r.rep.Created = append(r.rep.Created, ns.String())
		for i := range t.Objects {
			r.createObject(ctx, t, &t.Objects[i], installed)
		}
	}
	for _, o := range r.objects {
		o.version = storageVersion(crds, o.gvk)
		before, err := r.read(ctx, o, o.version)
		if err != nil {
			return "", fmt.Errorf("upgrade rehearsal: read %s back: %w", o.rep.Object, err)
		}
		o.before = before
	}
	d := fmt.Sprintf("%s from %s created for real", text.Plural(len(r.objects), "object", "objects"), text.Plural(files, "file", "files"))
	if n := len(r.rep.Objects) - len(r.objects); n > 0 {
		d += fmt.Sprintf("; %d not created (listed)", n)
	}
	return d, nil
}

// createObject creates one object of a template file in its namespace;
// discovery is waited for when a CRD of the cluster serves its kind (one
// clusterctl just installed may not be discovered yet).
func (r *rehearsal) createObject(ctx context.Context, t install.Template, obj *unstructured.Unstructured, installed map[schema.GroupKind]bool) {
	gvk := obj.GroupVersionKind()
	rep := &Object{File: t.File.Path(), Object: obj.GetKind() + "/" + obj.GetName(), APIVersion: obj.GetAPIVersion()}
	r.rep.Objects = append(r.rep.Objects, rep)
	m, err := r.c.mapping(ctx, gvk, installed[gvk.GroupKind()])
	if err != nil {
		rep.NotCreated = fmt.Sprintf("the cluster serves no %s in %s (%v): its provider is not installed", gvk.Kind, gvk.GroupVersion(), err)
		return
	}
	ns := ""
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns = t.Namespace
		obj.SetNamespace(ns)
		rep.Object = obj.GetKind() + "/" + ns + "/" + obj.GetName()
	}
	got, err := r.c.resource(m, ns).Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil {
		rep.NotCreated = err.Error()
		return
	}
	rep.Created, rep.UID = true, string(got.GetUID())
	r.objects = append(r.objects, &created{rep: rep, gvk: gvk, ns: ns})
}

// storageVersion is the version a kind is stored in: its CRD's storage
// version; for a built-in kind, the version given.
func storageVersion(crds map[string]*unstructured.Unstructured, gvk schema.GroupVersionKind) string {
	for _, crd := range crds {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		if group != gvk.Group || kind != gvk.Kind {
			continue
		}
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			if m, ok := v.(map[string]any); ok && m["storage"] == true {
				return fmt.Sprint(m["name"])
			}
		}
	}
	return gvk.Version
}

// read reads an object in a version.
func (r *rehearsal) read(ctx context.Context, o *created, version string) (*unstructured.Unstructured, error) {
	m, err := r.c.mapping(ctx, o.gvk.GroupKind().WithVersion(version), true)
	if err != nil {
		return nil, err
	}
	return r.c.resource(m, o.ns).Get(ctx, nameOf(o.rep.Object), metav1.GetOptions{})
}

// nameOf is the name of Kind/[namespace/]name.
func nameOf(object string) string {
	return object[strings.LastIndex(object, "/")+1:]
}

// plan asks clusterctl upgrade plan whether it offers New.
func (r *rehearsal) plan(ctx context.Context) (string, error) {
	plans, err := r.client.PlanUpgrade(ctx, client.PlanUpgradeOptions{Kubeconfig: r.kubeconfig})
	if err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		r.fail("plan", r.words(err), "nothing upgraded: the cluster runs "+r.o.Old.Version)
		return "clusterctl upgrade plan failed", nil
	}
	missing := notOffered(plans, r.l.new)
	if len(missing) > 0 {
		// clusterctl upgrade apply is asked anyway: given the version, it
		// says why in its own words, before it changes anything.
		r.planMissing = missing
		return "clusterctl upgrade plan does not offer " + strings.Join(missing, "; "), nil
	}
	return "clusterctl upgrade plan offers " + r.o.New.Version, nil
}

// notOffered lists the providers of news no plan offers at their version,
// with what the plans offer instead.
func notOffered(plans []client.UpgradePlan, news []*release.Provider) []string {
	var out []string
	for _, p := range news {
		var offers []string
		found := false
		for _, pl := range plans {
			for _, it := range pl.Providers {
				if it.ProviderName != p.ID.Name || it.Type != string(p.ID.Type) {
					continue
				}
				if it.NextVersion == p.Version {
					found = true
				}
				next := it.NextVersion
				if next == "" {
					next = "nothing (up to date)"
				}
				offers = append(offers, fmt.Sprintf("%s for contract %s", next, pl.Contract))
			}
		}
		if !found {
			if len(offers) == 0 {
				offers = []string{"nothing: not in the plan"}
			}
			out = append(out, fmt.Sprintf("%s %s (it offers %s)", p.Label(), p.Version, strings.Join(offers, ", ")))
		}
	}
	return out
}

// check sends New's CRDs as clusterctl upgrade apply will patch them (the
// whole object as a merge patch, after it deleted Old's components), with
// dryRun=All, and checks their status.storedVersions: an upgrade the server
// refuses is reported before clusterctl deletes anything.
func (r *rehearsal) check(ctx context.Context) (string, error) {
	crds, err := r.c.crds(ctx)
	if err != nil {
		return "", fmt.Errorf("upgrade rehearsal: %w", err)
	}
	var refusals []string
	n := 0
	for _, p := range r.l.new {
		objs, err := r.components(ctx, p)
		if err != nil {
			return "", err
		}
		for i := range objs {
			o := &objs[i]
			if o.GetKind() != "CustomResourceDefinition" || o.GroupVersionKind().Group != crdGVR.Group {
				continue
			}
			n++
			cur := crds[o.GetName()]
			var msg string
			if dropped := droppedStoredVersions(cur, o); len(dropped) > 0 {
				msg = fmt.Sprintf("status.storedVersions holds %s, which %s's spec.versions no longer lists (objects are stored in it)", strings.Join(dropped, ", "), r.o.New.Version)
			}
			if err := r.dryRun(ctx, cur, o); err != nil {
				if !answered(err) {
					return "", fmt.Errorf("upgrade rehearsal: dry run of %s: %w", o.GetName(), err)
				}
				if msg != "" {
					msg = err.Error() + " (" + msg + ")"
				} else {
					msg = err.Error()
				}
			}
			if msg != "" {
				refusals = append(refusals, "CustomResourceDefinition/"+o.GetName()+": "+msg)
			}
		}
	}
	if len(refusals) > 0 {
		r.fail("check", "the API server refuses "+r.o.New.Version+"'s CRDs as clusterctl upgrade apply sends them: "+strings.Join(refusals, "; "),
			wouldState(r.o.Old.Version, r.o.New.Version, r.l.labels()))
		return fmt.Sprintf("%d of %d CRDs of %s refused before applying", len(refusals), n, r.o.New.Version), nil
	}
	return fmt.Sprintf("%d CRDs of %s accepted as clusterctl will patch them (dry run), status.storedVersions kept", n, r.o.New.Version), nil
}

// dryRun sends a CRD as clusterctl's upgrade does, with dryRun=All: a merge
// patch of the whole object onto the cluster's, or a create.
func (r *rehearsal) dryRun(ctx context.Context, cur, crd *unstructured.Unstructured) error {
	dry := []string{metav1.DryRunAll}
	if cur == nil {
		_, err := r.c.Dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{DryRun: dry})
		return err
	}
	body, err := crd.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = r.c.Dyn.Resource(crdGVR).Patch(ctx, crd.GetName(), types.MergePatchType, body, metav1.PatchOptions{DryRun: dry})
	return err
}

// answered says err is the server's refusal.
func answered(err error) bool {
	var s apierrors.APIStatus
	return errors.As(err, &s)
}

// droppedStoredVersions lists the versions the cluster's CRD has stored
// objects in that the new CRD's spec.versions lacks: the API server
// refuses such an update.
func droppedStoredVersions(cur, crd *unstructured.Unstructured) []string {
	if cur == nil {
		return nil
	}
	stored, _, _ := unstructured.NestedStringSlice(cur.Object, "status", "storedVersions")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	has := map[string]bool{}
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok {
			has[fmt.Sprint(m["name"])] = true
		}
	}
	var out []string
	for _, v := range stored {
		if !has[v] {
			out = append(out, v)
		}
	}
	return out
}

// apply is clusterctl upgrade apply to New, then clusterctl upgrade plan
// again, which must find the cluster up to date.
func (r *rehearsal) apply(ctx context.Context) (string, error) {
	err := r.clusterctl(ctx, func(ctx context.Context) error {
		return r.client.ApplyUpgrade(ctx, applyOptions(r.kubeconfig, r.l.new))
	})
	if err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		msg := r.words(err)
		if len(r.planMissing) > 0 {
			msg += "; clusterctl upgrade plan did not offer " + strings.Join(r.planMissing, "; ")
		}
		r.fail("apply", msg, r.stateAfter(ctx))
		return "clusterctl upgrade apply failed", nil
	}
	if len(r.planMissing) > 0 {
		r.fail("plan", "clusterctl upgrade plan does not offer "+strings.Join(r.planMissing, "; ")+
			", though clusterctl upgrade apply with the version installed it: users who follow the plan never upgrade", "upgraded to "+r.o.New.Version)
		return "clusterctl upgrade apply installed " + r.o.New.Version, nil
	}
	plans, err := r.client.PlanUpgrade(ctx, client.PlanUpgradeOptions{Kubeconfig: r.kubeconfig})
	if err != nil {
		return "", fmt.Errorf("upgrade rehearsal: clusterctl upgrade plan after the upgrade: %w", err)
	}
	d := "clusterctl upgrade apply installed " + r.o.New.Version
	if inv := r.inventory(ctx); len(inv) > 0 {
		d += "; inventory: " + strings.Join(inv, ", ")
	}
	if upToDate(plans, r.l.new) {
		d += "; clusterctl upgrade plan: up to date"
	}
	return d, nil
}

// upToDate says whether no plan offers any of the providers a version.
func upToDate(plans []client.UpgradePlan, news []*release.Provider) bool {
	for _, pl := range plans {
		for _, it := range pl.Providers {
			for _, p := range news {
				if it.ProviderName == p.ID.Name && it.Type == string(p.ID.Type) && it.NextVersion != "" {
					return false
				}
			}
		}
	}
	return true
}

var inventoryGVR = schema.GroupVersionResource{Group: clusterctlv1.GroupVersion.Group, Version: clusterctlv1.GroupVersion.Version, Resource: "providers"}

// inventory lists the versions clusterctl's inventory holds for the
// providers upgraded, as label@version.
func (r *rehearsal) inventory(ctx context.Context) []string {
	l, err := r.c.Dyn.Resource(inventoryGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range r.l.old {
		for _, it := range l.Items {
			name, _, _ := unstructured.NestedString(it.Object, "providerName")
			typ, _, _ := unstructured.NestedString(it.Object, "type")
			v, _, _ := unstructured.NestedString(it.Object, "version")
			if name == p.ID.Name && typ == string(p.ID.Type) {
				out = append(out, p.Label()+"@"+v)
			}
		}
	}
	return out
}

// stateAfter says what a failed clusterctl upgrade apply left, from what
// clusterctl logged and what the cluster holds.
func (r *rehearsal) stateAfter(ctx context.Context) string {
	s := applyState{old: r.o.Old.Version, new: r.o.New.Version, providers: r.l.labels(), inventory: r.inventory(ctx)}
	for _, p := range r.l.new {
		for _, pat := range []struct {
			msg string
			to  *bool
		}{{"Deleting", &s.deleted}, {"Installing", &s.installing}} {
			kv := map[string]string{}
			if pat.msg == "Installing" {
				kv = map[string]string{"provider": p.Label(), "version": p.Version}
			}
			if r.log.saw(pat.msg, kv) {
				*pat.to = true
			}
		}
		objs, err := r.components(ctx, p)
		if err != nil {
			continue
		}
		for i := range objs {
			s.total++
			m, err := r.c.mapping(ctx, objs[i].GroupVersionKind(), false)
			if err != nil {
				continue
			}
			if _, err := r.c.resource(m, objs[i].GetNamespace()).Get(ctx, objs[i].GetName(), metav1.GetOptions{}); err == nil {
				s.present++
			}
		}
	}
	return s.String()
}

// readBack reads every object created back after the upgrade (it must
// have the same uid) in its storage version, compares it with what was
// read before when that is the same version, and applies it server-side
// unchanged: CEL transition rules and ratcheting validation run on it.
func (r *rehearsal) readBack(ctx context.Context) (string, error) {
	r.c.Mapper.Reset() // the upgrade installed New's CRDs
	crds, err := r.c.crds(ctx)
	if err != nil {
		return "", fmt.Errorf("upgrade rehearsal: %w", err)
	}
	var refused []string
	same, accepted, changed := 0, 0, 0
	for _, o := range r.objects {
		version := storageVersion(crds, o.gvk)
		got, err := r.read(ctx, o, version)
		switch {
		case meta.IsNoMatchError(err):
			o.rep.ReadBack = fmt.Sprintf("%s is no longer served in %s: %v", o.gvk.Kind, version, err)
		case apierrors.IsNotFound(err):
			o.rep.ReadBack = "gone after the upgrade"
		case err != nil:
			return "", fmt.Errorf("upgrade rehearsal: read %s back: %w", o.rep.Object, err)
		case string(got.GetUID()) != o.rep.UID:
			o.rep.ReadBack = fmt.Sprintf("another object: uid %s, created as %s", got.GetUID(), o.rep.UID)
		default:
			o.rep.ReadBack = "same uid"
			same++
		}
		if o.rep.ReadBack != "same uid" {
			o.rep.Refused = true
			refused = append(refused, o.rep.Object+": "+o.rep.ReadBack)
			continue
		}
		if version == o.version {
			if o.rep.Changed, err = mergePatch(o.before, got); err != nil {
				return "", err
			}
			if o.rep.Changed != "" {
				changed++
			}
		}
		if err := r.noOp(ctx, o, got, version); err != nil {
			return "", err
		}
		switch {
		case o.rep.Refused:
			refused = append(refused, o.rep.Object+": no-op apply in "+version+": "+o.rep.NoOp)
		case o.rep.NoOp == "accepted":
			accepted++
		}
	}
	d := fmt.Sprintf("%d of %d objects read back with the same uid, %d accepted unchanged in their storage version", same, len(r.objects), accepted)
	if changed > 0 {
		d += fmt.Sprintf("; %d read back changed (listed)", changed)
	}
	if len(refused) > 0 {
		r.fail("read back", strings.Join(refused, "; "), fmt.Sprintf("upgraded to %s; %s of %s's templates cannot be read or updated as they are (users' objects of these kinds alike)",
			r.o.New.Version, text.Plural(len(refused), "object", "objects"), r.o.Old.Version))
	}
	return d, nil
}

// noOp applies an object server-side as it reads (no field changed), in
// version, and records the answer. A refusal of an object stored in
// another version before the upgrade is not held against New: without its
// conversion webhook the server reads it unconverted.
func (r *rehearsal) noOp(ctx context.Context, o *created, got *unstructured.Unstructured, version string) error {
	m, err := r.c.mapping(ctx, o.gvk.GroupKind().WithVersion(version), false)
	if err != nil {
		return fmt.Errorf("upgrade rehearsal: %s: %w", o.rep.Object, err)
	}
	body := applyBody(got)
	_, err = r.c.resource(m, o.ns).Apply(ctx, got.GetName(), body, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	switch {
	case err == nil:
		o.rep.NoOp = "accepted"
	case !answered(err):
		return fmt.Errorf("upgrade rehearsal: apply %s: %w", o.rep.Object, err)
	case version != o.version:
		o.rep.NoOp = fmt.Sprintf("not judged: stored in %s before the upgrade and read in %s without its conversion webhook; the server said: %v", o.version, version, err)
	default:
		o.rep.NoOp, o.rep.Refused = err.Error(), true
	}
	return nil
}

// applyBody is an object as read, without what the server sets: what a
// no-op server-side apply sends.
func applyBody(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	for _, f := range []string{"resourceVersion", "uid", "generation", "creationTimestamp", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(out.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(out.Object, "status")
	return out
}

// mergePatch is a JSON merge patch from before to after, leaving out what
// the server changes on every write and the status; "" when nothing else
// changed.
func mergePatch(before, after *unstructured.Unstructured) (string, error) {
	a, err := json.Marshal(applyBody(before).Object)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(applyBody(after).Object)
	if err != nil {
		return "", err
	}
	p, err := jsonpatch.CreateMergePatch(a, b)
	if err != nil {
		return "", err
	}
	if string(p) == "{}" {
		return "", nil
	}
	return string(p), nil
}
