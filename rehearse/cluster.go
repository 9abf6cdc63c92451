package rehearse

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capirepo/capirepo/internal/kubeapi"
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
	crdGVR       = kubeapi.CRDs
	namespaceGVR = kubeapi.Namespaces
)

// cluster is the scratch cluster, reached through the kubeconfig
// clusterctl is given too.
type cluster struct {
	*kubeapi.Clients
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
	k, err := kubeapi.Connect(cfg, "capirepo-rehearsal", requestTimeout)
	if err != nil {
		return nil, err
	}
	if _, err := k.Disc.ServerVersion(); err != nil {
		return nil, fmt.Errorf("upgrade rehearsal: cannot reach the API server at %s: %w", k.Host, err)
	}
	return &cluster{k}, nil
}

// mapping finds the resource of a kind at a version; when waitFor is set
// (its CRD was just installed) discovery is asked again until it serves it.
func (c *cluster) mapping(ctx context.Context, gvk schema.GroupVersionKind, waitFor bool) (*meta.RESTMapping, error) {
	return c.Mapping(ctx, gvk, waitFor, mappingTimeout)
}

// resource is the client of an object's resource, in its namespace when
// the kind is namespaced.
func (c *cluster) resource(m *meta.RESTMapping, ns string) dynamic.ResourceInterface {
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Dyn.Resource(m.Resource).Namespace(ns)
	}
	return c.Dyn.Resource(m.Resource)
}

// crds lists the cluster's CRDs by name.
func (c *cluster) crds(ctx context.Context) (map[string]*unstructured.Unstructured, error) {
	l, err := c.Dyn.Resource(crdGVR).List(ctx, metav1.ListOptions{})
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
		return c.Dyn.Resource(o.gvr).Namespace(o.namespace).Get(ctx, o.name, metav1.GetOptions{})
	}
	return c.Dyn.Resource(o.gvr).Get(ctx, o.name, metav1.GetOptions{})
}

func (c *cluster) delete(ctx context.Context, o ref) error {
	if o.namespace != "" {
		return c.Dyn.Resource(o.gvr).Namespace(o.namespace).Delete(ctx, o.name, metav1.DeleteOptions{})
	}
	return c.Dyn.Resource(o.gvr).Delete(ctx, o.name, metav1.DeleteOptions{})
}

// gone waits until every object is deleted, within timeout, and returns
// those still there.
func (c *cluster) gone(ctx context.Context, objs []ref, timeout time.Duration) []ref {
	byObject := map[kubeapi.Object]ref{}
	var ko []kubeapi.Object
	for _, o := range objs {
		k := kubeapi.Object{Resource: o.gvr, Namespace: o.namespace, Name: o.name}
		byObject[k] = o
		ko = append(ko, k)
	}
	var left []ref
	for _, k := range c.Gone(ctx, ko, timeout) {
		left = append(left, byObject[k])
	}
	return left
}
