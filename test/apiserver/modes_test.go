package apiserver

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/install"
)

// TestInstall_DryRunOnly creates nothing: the release's CRDs and every
// built-in object are judged by dry-run (a broken Deployment is refused),
// the release's own kinds are listed as not checked, the kinds of the
// cluster's CRDs (cluster-api's, cert-manager's) are checked, and no
// namespace or CRD appears.
func TestInstall_DryRunOnly(t *testing.T) {
	cfg := managementCluster(t, true)
	ctx := context.Background()
	crdsBefore := crdNames(t, cfg)
	nsBefore := namespaces(t, cfg)

	rel := buildtest.Clone(exampleRelease(t))
	edit(t, rel, "infrastructure-example", "infrastructure-components.yaml", "        name: manager\n", "        name: Manager_1\n")
	calls := 0
	rep, err := install.Check(ctx, rel, install.Options{Config: cfg, DryRunOnly: true, CertManager: certManagerLoader(t, &calls)})
	if err == nil || rep == nil {
		t.Fatalf("the broken Deployment was not refused: %v\n%s", err, report(rep))
	}
	t.Logf("%s", report(rep))
	comps := file(t, rep, "infrastructure-example/v0.1.0/infrastructure-components.yaml")
	if len(comps.Refused) != 1 || comps.Refused[0].Object != "Deployment/capi-example-controller-manager" {
		t.Errorf("refused %v, want the Deployment only", comps.Refused)
	}
	// Every CRD, the Namespace, RBAC, Service, Secret, webhook configurations,
	// cert-manager's Issuer and Certificate: judged.
	for _, kind := range []string{"CustomResourceDefinition/", "Namespace/", "ClusterRole/", "Service/", "Secret/", "MutatingWebhookConfiguration/", "Certificate/"} {
		if slices.ContainsFunc(comps.NotChecked, func(n install.NotChecked) bool { return strings.HasPrefix(n.Object, kind) }) {
			t.Errorf("%s* not checked: %v", kind, comps.NotChecked)
		}
	}
	tmpl := file(t, rep, "infrastructure-example/v0.1.0/cluster-template.yaml")
	if tmpl.Accepted == 0 || len(tmpl.NotChecked) == 0 {
		t.Errorf("cluster-template.yaml: %d accepted (cluster-api's kinds), not checked %v (the example's own kinds)", tmpl.Accepted, tmpl.NotChecked)
	}
	for _, n := range tmpl.NotChecked {
		if !strings.HasPrefix(n.Object, "Example") || !strings.Contains(n.Why, "dry-run only") {
			t.Errorf("not checked %s: %s; want only the example's own kinds, for dry-run only", n.Object, n.Why)
		}
	}
	if len(rep.Created) > 0 || calls > 0 {
		t.Errorf("created %v, loaded cert-manager %d times", rep.Created, calls)
	}
	if got := crdNames(t, cfg); len(got) != len(crdsBefore) {
		t.Errorf("CRDs before %d, after %d", len(crdsBefore), len(got))
	}
	if got := namespaces(t, cfg); len(got) != len(nsBefore) {
		t.Errorf("namespaces before %v, after %v", nsBefore, got)
	}
	assertNoWebhookConfigurations(t, cfg)
}

// TestInstall_ClusterWithTheReleaseCRDs refuses a cluster that already has
// the release's CRDs (a cluster the provider is installed in) and creates
// nothing; with Force it replaces them for the check and puts them back.
func TestInstall_ClusterWithTheReleaseCRDs(t *testing.T) {
	cfg := managementCluster(t, true)
	ctx := context.Background()
	rel := exampleRelease(t)
	// The provider as installed: an older description marks the cluster's copy.
	installed := strings.ReplaceAll(string(rel.Providers[0].Components().Data), "ExampleCluster is the Schema", "INSTALLED ExampleCluster is the Schema")
	installCRDs(t, cfg, []byte(installed))
	nsBefore := namespaces(t, cfg)

	rep, err := install.Check(ctx, rel, install.Options{Config: cfg})
	if err == nil || !strings.Contains(err.Error(), "exampleclusters.infrastructure.cluster.x-k8s.io") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("want a refusal naming the CRDs and --force, got %v", err)
	}
	if len(rep.Created) > 0 || len(namespaces(t, cfg)) != len(nsBefore) {
		t.Errorf("created %v after refusing the cluster", rep.Created)
	}

	rep, err = install.Check(ctx, rel, install.Options{Config: cfg, Force: true})
	if err != nil {
		t.Fatalf("--force: %v\n%s", err, report(rep))
	}
	if len(rep.Restored) != 6 || rep.Refusals() > 0 || rep.NotCheckedCount() > 0 {
		t.Errorf("restored %v; %d refused, %d not checked\n%s", rep.Restored, rep.Refusals(), rep.NotCheckedCount(), report(rep))
	}
	crd, err := dynamic.NewForConfigOrDie(cfg).Resource(crdGVR).Get(ctx, "exampleclusters.infrastructure.cluster.x-k8s.io", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the cluster's CRD is gone: %v", err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	desc, _, _ := unstructured.NestedString(versions[0].(map[string]any), "schema", "openAPIV3Schema", "description")
	if !strings.HasPrefix(desc, "INSTALLED ") {
		t.Errorf("the cluster's CRD was not put back: description %q", desc)
	}
}

func namespaces(t *testing.T, cfg *rest.Config) []string {
	t.Helper()
	l, err := dynamic.NewForConfigOrDie(cfg).Resource(namespaceGVR).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ns := range l.Items {
		out = append(out, ns.GetName())
	}
	return out
}

// TestInstall_InterruptedRemovesWhatItCreated cancels a check once its
// CRDs are in the cluster: it returns at once with the context's error and
// still removes the CRDs and namespaces it created.
func TestInstall_InterruptedRemovesWhatItCreated(t *testing.T) {
	cfg := managementCluster(t, true)
	before := crdNames(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		dyn := dynamic.NewForConfigOrDie(cfg)
		for ctx.Err() == nil {
			if _, err := dyn.Resource(crdGVR).Get(ctx, "exampleclusters.infrastructure.cluster.x-k8s.io", metav1.GetOptions{}); err == nil {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	start := time.Now()
	rep, err := install.Check(ctx, exampleRelease(t), install.Options{Config: cfg})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want the context's error, got %v\n%s", err, report(rep))
	}
	t.Logf("returned %v after the start, removed %v", time.Since(start).Round(time.Millisecond), rep.Removed)
	if len(rep.Created) == 0 || len(rep.Removed) < len(rep.Created) {
		t.Errorf("created %v, removed %v", rep.Created, rep.Removed)
	}
	assertCRDsGone(t, cfg, before)
	assertNamespacesRemoved(t, cfg)
}

// TestInstall_NotCheckedSaysWhoseCRDsAreMissing: on a cluster without
// Cluster API's CRDs, the example's core kinds are not checked, and the
// report says they need cluster-api's (and kubeadm's) CRDs, by group; a
// flavor's kind of another provider (DockerCluster, as kubemark's flavors
// use) needs infrastructure-docker's, and is no refusal of this release.
func TestInstall_NotCheckedSaysWhoseCRDsAreMissing(t *testing.T) {
	cfg := startServer(t)
	rel := buildtest.Clone(exampleRelease(t))
	docker := "apiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nkind: DockerCluster\nmetadata:\n  name: ${CLUSTER_NAME}\n  namespace: ${NAMESPACE}\nspec: {}\n"
	if err := rel.Providers[0].Add("cluster-template-docker.yaml", []byte(docker)); err != nil {
		t.Fatal(err)
	}
	rep, err := install.Check(context.Background(), rel, install.Options{Config: cfg})
	if err != nil || rep.Refusals() != 0 {
		t.Fatalf("refused: %v\n%s", err, report(rep))
	}
	got := map[string]install.Missing{}
	for _, m := range rep.Missing() {
		got[m.Needs+" "+m.Group] = m
	}
	core, ok := got["cluster-api cluster.x-k8s.io"]
	if !ok || !slices.Contains(core.Kinds, "Cluster") || !slices.Contains(core.Kinds, "MachineDeployment") {
		t.Errorf("cluster-api's kinds not named: %+v", rep.Missing())
	}
	if d := got["infrastructure-docker infrastructure.cluster.x-k8s.io"]; !slices.Equal(d.Kinds, []string{"DockerCluster"}) || d.Objects != 1 {
		t.Errorf("DockerCluster not said to need infrastructure-docker's CRDs: %+v", rep.Missing())
	}
	n := 0
	for _, m := range rep.Missing() {
		n += m.Objects
	}
	if n != rep.NotCheckedCount() {
		t.Errorf("%d objects not checked, %d of them said to want CRDs:\n%s", rep.NotCheckedCount(), n, report(rep))
	}
	for _, want := range []string{"not checked for want of CRDs the cluster does not serve:", "    cluster-api's: ", "    infrastructure-docker's: 1 object, of group infrastructure.cluster.x-k8s.io (DockerCluster)"} {
		if !strings.Contains(report(rep), want) {
			t.Errorf("the report lacks %q:\n%s", want, report(rep))
		}
	}
}
