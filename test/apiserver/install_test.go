package apiserver

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/verify"
)

// TestInstall_RealReleasesInstallCleanly applies cluster-api's core trio
// to an empty cluster (cert-manager's CRDs created by the check), then,
// with the trio's and cert-manager's CRDs installed as on a management
// cluster, the bundled example, CAPD, CAPG and CAPA: the server refuses nothing, every
// flavor and ClusterClass is dry-run created, nothing is left unchecked,
// and the check leaves no CRD, namespace or webhook configuration behind.
func TestInstall_RealReleasesInstallCleanly(t *testing.T) {
	cfg := startServer(t)
	ctx := context.Background()
	before := crdNames(t, cfg)

	start := time.Now()
	capi := realRelease(t, testtree.ClusterAPIModule, "cluster-api.capirepo.yaml", "v1.14.2")
	built := time.Now()
	calls := 0
	rep, err := install.Check(ctx, capi, install.Options{Config: cfg, CertManager: certManagerLoader(t, &calls)})
	if err != nil {
		t.Fatalf("cluster-api: %v\n%s", err, report(rep))
	}
	t.Logf("cluster-api built in %v, checked in %v:\n%s", built.Sub(start).Round(time.Millisecond), time.Since(built).Round(time.Millisecond), report(rep))
	if calls != 1 || rep.CertManager != certManager(t).Version {
		t.Errorf("cert-manager: loaded %d times, report says %q; want its CRDs created once from %s", calls, rep.CertManager, certManager(t).Version)
	}
	for _, label := range []string{"cluster-api", "bootstrap-kubeadm", "control-plane-kubeadm"} {
		f := file(t, rep, label+"/v1.14.2/"+map[string]string{"cluster-api": "core", "bootstrap-kubeadm": "bootstrap", "control-plane-kubeadm": "control-plane"}[label]+"-components.yaml")
		if f.Accepted == 0 || len(f.NotChecked) > 0 {
			t.Errorf("%s: %d accepted, not checked %v", f.Path(), f.Accepted, f.NotChecked)
		}
	}
	start = time.Now()
	assertCRDsGone(t, cfg, before)
	t.Logf("the server finished deleting the CRDs %v after the check", time.Since(start).Round(time.Millisecond))
	assertNoWebhookConfigurations(t, cfg)
	assertNamespacesRemoved(t, cfg)

	// A management cluster: cluster-api and cert-manager installed.
	installCRDs(t, cfg, append(components(capi), certManager(t).Components().Data)...)
	for _, c := range []struct {
		name    string
		rel     func(t *testing.T) *release.Release
		flavors []string
		// noCertManager: the release has no cert-manager objects.
		noCertManager bool
	}{
		{"example", exampleRelease, []string{"cluster-template.yaml", "cluster-template-ha.yaml", "cluster-template-machinepool.yaml",
			"cluster-template-topology.yaml", "clusterclass-example-quick-start.yaml"}, false},
		// verify's own fixture of a good release: good for a real server too.
		{"verify/testdata/good", goodRelease, nil, true},
		{"CAPD", func(t *testing.T) *release.Release {
			return realRelease(t, testtree.CAPDModule, "capd.capirepo.yaml", "v1.14.2")
		}, nil, false},
		// CAPG's topology flavor puts a variable in place of a ConfigMap's
		// whole data map: a text placeholder makes the server refuse it.
		{"CAPG", func(t *testing.T) *release.Release {
			return realRelease(t, testtree.CAPGModule, "capg.capirepo.yaml", "v1.13.1")
		}, nil, false},
		{"CAPA", func(t *testing.T) *release.Release {
			return realRelease(t, testtree.CAPAModule, "capa.capirepo.yaml", "v2.13.0")
		}, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rel := c.rel(t)
			calls := 0
			rep, err := install.Check(ctx, rel, install.Options{Config: cfg, CertManager: certManagerLoader(t, &calls)})
			if err != nil {
				t.Fatalf("%v\n%s", err, report(rep))
			}
			t.Logf("%s", report(rep))
			if calls != 0 || !c.noCertManager && rep.CertManager != "cluster" {
				t.Errorf("cert-manager: loaded %d times, report says %q; want the cluster's CRDs and nothing downloaded", calls, rep.CertManager)
			}
			p := rel.Providers[0]
			want := c.flavors
			if want == nil {
				for _, f := range p.Files {
					if strings.HasPrefix(f.Name, "cluster-template") || strings.HasPrefix(f.Name, "clusterclass-") {
						want = append(want, f.Name)
					}
				}
			}
			if len(want) < 2 {
				t.Fatalf("%s ships %d templates", p.Label(), len(want))
			}
			for _, name := range want {
				f := file(t, rep, p.Label()+"/"+p.Version+"/"+name)
				if f.Accepted == 0 || len(f.NotChecked) > 0 {
					t.Errorf("%s: %d objects accepted, not checked: %v", name, f.Accepted, f.NotChecked)
				}
			}
			if rep.NotCheckedCount() > 0 {
				t.Errorf("%d objects not checked", rep.NotCheckedCount())
			}
			if c.name == "CAPG" {
				f := file(t, rep, "infrastructure-gcp/v1.13.1/cluster-template-topology.yaml")
				if i := slices.IndexFunc(f.Variables, func(v verify.Variable) bool { return v.Name == "CNI_RESOURCES" }); i < 0 || f.Variables[i].Value != "{}" {
					t.Errorf("CNI_RESOURCES, a whole ConfigMap data map, stands in as %v; want {}", f.Variables)
				}
			}
		})
	}
}

// assertCRDsGone checks that the cluster's CRDs are back to before: the
// check deletes what it created, and the server finishes the deletion (in
// process it can take seconds, its CRD finalizer retrying while a CRD's
// storage initialises).
func assertCRDsGone(t *testing.T, cfg *rest.Config, before map[string]bool) {
	t.Helper()
	var extra []string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 3*time.Minute, true, func(context.Context) (bool, error) {
		extra = extra[:0]
		for n := range crdNames(t, cfg) {
			if !before[n] {
				extra = append(extra, n)
			}
		}
		return len(extra) == 0, nil
	})
	if err != nil {
		t.Errorf("CRDs left behind: %v", extra)
	}
}

// assertNoWebhookConfigurations checks no webhook configuration or
// APIService was ever created for real: the server would call it.
func assertNoWebhookConfigurations(t *testing.T, cfg *rest.Config) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(cfg)
	for _, gvr := range []schema.GroupVersionResource{
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
	} {
		l, err := dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) > 0 {
			t.Errorf("%s were created: %d", gvr.Resource, len(l.Items))
		}
	}
}

// assertNamespacesRemoved checks that every namespace the check created is
// deleted (in process they stay Terminating: no namespace controller runs).
func assertNamespacesRemoved(t *testing.T, cfg *rest.Config) {
	t.Helper()
	l, err := dynamic.NewForConfigOrDie(cfg).Resource(namespaceGVR).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range l.Items {
		if strings.HasPrefix(ns.GetName(), install.NamespacePrefix) && ns.GetDeletionTimestamp() == nil {
			t.Errorf("namespace %s was not deleted", ns.GetName())
		}
	}
}

// TestInstall_BrokenVariantsRefused breaks the example one way at a time
// and checks that the server refuses exactly that, in the server's words,
// with the right file, object and field; cluster-api's and cert-manager's
// CRDs are installed, as on a management cluster.
func TestInstall_BrokenVariantsRefused(t *testing.T) {
	cfg := managementCluster(t, true)
	ctx := context.Background()
	base := exampleRelease(t)
	const label, comps, tmpl = "infrastructure-example", "infrastructure-components.yaml", "cluster-template.yaml"

	cases := []struct {
		name       string
		file, old  string
		new        string
		wantFile   string
		wantObject string
		wantField  string
		wantMsg    string
	}{
		{name: "CRD schema the server rejects", file: comps,
			old:      "                  host:\n                    description: host is the hostname on which the API server is serving.\n                    maxLength: 512\n                    minLength: 1\n                    type: string",
			new:      "                  host:\n                    description: host is the hostname on which the API server is serving.\n                    maxLength: 512\n                    minLength: 1\n                    type: text",
			wantFile: comps, wantObject: "CustomResourceDefinition/exampleclusters.infrastructure.cluster.x-k8s.io",
			wantField: "spec.validation.openAPIV3Schema.properties[spec].properties[controlPlaneEndpoint].properties[host].type", wantMsg: `Unsupported value: "text"`},
		{name: "CEL rule that does not compile", file: comps,
			old:      "            required:\n            - flavor\n",
			new:      "            required:\n            - flavor\n            x-kubernetes-validations:\n            - rule: self.flavour != ''\n",
			wantFile: comps, wantObject: "CustomResourceDefinition/examplemachinepools.infrastructure.cluster.x-k8s.io",
			wantField: "x-kubernetes-validations[0].rule", wantMsg: "undefined field 'flavour'"},
		{name: "template value out of its CRD's range", file: tmpl,
			old:      "      flavor: ${EXAMPLE_MACHINE_FLAVOR}\n",
			new:      "      flavor: ${EXAMPLE_MACHINE_FLAVOR}\n      rootVolumeSizeGiB: 2\n",
			wantFile: tmpl, wantObject: "ExampleMachineTemplate/capirepo-verify-control-plane",
			wantField: "spec.template.spec.rootVolumeSizeGiB", wantMsg: "should be greater than or equal to 8"},
		{name: "unknown field in a template", file: tmpl,
			old:      "  clusterName: ${CLUSTER_NAME}\n  replicas: ${WORKER_MACHINE_COUNT}\n",
			new:      "  clusterName: ${CLUSTER_NAME}\n  replica: ${WORKER_MACHINE_COUNT}\n",
			wantFile: tmpl, wantObject: "MachineDeployment/capirepo-verify-md-0",
			wantField: "spec.replica", wantMsg: `unknown field "spec.replica"`},
		{name: "Deployment with an invalid container name", file: comps,
			old:      "        name: manager\n",
			new:      "        name: Manager_1\n",
			wantFile: comps, wantObject: "Deployment/capi-example-controller-manager",
			wantField: "spec.template.spec.containers[0].name", wantMsg: `Invalid value: "Manager_1": a lowercase RFC 1123 label`},
		{name: "webhook configuration with a malformed path", file: comps,
			old:      "      path: /mutate-infrastructure-cluster-x-k8s-io-v1beta1-examplecluster\n",
			new:      "      path: mutate examplecluster\n",
			wantFile: comps, wantObject: "MutatingWebhookConfiguration/capi-example-mutating-webhook-configuration",
			wantField: "webhooks[0].clientConfig.service.path", wantMsg: `Invalid value: "mutate examplecluster": must start with a '/'`},
		{name: "Certificate with an unsupported algorithm", file: comps,
			old:      "    name: capi-example-selfsigned-issuer\n  secretName: webhook-server-cert\n",
			new:      "    name: capi-example-selfsigned-issuer\n  secretName: webhook-server-cert\n  privateKey:\n    algorithm: DSA\n",
			wantFile: comps, wantObject: "Certificate/capi-example-serving-cert",
			wantField: "spec.privateKey.algorithm", wantMsg: `Unsupported value: "DSA": supported values: "RSA", "ECDSA", "Ed25519"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rel := buildtest.Clone(base)
			edit(t, rel, label, c.file, c.old, c.new)
			rep, err := install.Check(ctx, rel, install.Options{Config: cfg})
			if err == nil {
				t.Fatalf("no refusal:\n%s", report(rep))
			}
			if rep == nil {
				t.Fatalf("no report: %v", err)
			}
			path := label + "/v0.1.0/" + c.wantFile
			var got []install.Refusal
			for _, f := range rep.Files {
				got = append(got, f.Refused...)
				if len(f.Refused) > 0 && f.Path() != path {
					t.Errorf("refusals in %s, want only in %s: %v", f.Path(), path, f.Refused)
				}
			}
			i := slices.IndexFunc(got, func(r install.Refusal) bool {
				return r.Object == c.wantObject && strings.HasSuffix(r.Field, c.wantField) && strings.Contains(r.Message, c.wantMsg)
			})
			if i < 0 {
				t.Fatalf("no refusal of %s field %s with %q; got %v\nerror: %v\n%s", c.wantObject, c.wantField, c.wantMsg, got, err, report(rep))
			}
			if !strings.Contains(err.Error(), path+":") || !strings.Contains(err.Error(), c.wantMsg) {
				t.Errorf("the error does not name the file and the server's message:\n%v", err)
			}
			t.Logf("%s: %s", path, got[i])
		})
	}

	// Every refusal is reported at once, grouped by file: the breaks that
	// leave the CRDs alone, together.
	t.Run("all at once", func(t *testing.T) {
		rel := buildtest.Clone(base)
		want := map[string][]string{}
		for _, c := range cases {
			if strings.HasPrefix(c.wantObject, "CustomResourceDefinition/") {
				continue
			}
			edit(t, rel, label, c.file, c.old, c.new)
			want[label+"/v0.1.0/"+c.wantFile] = append(want[label+"/v0.1.0/"+c.wantFile], c.wantObject)
		}
		rep, err := install.Check(ctx, rel, install.Options{Config: cfg})
		if err == nil || rep == nil {
			t.Fatalf("no refusal: %v", err)
		}
		got := map[string][]string{}
		for _, f := range rep.Files {
			for _, r := range f.Refused {
				if !slices.Contains(got[f.Path()], r.Object) {
					got[f.Path()] = append(got[f.Path()], r.Object)
				}
			}
		}
		for _, objs := range want {
			slices.Sort(objs)
		}
		for _, objs := range got {
			slices.Sort(objs)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("refused objects by file (-want +got):\n%s\n%s", diff, report(rep))
		}
		// The error lists them under one heading per file, in the order sent.
		msg := err.Error()
		comp, tpl := strings.Index(msg, "\n"+label+"/v0.1.0/"+comps+":"), strings.Index(msg, "\n"+label+"/v0.1.0/"+tmpl+":")
		if comp < 0 || tpl < comp || strings.Count(msg, label+"/v0.1.0/"+tmpl+":") != 1 {
			t.Errorf("the error does not group the refusals by file:\n%s", msg)
		}
	})
}
