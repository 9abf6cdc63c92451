package rehearse

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"

	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/release"
)

// clusterctl's own objects: the inventory's CRD, created by init, and the
// namespace it checks cert-manager's API in (created and deleted again).
const (
	inventoryCRD         = "providers.clusterctl.cluster.x-k8s.io"
	certManagerTestSpace = "cert-manager-test"
)

// owned is what the rehearsal installs or creates: what the cluster must
// not hold before, and what is removed after.
type owned struct {
	// crds, namespaces and others (cluster-scoped objects: RBAC, ...) are
	// clusterctl's to install, from every components file served; the
	// objects in the namespaces go with them.
	crds       []ref
	namespaces []ref
	others     []ref
	// templates are the rehearsal's own namespaces, one per template file.
	templates []ref
	// claimed is set once the cluster was found to hold none of them:
	// only then is anything removed.
	claimed bool
}

// all lists everything owned, CRDs first.
func (o *owned) all() []ref {
	return slices.Concat(o.crds, o.namespaces, o.others, o.templates)
}

// components returns the objects clusterctl installs for a provider's
// release: its components as clusterctl processes them with the
// rehearsal's config (cert-manager's file as it is served).
func (r *rehearsal) components(ctx context.Context, p *release.Provider) ([]unstructured.Unstructured, error) {
	if objs, ok := r.processed[p]; ok {
		return objs, nil
	}
	var objs []unstructured.Unstructured
	if p == r.cm {
		var err error
		if objs, err = utilyaml.ToUnstructured(r.served[p].Components().Data); err != nil {
			return nil, fmt.Errorf("upgrade rehearsal: %s %s: %s: %w", p.Label(), p.Version, p.ComponentsFile, err)
		}
	} else {
		// name:version: clusterctl takes the version from the name, and the
		// URL's (Old's) without one, whatever the options say.
		c, err := r.client.GetProviderComponents(ctx, p.ID.Name+":"+p.Version, p.ID.Type, client.ComponentsOptions{})
		if err != nil {
			return nil, fmt.Errorf("upgrade rehearsal: %s %s: %s: %w", p.Label(), p.Version, p.ComponentsFile, err)
		}
		objs = c.Objs()
	}
	if r.processed == nil {
		r.processed = map[*release.Provider][]unstructured.Unstructured{}
	}
	r.processed[p] = objs
	return objs, nil
}

// claim learns what clusterctl will install, from every components file
// served, and refuses a cluster that already holds any of it: the
// rehearsal installs and deletes it for real. What an earlier run is still
// deleting is waited for.
func (r *rehearsal) claim(ctx context.Context) error {
	seen := map[ref]bool{}
	add := func(list *[]ref, o ref) {
		if !seen[o] {
			seen[o] = true
			*list = append(*list, o)
		}
	}
	add(&r.owned.crds, ref{gvr: crdGVR, name: inventoryCRD, kind: "CustomResourceDefinition"})
	add(&r.owned.namespaces, ref{gvr: namespaceGVR, name: certManagerTestSpace, kind: "Namespace"})
	provs := slices.Concat(r.l.installed(), r.l.new)
	if r.cm != nil {
		provs = append(provs, r.cm)
	}
	for _, p := range provs {
		objs, err := r.components(ctx, p)
		if err != nil {
			return err
		}
		for i := range objs {
			o := &objs[i]
			gvk := o.GroupVersionKind()
			switch {
			case gvk.Kind == "CustomResourceDefinition" && gvk.Group == crdGVR.Group:
				add(&r.owned.crds, ref{gvr: crdGVR, name: o.GetName(), kind: gvk.Kind})
			case gvk.Kind == "Namespace" && gvk.Group == "":
				add(&r.owned.namespaces, ref{gvr: namespaceGVR, name: o.GetName(), kind: gvk.Kind})
			case o.GetNamespace() == "":
				m, err := r.c.mapping(ctx, gvk, false)
				if err != nil || m.Scope.Name() == meta.RESTScopeNameNamespace {
					continue // of a kind one of the CRDs serves, or namespaced
				}
				add(&r.owned.others, ref{gvr: m.Resource, name: o.GetName(), kind: gvk.Kind})
			}
		}
	}
	var terminating, there []ref
	for _, o := range r.owned.all() {
		obj, err := r.c.get(ctx, o)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("upgrade rehearsal: %s: %w", o, err)
		case obj.GetDeletionTimestamp() != nil:
			terminating = append(terminating, o)
		default:
			there = append(there, o)
		}
	}
	if len(terminating) > 0 {
		fmt.Fprintf(r.o.Log, "upgrade rehearsal: waiting for %s being deleted (%s)\n", text.Plural(len(terminating), "object", "objects"), refList(terminating, 5))
		there = append(there, r.c.gone(ctx, terminating, goneTimeout)...)
	}
	if len(there) > 0 {
		return fmt.Errorf("upgrade rehearsal: the cluster at %s already holds %s the rehearsal would install (%s): it installs, upgrades and deletes them for real, "+
			"so it runs only on a scratch cluster without them (kind create cluster); a cluster a provider is installed in is refused",
			r.c.Host, text.Plural(len(there), "object", "objects"), refList(there, 8))
	}
	r.owned.claimed = true
	fmt.Fprintf(r.o.Log, "upgrade rehearsal on %s: clusterctl installs %s (%d CustomResourceDefinitions, %d namespaces) and upgrades to %s for real; "+
		"the objects of %s's templates are created in %s-%s-*; everything is removed at the end\n",
		r.c.Host, strings.Join(append(slices.Clone(r.rep.Core), labelsAt(r.l.old)...), ", "), len(r.owned.crds), len(r.owned.namespaces), r.o.New.Version, r.o.Old.Version, NamespacePrefix, r.run)
	return nil
}

// labelsAt names providers as label@version.
func labelsAt(provs []*release.Provider) []string {
	var out []string
	for _, p := range provs {
		out = append(out, p.Label()+"@"+p.Version)
	}
	return out
}

// refList names the first n objects of a list and counts the rest.
func refList(l []ref, n int) string {
	var names []string
	for i, o := range l {
		if i == n {
			names = append(names, fmt.Sprintf("and %d more", len(l)-n))
			break
		}
		names = append(names, o.String())
	}
	return strings.Join(names, ", ")
}
