package apiserver

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	namespacecontroller "k8s.io/kubernetes/pkg/controller/namespace"
)

// startNamespaceController runs Kubernetes' own namespace controller (as
// kube-controller-manager runs it) against the server until the test ends,
// so a deleted namespace is emptied and goes away as on a real cluster
// (kind): the upgrade rehearsal deletes the namespaces clusterctl installed
// and waits for them, and a next run on the same server finds none.
func startNamespaceController(t testing.TB, cfg *rest.Config) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = 1000, 1000
	kube := kubernetes.NewForConfigOrDie(c)
	meta := metadata.NewForConfigOrDie(c)
	factory := informers.NewSharedInformerFactory(kube, 0)
	nc := namespacecontroller.NewNamespaceController(ctx, kube, meta, kube.Discovery().ServerPreferredNamespacedResources,
		factory.Core().V1().Namespaces(), 5*time.Minute, v1.FinalizerKubernetes)
	factory.Start(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		nc.Run(ctx, 5)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		factory.Shutdown()
	})
}
