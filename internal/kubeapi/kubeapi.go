// Package kubeapi is what capirepo's checks against a real API server (the
// install check, the upgrade rehearsal) share of talking to it: one client
// set made from a client config with bounded requests, the server's OpenAPI,
// the REST mapping of a kind that may just have been installed, the wait
// for deleted objects to be gone, and the name of a run. It knows nothing of releases or
// providers.
package kubeapi

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/kube-openapi/pkg/spec3"
)

// Resources of the API server itself.
var (
	CRDs       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	Namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// Clients reach one API server: raw requests (each answer's warnings are
// its own), a dynamic client, cached discovery and a REST mapper on it.
type Clients struct {
	Host   string
	Config *rest.Config
	Raw    rest.Interface
	Dyn    dynamic.Interface
	Disc   discovery.CachedDiscoveryInterface
	Mapper *restmapper.DeferredDiscoveryRESTMapper
}

// Connect makes the clients of a client config, with requestTimeout per
// request when the config sets none, the rate limits raised for a run of
// many small requests, and userAgent.
func Connect(cfg *rest.Config, userAgent string, requestTimeout time.Duration) (*Clients, error) {
	c := rest.CopyConfig(cfg)
	c.WarningHandler = rest.NoWarnings{} // each answer's warnings are read from its Result
	if c.Timeout == 0 {
		c.Timeout = requestTimeout
	}
	if c.QPS == 0 {
		c.QPS, c.Burst = 50, 100
	}
	c.UserAgent = userAgent
	dyn, err := dynamic.NewForConfig(c)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c)
	if err != nil {
		return nil, err
	}
	rc := rest.CopyConfig(c)
	rc.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	raw, err := rest.UnversionedRESTClientFor(rc)
	if err != nil {
		return nil, err
	}
	disc := memory.NewMemCacheClient(dc)
	return &Clients{Host: c.Host, Config: c, Raw: raw, Dyn: dyn, Disc: disc, Mapper: restmapper.NewDeferredDiscoveryRESTMapper(disc)}, nil
}

// OpenAPI returns the server's OpenAPI v3 document of a group version: the
// schemas of its built-in kinds, which stand-ins must fit (values.Options).
func (c *Clients) OpenAPI(gv schema.GroupVersion) (*spec3.OpenAPI, error) {
	return openapi3.NewRoot(c.Disc.OpenAPIV3()).GVSpec(gv)
}

// Mapping finds the resource of a kind. When waitFor is set (a CRD just
// created serves the kind) discovery is asked again until it serves it,
// within timeout.
func (c *Clients) Mapping(ctx context.Context, gvk schema.GroupVersionKind, waitFor bool, timeout time.Duration) (*meta.RESTMapping, error) {
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err == nil || !waitFor || !meta.IsNoMatchError(err) {
		return m, err
	}
	pollErr := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, false, func(context.Context) (bool, error) {
		c.Mapper.Reset()
		m, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		return err == nil || !meta.IsNoMatchError(err), nil
	})
	if err == nil {
		return m, nil
	}
	return nil, errors.Join(err, pollErr)
}

// Object names one object by resource.
type Object struct {
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
}

// Gone waits until every object is deleted, within timeout, and returns
// those still there.
func (c *Clients) Gone(ctx context.Context, objs []Object, timeout time.Duration) []Object {
	var left []Object
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		left = left[:0]
		for _, o := range objs {
			if _, err := c.Dyn.Resource(o.Resource).Namespace(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = append(left, o)
			}
		}
		return len(left) == 0, nil
	})
	return left
}

// RunID names one run's objects on a cluster (its namespaces): five
// lowercase letters and digits, a DNS label part.
func RunID() (string, error) {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return string(b), nil
}
