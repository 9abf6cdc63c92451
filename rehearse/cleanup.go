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
// cluster-scoped objects of every components file, then waits until the
// CRDs and namespaces are gone, so a next run finds a clean cluster.
// Nothing is removed from a cluster the rehearsal refused (claim).
func (r *rehearsal) cleanup(ctx context.Context) {
	if !r.owned.claimed {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	// Each list is deleted a few at a time (the server takes a while over a
	// CRD), CRDs before namespaces, so a provider's namespace is not emptied
	// of objects its CRDs still serve.
	var waitFor []ref
	for _, list := range [][]ref{r.owned.templates, r.owned.crds, r.owned.namespaces, r.owned.others} {
		errs := make([]error, len(list))
		var g errgroup.Group
		g.SetLimit(8)
		for i, o := range list {
			g.Go(func() error {
				errs[i] = r.c.delete(ctx, o)
				return nil
			})
		}
		_ = g.Wait()
		for i, o := range list {
			switch err := errs[i]; {
			case apierrors.IsNotFound(err):
			case err != nil:
				r.rep.Left = append(r.rep.Left, fmt.Sprintf("%s (delete failed: %v)", o, err))
			default:
				r.rep.Removed = append(r.rep.Removed, o.String())
				if o.gvr == crdGVR || o.gvr == namespaceGVR {
					waitFor = append(waitFor, o)
				}
			}
		}
	}
	left := r.c.gone(ctx, waitFor, goneTimeout)
	for _, o := range left {
		r.rep.Left = append(r.rep.Left, o.String()+" (deleted; the server is still deleting it)")
	}
	slices.Sort(r.rep.Left)
	if len(r.rep.Removed)+len(r.rep.Left) > 0 {
		fmt.Fprintf(r.o.Log, "upgrade rehearsal: removed %d, left %d\n", len(r.rep.Removed), len(r.rep.Left))
	}
}
