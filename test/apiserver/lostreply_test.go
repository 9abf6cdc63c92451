package apiserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/capirepo/capirepo/install"
)

const lostCRD = "exampleclusters.infrastructure.cluster.x-k8s.io"

// dropReply forwards the first real (not dry-run) create or replace of the
// CRD lostCRD to the server, then cancels the run and drops the reply: the
// server did the change, and the client never hears of it.
type dropReply struct {
	next    http.RoundTripper
	method  string
	cancel  context.CancelFunc
	dropped atomic.Bool
}

func (d *dropReply) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != d.method || req.URL.Query().Has("dryRun") || !strings.Contains(req.URL.Path, "/customresourcedefinitions") || req.Body == nil || d.dropped.Load() {
		return d.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if !bytes.Contains(body, []byte(`"name":"`+lostCRD+`"`)) || !d.dropped.CompareAndSwap(false, true) {
		return d.next.RoundTrip(req)
	}
	resp, err := d.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode >= 300 {
		panic("the server refused " + lostCRD + ": " + resp.Status)
	}
	d.cancel()
	return nil, context.Canceled
}

func lossy(cfg *rest.Config, d *dropReply) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { d.next = rt; return d }
	return c
}

// TestInstall_CreateWhoseReplyIsLostIsRemoved: the server created the CRD,
// the reply was lost to the interruption; cleanup still removes it.
func TestInstall_CreateWhoseReplyIsLostIsRemoved(t *testing.T) {
	cfg := managementCluster(t, true)
	before := crdNames(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := &dropReply{method: http.MethodPost, cancel: cancel}
	rep, err := install.Check(ctx, exampleRelease(t), install.Options{Config: lossy(cfg, d)})
	if err == nil || !d.dropped.Load() {
		t.Fatalf("want the interruption's error after the lost reply (dropped: %v), got %v\n%s", d.dropped.Load(), err, report(rep))
	}
	if !strings.Contains(strings.Join(rep.Removed, " "), lostCRD) {
		t.Errorf("removed %v, not %s", rep.Removed, lostCRD)
	}
	assertCRDsGone(t, cfg, before)
	assertNamespacesRemoved(t, cfg)
}

// TestInstall_ForceReplaceWhoseReplyIsLostIsPutBack: --force replaced the
// cluster's CRD, the reply was lost; cleanup still puts the cluster's back.
func TestInstall_ForceReplaceWhoseReplyIsLostIsPutBack(t *testing.T) {
	cfg := managementCluster(t, true)
	rel := exampleRelease(t)
	installed := strings.ReplaceAll(string(rel.Providers[0].Components().Data), "ExampleCluster is the Schema", "INSTALLED ExampleCluster is the Schema")
	installCRDs(t, cfg, []byte(installed))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := &dropReply{method: http.MethodPut, cancel: cancel}
	rep, err := install.Check(ctx, rel, install.Options{Config: lossy(cfg, d), Force: true})
	if err == nil || !d.dropped.Load() {
		t.Fatalf("want the interruption's error after the lost reply (dropped: %v), got %v\n%s", d.dropped.Load(), err, report(rep))
	}
	if !strings.Contains(strings.Join(rep.Restored, " "), lostCRD) {
		t.Errorf("put back %v, not %s\n%s", rep.Restored, lostCRD, report(rep))
	}
	crd, err := dynamic.NewForConfigOrDie(cfg).Resource(crdGVR).Get(context.Background(), lostCRD, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the cluster's CRD is gone: %v", err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	desc, _, _ := unstructured.NestedString(versions[0].(map[string]any), "schema", "openAPIV3Schema", "description")
	if !strings.HasPrefix(desc, "INSTALLED ") {
		t.Errorf("the cluster's CRD stays replaced: description %q", desc)
	}
}
