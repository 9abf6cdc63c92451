package install

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"

	"github.com/capirepo/capirepo/internal/kubeapi"
)

// Bounds of the install check's waits on the API server.
const (
	// installRequestTimeout bounds one request when the config sets none.
	installRequestTimeout = 30 * time.Second
	// establishTimeout bounds the wait for a created CRD to be Established
	// and served by discovery.
	establishTimeout = 60 * time.Second
	// cleanupTimeout bounds removing what the check created, also after
	// the run was interrupted.
	cleanupTimeout = 60 * time.Second
	// goneTimeout bounds the wait for deleted CRDs to be gone: the server
	// deletes a CRD once its instances are; a CRD still being deleted is
	// reported as such, and the next run waits for it (terminating).
	goneTimeout = 5 * time.Second
)

var (
	crdGVR       = kubeapi.CRDs
	namespaceGVR = kubeapi.Namespaces
)

// cluster is the API server the install check talks to: raw requests (so
// each answer's warnings are its own), a dynamic client for CRDs and
// namespaces, and a discovery-based REST mapper.
type cluster struct {
	*kubeapi.Clients
}

func newCluster(cfg *rest.Config) (*cluster, error) {
	k, err := kubeapi.Connect(cfg, "capirepo-install-check", installRequestTimeout)
	if err != nil {
		return nil, err
	}
	return &cluster{k}, nil
}

// openAPI returns the server's OpenAPI v3 document of a group version.
func (c *cluster) openAPI(gv schema.GroupVersion) (*spec3.OpenAPI, error) {
	return c.OpenAPI(gv)
}

// mapping finds the resource of a kind. When wait is set (a CRD the check
// just created serves the kind) discovery is asked again until it serves
// it, within establishTimeout.
func (c *cluster) mapping(ctx context.Context, gvk schema.GroupVersionKind, waitFor bool) (*meta.RESTMapping, error) {
	return c.Mapping(ctx, gvk, waitFor, establishTimeout)
}

// resourcePath is the request path of a resource, in namespace ns when it is
// namespaced, and of the object name when name is set.
func resourcePath(m *meta.RESTMapping, ns, name string) []string {
	gv := m.Resource.GroupVersion()
	p := []string{"/apis", gv.Group, gv.Version}
	if gv.Group == "" {
		p = []string{"/api", gv.Version}
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		p = append(p, "namespaces", ns)
	}
	p = append(p, m.Resource.Resource)
	if name != "" {
		p = append(p, name)
	}
	return p
}

// answer is what the server said to one create or update.
type answer struct {
	warnings []string
	err      error
}

// create sends obj with create; fieldValidation=Warn makes the server
// validate everything and report unknown fields as warnings, where Strict
// would stop at the first unknown field and hide every schema and CEL error.
func (c *cluster) create(ctx context.Context, m *meta.RESTMapping, obj *unstructured.Unstructured, dryRun bool) answer {
	body, err := obj.MarshalJSON()
	if err != nil {
		return answer{err: err}
	}
	req := c.Raw.Post().AbsPath(resourcePath(m, obj.GetNamespace(), "")...).
		Param("fieldValidation", "Warn").SetHeader("Content-Type", "application/json").Body(body)
	if dryRun {
		req = req.Param("dryRun", metav1.DryRunAll)
	}
	return result(req.Do(ctx))
}

// update replaces the object of obj's name with obj, at its current
// resourceVersion.
func (c *cluster) update(ctx context.Context, m *meta.RESTMapping, obj *unstructured.Unstructured, dryRun bool) answer {
	cur, err := c.Dyn.Resource(m.Resource).Namespace(namespaceOf(m, obj)).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return answer{err: err}
	}
	obj = obj.DeepCopy()
	obj.SetResourceVersion(cur.GetResourceVersion())
	body, err := obj.MarshalJSON()
	if err != nil {
		return answer{err: err}
	}
	req := c.Raw.Put().AbsPath(resourcePath(m, obj.GetNamespace(), obj.GetName())...).
		Param("fieldValidation", "Warn").SetHeader("Content-Type", "application/json").Body(body)
	if dryRun {
		req = req.Param("dryRun", metav1.DryRunAll)
	}
	return result(req.Do(ctx))
}

func namespaceOf(m *meta.RESTMapping, obj *unstructured.Unstructured) string {
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return obj.GetNamespace()
	}
	return ""
}

func result(r rest.Result) answer {
	a := answer{err: r.Error()}
	for _, w := range r.Warnings() {
		a.warnings = append(a.warnings, w.Text)
	}
	return a
}

// crds lists the cluster's CRDs.
func (c *cluster) crds(ctx context.Context) ([]unstructured.Unstructured, error) {
	l, err := c.Dyn.Resource(crdGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list CustomResourceDefinitions: %w", err)
	}
	return l.Items, nil
}

// established waits until a CRD is Established, or says why it is not:
// the condition's message when its names are not accepted, or the wait ran out.
func (c *cluster) established(ctx context.Context, name string) (string, error) {
	var why string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, establishTimeout, true, func(ctx context.Context) (bool, error) {
		crd, err := c.Dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			switch {
			case m["type"] == "Established" && m["status"] == "True":
				return true, nil
			case m["type"] == "NamesAccepted" && m["status"] == "False":
				why = fmt.Sprintf("not Established: NamesAccepted is False: %v", m["message"])
				return true, nil
			}
		}
		return false, nil
	})
	switch {
	case why != "":
		return why, nil
	case wait.Interrupted(err) && ctx.Err() == nil:
		return fmt.Sprintf("not Established within %v", establishTimeout), nil
	}
	return "", err
}

// settle lists each resource from the server's watch cache (resourceVersion
// 0) until the cache answers, within goneTimeout in all: a cache that is
// still starting answers 429.
func (c *cluster) settle(ctx context.Context, gvrs []schema.GroupVersionResource) {
	ctx, cancel := context.WithTimeout(ctx, goneTimeout)
	defer cancel()
	for _, gvr := range gvrs {
		_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			_, err := c.Dyn.Resource(gvr).List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 1})
			return err == nil || !apierrors.IsTooManyRequests(err), nil
		})
	}
}

// deleteAll deletes the named objects of a resource, a few at a time (the
// server takes a while over each CRD), and returns each delete's error.
func (c *cluster) deleteAll(ctx context.Context, gvr schema.GroupVersionResource, names []string) []error {
	errs := make([]error, len(names))
	var g errgroup.Group
	g.SetLimit(8)
	for i, n := range names {
		g.Go(func() error {
			errs[i] = c.Dyn.Resource(gvr).Delete(ctx, n, metav1.DeleteOptions{})
			return nil
		})
	}
	_ = g.Wait()
	return errs
}

// gone waits until every named object of a resource is deleted, within
// timeout, and returns those still there.
func (c *cluster) gone(ctx context.Context, gvr schema.GroupVersionResource, names []string, timeout time.Duration) []string {
	objs := make([]kubeapi.Object, len(names))
	for i, n := range names {
		objs[i] = kubeapi.Object{Resource: gvr, Name: n}
	}
	var left []string
	for _, o := range c.Gone(ctx, objs, timeout) {
		left = append(left, o.Name)
	}
	return left
}
