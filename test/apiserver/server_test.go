package apiserver

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"testing"
	"time"

	"github.com/google/uuid"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// TestMain silences klog (about 160 lines per server start) unless
// INSTALL_TEST_KLOG is set.
func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv("INSTALL_TEST_KLOG") == "" {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("alsologtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	}
	os.Exit(m.Run())
}

// refuseAll is the service resolver the API server uses for webhooks
// (admission, CRD conversion) and aggregated APIs that name a Service: it
// never resolves, so nothing is dialled for a service reference.
type refuseAll struct{}

func (refuseAll) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return nil, fmt.Errorf("install test: service %s/%s:%d is not reachable (no backends run here)", namespace, name, port)
}

// startServer starts etcd and kube-apiserver in process and returns a client
// config for it (the loopback user, in system:masters); both stop when the
// test ends. Servers may overlap in time but must be started one after the
// other (the service resolver and feature gates are process-wide), so no
// test that starts one runs in parallel.
func startServer(t testing.TB) *rest.Config {
	t.Helper()
	start := time.Now()
	etcd := testserver.RunEtcd(t, nil)     // free localhost ports, a temp dir, no fsync; stopped in t.Cleanup
	t.Cleanup(func() { _ = etcd.Close() }) // RunEtcd leaves its client open: grpc goroutines leak otherwise

	storage := storagebackend.NewDefaultConfig(path.Join(uuid.New().String(), "registry"), nil)
	storage.Transport.ServerList = etcd.Endpoints()

	restore := app.SetServiceResolverForTests(refuseAll{})
	defer restore() // the resolver is captured while the server chain is built
	ts := kubeapiservertesting.StartTestServerOrDie(t,
		&kubeapiservertesting.TestServerInstanceOptions{EnableCertAuth: false},
		[]string{
			"--endpoint-reconciler-type=none",            // the kubernetes Service endpoints would name 127.0.0.1
			"--disable-admission-plugins=ServiceAccount", // no token controller: Pods would wait for a default ServiceAccount
			"--allow-privileged=true",                    // as kind and kubeadm clusters do (CAPD runs privileged)
		}, storage)
	t.Cleanup(ts.TearDownFn) // runs before etcd's cleanup (LIFO)
	cfg := rest.CopyConfig(ts.ClientConfig)
	t.Logf("etcd and kube-apiserver healthy in %v at %s", time.Since(start).Round(time.Millisecond), cfg.Host)
	return cfg
}
