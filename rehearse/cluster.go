package rehearse

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// Bounds of the rehearsal's own waits on the API server (clusterctl's are
// clusterctl's).
const (
	// requestTimeout bounds one request when the kubeconfig sets none.
	requestTimeout = 30 * time.Second
	// goneTimeout bounds the wait for what an earlier run (or the cluster's
	// owner) is deleting before the rehearsal starts, and for what it
	// deleted at the end.
	goneTimeout = 60 * time.Second
	// cleanupTimeout bounds removing what the rehearsal installed and
	// created, also after an interruption.
	cleanupTimeout = 2 * time.Minute
	// mappingTimeout bounds the wait for discovery to serve a kind whose
	// CRD was just installed.
	mappingTimeout = 30 * time.Second
)

var (
	crdGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// cluster is the scratch cluster, reached through the kubeconfig
// clusterctl is given too.
type cluster struct {
	host   string
	cfg    *rest.Config
	dyn    dynamic.Interface
	disc   discovery.CachedDiscoveryInterface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// connect reaches the API server of a kubeconfig's current context.
func connect(kubeconfig string) (*cluster, error) {
	if kubeconfig == "" {
		return nil, errors.New("upgrade rehearsal: no kubeconfig given")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("upgrade rehearsal: kubeconfig %s: %w", kubeconfig, err)
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = requestTimeout
	}
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	cfg.UserAgent = "capirepo-rehearsal"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := dc.ServerVersion(); err != nil {
		return nil, fmt.Errorf("upgrade rehearsal: cannot reach the API server at %s: %w", cfg.Host, err)
	}
	disc := memory.NewMemCacheClient(dc)
	return &cluster{host: cfg.Host, cfg: cfg, dyn: dyn, disc: disc, mapper: restmapper.NewDeferredDiscoveryRESTMapper(disc)}, nil
}

// mapping finds the resource of a kind at a version; when wait is set (its
// CRD was just installed) discovery is asked again until it serves it.
func (c *cluster) mapping(ctx context.Context, gvk schema.GroupVersionKind, waitFor bool) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err == nil || !waitFor || !meta.IsNoMatchError(err) {
		return m, err
	}
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, mappingTimeout, false, func(context.Context) (bool, error) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		return err == nil || !meta.IsNoMatchError(err), nil
	})
	return m, err
}

// resource is the client of an object's resource, in its namespace when
// the kind is namespaced.
func (c *cluster) resource(m *meta.RESTMapping, ns string) dynamic.ResourceInterface {
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.dyn.Resource(m.Resource).Namespace(ns)
	}
	return c.dyn.Resource(m.Resource)
}

// crds lists the cluster's CRDs by name.
func (c *cluster) crds(ctx context.Context) (map[string]*unstructured.Unstructured, error) {
	l, err := c.dyn.Resource(crdGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list CustomResourceDefinitions: %w", err)
	}
	out := map[string]*unstructured.Unstructured{}
	for i := range l.Items {
		out[l.Items[i].GetName()] = &l.Items[i]
	}
	return out, nil
}

// ref is one object by resource and name.
type ref struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
	// kind names it in reports (Kind/name).
	kind string
}

func (o ref) String() string {
	if o.namespace != "" {
		return o.kind + "/" + o.namespace + "/" + o.name
	}
	return o.kind + "/" + o.name
}

func (c *cluster) get(ctx context.Context, o ref) (*unstructured.Unstructured, error) {
	if o.namespace != "" {
		return c.dyn.Resource(o.gvr).Namespace(o.namespace).Get(ctx, o.name, metav1.GetOptions{})
	}
	return c.dyn.Resource(o.gvr).Get(ctx, o.name, metav1.GetOptions{})
}

func (c *cluster) delete(ctx context.Context, o ref) error {
	if o.namespace != "" {
		return c.dyn.Resource(o.gvr).Namespace(o.namespace).Delete(ctx, o.name, metav1.DeleteOptions{})
	}
	return c.dyn.Resource(o.gvr).Delete(ctx, o.name, metav1.DeleteOptions{})
}

// gone waits until every object is deleted, within timeout, and returns
// those still there.
func (c *cluster) gone(ctx context.Context, objs []ref, timeout time.Duration) []ref {
	var left []ref
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		left = left[:0]
		for _, o := range objs {
			if _, err := c.get(ctx, o); !apierrors.IsNotFound(err) {
				left = append(left, o)
			}
		}
		return len(left) == 0, nil
	})
	return left
}
