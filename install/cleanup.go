package install

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// cleanup removes what the run created, within cleanupTimeout, also after
// an interruption: namespaces, then CRDs (waiting until they are gone, so a
// next run finds a clean cluster), and puts back the CRDs --force replaced.
// What it removes and puts back was recorded before each request was sent,
// so a request whose reply an interruption lost is undone too: a CRD the
// server does not hold was never created, and putting back one that was
// never replaced writes what the server holds already.
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
		if in.unsure[name] && apierrors.IsNotFound(errs[i]) {
			continue // its create's reply was lost, and it never made it
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
