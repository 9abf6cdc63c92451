package install

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"

	"github.com/capirepo/capirepo/release"
)

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
		// Recorded before it is sent: a request whose reply is lost (an
		// interruption, a dropped connection) may still have replaced or
		// created the CRD, so cleanup must put back or remove it. Only the
		// server's own refusal says nothing changed.
		if old != nil {
			in.replaced = append(in.replaced, old)
			a = in.c.update(ctx, m, live, false)
		} else {
			in.crds = append(in.crds, name)
			in.served = append(in.served, storageResource(crd))
			if in.unsure == nil {
				in.unsure = map[string]bool{}
			}
			in.unsure[name] = true
			a = in.c.create(ctx, m, live, false)
		}
		if answered(a.err) {
			in.forget(old, name)
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
		if old == nil {
			delete(in.unsure, name)
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
	in.c.Mapper.Reset()
	return nil
}

// answered says err is the server's refusal, so the request changed
// nothing; any other error (the context's, the connection's) leaves the
// outcome unknown.
func answered(err error) bool {
	var s apierrors.APIStatus
	return err != nil && errors.As(err, &s)
}

// forget drops what createCRDs recorded before sending a request the server
// refused: old, the CRD it would have replaced, or name, the one it would
// have created.
func (in *installer) forget(old *unstructured.Unstructured, name string) {
	if old != nil {
		in.replaced = slices.DeleteFunc(in.replaced, func(o *unstructured.Unstructured) bool { return o == old })
		return
	}
	if i := slices.Index(in.crds, name); i >= 0 {
		in.crds = slices.Delete(in.crds, i, i+1)
		in.served = slices.Delete(in.served, i, i+1)
	}
	delete(in.unsure, name)
}

// refuseCRD records that a release CRD serves nothing in this run.
func (in *installer) refuseCRD(crd *unstructured.Unstructured, why string) {
	for _, rc := range in.kinds {
		if rc.name == crd.GetName() && rc.refused == "" {
			rc.refused = why
		}
	}
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
