package rehearse

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// cleanup removes what the rehearsal installed and created, within
// cleanupTimeout, also after an interruption: its template namespaces,
// the CRDs (their objects with them), the namespaces and the
// cluster-scoped objects of every components file, all asked at once, then
// waits until the CRDs are gone, so a next run finds none. A namespace is
// removed once the server accepted its deletion: the cluster's namespace
// controller empties it (a next run waits for what is still going).
// Nothing is removed from a cluster the rehearsal refused (claim).
func (r *rehearsal) cleanup(ctx context.Context) {
	if !r.owned.claimed {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	all := r.owned.all()
	errs := make([]error, len(all))
	var g errgroup.Group
	g.SetLimit(16)
	for i, o := range all {
		g.Go(func() error {
			errs[i] = r.c.delete(ctx, o)
			return nil
		})
	}
	_ = g.Wait()
	var crds []ref
	for i, o := range all {
		switch err := errs[i]; {
		case apierrors.IsNotFound(err):
		case err != nil:
			r.rep.Left = append(r.rep.Left, fmt.Sprintf("%s (delete failed: %v)", o, err))
		default:
			r.rep.Removed = append(r.rep.Removed, o.String())
			if o.gvr == crdGVR {
				crds = append(crds, o)
			}
		}
	}
	for _, o := range r.c.gone(ctx, crds, goneTimeout) {
		r.rep.Left = append(r.rep.Left, o.String()+" (deleted; the server is still deleting it)")
	}
	slices.Sort(r.rep.Left)
	if len(r.rep.Removed)+len(r.rep.Left) > 0 {
		fmt.Fprintf(r.o.Log, "upgrade rehearsal: removed %d, left %d\n", len(r.rep.Removed), len(r.rep.Left))
	}
}
