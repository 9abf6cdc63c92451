package rehearse

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	ctlcluster "sigs.k8s.io/cluster-api/cmd/clusterctl/client/cluster"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// rel makes a release of the labelled providers at a version.
func rel(t *testing.T, version string, labels ...string) *release.Release {
	t.Helper()
	r := &release.Release{Version: version}
	for _, l := range labels {
		id, err := provider.ParseLabel(l)
		if err != nil {
			t.Fatal(err)
		}
		r.Providers = append(r.Providers, &release.Provider{ID: id, Version: version, ComponentsFile: id.DefaultComponentsFile()})
	}
	return r
}

func TestLayout(t *testing.T) {
	core := rel(t, "v1.14.2", "cluster-api", "bootstrap-kubeadm", "control-plane-kubeadm")
	for _, c := range []struct {
		name           string
		old, new, core *release.Release
		// installed lists what clusterctl init installs; err what is refused.
		installed []string
		err       string
	}{
		{name: "a provider with core", old: rel(t, "v0.1.0", "infrastructure-example"), new: rel(t, "v0.1.1", "infrastructure-example"), core: core,
			installed: []string{"cluster-api@v1.14.2", "bootstrap-kubeadm@v1.14.2", "control-plane-kubeadm@v1.14.2", "infrastructure-example@v0.1.0"}},
		{name: "core's own release needs no core", old: rel(t, "v1.13.0", "cluster-api", "bootstrap-kubeadm", "control-plane-kubeadm"),
			new: rel(t, "v1.14.2", "cluster-api", "bootstrap-kubeadm", "control-plane-kubeadm"), core: rel(t, "v1.12.0", "cluster-api"),
			installed: []string{"cluster-api@v1.13.0", "bootstrap-kubeadm@v1.13.0", "control-plane-kubeadm@v1.13.0"}},
		{name: "the release upgraded wins over core's", old: rel(t, "v1.0.0", "bootstrap-kubeadm"), new: rel(t, "v1.0.1", "bootstrap-kubeadm"), core: core,
			installed: []string{"cluster-api@v1.14.2", "bootstrap-kubeadm@v1.0.0", "control-plane-kubeadm@v1.14.2"}},
		{name: "no core", old: rel(t, "v0.1.0", "infrastructure-example"), new: rel(t, "v0.1.1", "infrastructure-example"),
			err: "holds no core Cluster API, which clusterctl init installs first: name a release of cluster-api"},
		{name: "not newer", old: rel(t, "v0.1.1", "infrastructure-example"), new: rel(t, "v0.1.0", "infrastructure-example"), core: core,
			err: "v0.1.1 is not below v0.1.0"},
		{name: "pre-release below its release", old: rel(t, "v0.2.0-rc.1", "infrastructure-example"), new: rel(t, "v0.2.0", "infrastructure-example"), core: core,
			installed: []string{"cluster-api@v1.14.2", "bootstrap-kubeadm@v1.14.2", "control-plane-kubeadm@v1.14.2", "infrastructure-example@v0.2.0-rc.1"}},
		{name: "a provider only old has", old: rel(t, "v0.1.0", "infrastructure-example", "ipam-example"), new: rel(t, "v0.1.1", "infrastructure-example"), core: core,
			err: "ipam-example is in v0.1.0 and not in v0.1.1"},
		{name: "a provider only new has", old: rel(t, "v0.1.0", "infrastructure-example"), new: rel(t, "v0.1.1", "infrastructure-example", "ipam-example"), core: core,
			err: "ipam-example is in v0.1.1 and not in v0.1.0: a provider new in a release is installed, not upgraded"},
		{name: "no old", new: rel(t, "v0.1.1", "infrastructure-example"), core: core, err: "an old and a new release are needed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := layout(c.old, c.new, c.core)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want an error with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.installed, labelsAt(l.installed())); d != "" {
				t.Errorf("installed (-want +got):\n%s", d)
			}
		})
	}
}

func TestInitAndApplyOptions(t *testing.T) {
	kc := client.Kubeconfig{Path: "/k"}
	core := rel(t, "v1.14.2", "cluster-api", "bootstrap-kubeadm", "control-plane-kubeadm")
	example := rel(t, "v0.1.0", "infrastructure-example", "ipam-example")
	l, err := layout(example, rel(t, "v0.1.1", "infrastructure-example", "ipam-example"), core)
	if err != nil {
		t.Fatal(err)
	}
	want := client.InitOptions{Kubeconfig: kc, CoreProvider: "cluster-api:v1.14.2", BootstrapProviders: []string{"kubeadm:v1.14.2"},
		ControlPlaneProviders: []string{"kubeadm:v1.14.2"}, InfrastructureProviders: []string{"example:v0.1.0"}, IPAMProviders: []string{"example:v0.1.0"}}
	if d := cmp.Diff(want, initOptions(kc, l.installed()), cmpopts.IgnoreUnexported(client.InitOptions{})); d != "" {
		t.Errorf("init (-want +got):\n%s", d)
	}
	// Without a bootstrap or control plane provider, clusterctl's defaults
	// (kubeadm, from GitHub) are opted out of.
	got := initOptions(kc, rel(t, "v1.14.2", "cluster-api").Providers)
	if d := cmp.Diff([]string{"-"}, got.BootstrapProviders); d != "" || !cmp.Equal([]string{"-"}, got.ControlPlaneProviders) {
		t.Errorf("bootstrap %v, control plane %v; want -", got.BootstrapProviders, got.ControlPlaneProviders)
	}
	wantApply := client.ApplyUpgradeOptions{Kubeconfig: kc, InfrastructureProviders: []string{"example:v0.1.1"}, IPAMProviders: []string{"example:v0.1.1"}}
	if d := cmp.Diff(wantApply, applyOptions(kc, l.new)); d != "" {
		t.Errorf("apply (-want +got):\n%s", d)
	}
	capi := rel(t, "v1.14.2", "cluster-api", "bootstrap-kubeadm", "control-plane-kubeadm").Providers
	wantApply = client.ApplyUpgradeOptions{Kubeconfig: kc, CoreProvider: "cluster-api:v1.14.2", BootstrapProviders: []string{"kubeadm:v1.14.2"}, ControlPlaneProviders: []string{"kubeadm:v1.14.2"}}
	if d := cmp.Diff(wantApply, applyOptions(kc, capi)); d != "" {
		t.Errorf("apply core (-want +got):\n%s", d)
	}
}

func TestNotOfferedAndUpToDate(t *testing.T) {
	news := rel(t, "v0.1.1", "infrastructure-example").Providers
	item := func(next string) ctlcluster.UpgradeItem {
		return ctlcluster.UpgradeItem{Provider: clusterctlv1.Provider{ProviderName: "example", Type: string(clusterctlv1.InfrastructureProviderType)}, NextVersion: next}
	}
	core := ctlcluster.UpgradeItem{Provider: clusterctlv1.Provider{ProviderName: "cluster-api", Type: string(clusterctlv1.CoreProviderType)}}
	for _, c := range []struct {
		name     string
		plans    []client.UpgradePlan
		missing  []string
		upToDate bool
	}{
		{"offered", []client.UpgradePlan{{Contract: "v1beta2", Providers: []ctlcluster.UpgradeItem{core, item("v0.1.1")}}}, nil, false},
		{"up to date", []client.UpgradePlan{{Contract: "v1beta2", Providers: []ctlcluster.UpgradeItem{core, item("")}}},
			[]string{"infrastructure-example v0.1.1 (it offers nothing (up to date) for contract v1beta2)"}, true},
		{"another version", []client.UpgradePlan{{Contract: "v1beta2", Providers: []ctlcluster.UpgradeItem{item("v0.2.0")}}},
			[]string{"infrastructure-example v0.1.1 (it offers v0.2.0 for contract v1beta2)"}, false},
		{"not in the plan", []client.UpgradePlan{{Contract: "v1beta2", Providers: []ctlcluster.UpgradeItem{core}}},
			[]string{"infrastructure-example v0.1.1 (it offers nothing: not in the plan)"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if d := cmp.Diff(c.missing, notOffered(c.plans, news)); d != "" {
				t.Errorf("not offered (-want +got):\n%s", d)
			}
			if got := upToDate(c.plans, news); got != c.upToDate {
				t.Errorf("up to date: %v, want %v", got, c.upToDate)
			}
		})
	}
}

// obj parses one object from YAML.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	o := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &o.Object); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestDroppedStoredVersions(t *testing.T) {
	cur := obj(t, "kind: CustomResourceDefinition\nstatus:\n  storedVersions: [v1alpha1, v1beta1]\n")
	for _, c := range []struct {
		name     string
		versions string
		want     []string
	}{
		{"both kept", "[{name: v1alpha1}, {name: v1beta1, storage: true}]", nil},
		{"a served: false version is kept", "[{name: v1alpha1, served: false}, {name: v1beta1, storage: true}]", nil},
		{"one dropped", "[{name: v1beta1, storage: true}, {name: v1beta2}]", []string{"v1alpha1"}},
		{"both dropped", "[{name: v1beta2, storage: true}]", []string{"v1alpha1", "v1beta1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			crd := obj(t, "kind: CustomResourceDefinition\nspec:\n  versions: "+c.versions+"\n")
			if d := cmp.Diff(c.want, droppedStoredVersions(cur, crd)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	if got := droppedStoredVersions(nil, obj(t, "spec: {versions: [{name: v1}]}")); got != nil {
		t.Errorf("a CRD new to the cluster drops %v", got)
	}
}

func TestStorageVersion(t *testing.T) {
	crds := map[string]*unstructured.Unstructured{"exampleclusters.infrastructure.cluster.x-k8s.io": obj(t, `
spec:
  group: infrastructure.cluster.x-k8s.io
  names: {kind: ExampleCluster}
  versions: [{name: v1beta1, storage: false}, {name: v1beta2, storage: true}]`)}
	for gvk, want := range map[string]string{
		"infrastructure.cluster.x-k8s.io/v1beta1/ExampleCluster": "v1beta2",
		"infrastructure.cluster.x-k8s.io/v1beta1/ExampleMachine": "v1beta1", // no CRD: as given
		"/v1/ConfigMap": "v1",
	} {
		parts := strings.Split(gvk, "/")
		got := storageVersion(crds, schemaGVK(parts[0], parts[1], parts[2]))
		if got != want {
			t.Errorf("%s: %s, want %s", gvk, got, want)
		}
	}
}

func TestMergePatchLeavesOutWhatTheServerSets(t *testing.T) {
	before := obj(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: ExampleCluster
metadata: {name: c, uid: a, resourceVersion: "1", generation: 1, managedFields: [{manager: x}]}
spec: {region: us-east-1}
status: {ready: false}`)
	same := before.DeepCopy()
	same.SetResourceVersion("9")
	same.SetGeneration(2)
	unstructured.SetNestedField(same.Object, true, "status", "ready")
	if p, err := mergePatch(before, same); err != nil || p != "" {
		t.Errorf("server-set fields and status: patch %q, %v; want none", p, err)
	}
	defaulted := before.DeepCopy()
	unstructured.SetNestedField(defaulted.Object, false, "spec", "loadBalancer", "highAvailability")
	unstructured.RemoveNestedField(defaulted.Object, "spec", "region")
	p, err := mergePatch(before, defaulted)
	if want := `{"spec":{"loadBalancer":{"highAvailability":false},"region":null}}`; err != nil || p != want {
		t.Errorf("patch %s, %v; want %s", p, err, want)
	}
}

func TestStates(t *testing.T) {
	for _, c := range []struct {
		name string
		s    applyState
		want string
	}{
		{"nothing done", applyState{old: "v0.1.0", new: "v0.1.1", providers: []string{"infrastructure-example"}, inventory: []string{"infrastructure-example@v0.1.0"}},
			"clusterctl changed nothing: the cluster still runs v0.1.0; the inventory says infrastructure-example@v0.1.0"},
		{"deleted only", applyState{old: "v0.1.0", new: "v0.1.1", providers: []string{"infrastructure-example"}, deleted: true},
			"v0.1.0's components deleted (its CRDs, namespaces and inventory entry kept) and v0.1.1's not installed: infrastructure-example is half-upgraded"},
		{"partly installed", applyState{old: "v0.1.0", new: "v0.1.1", providers: []string{"infrastructure-example"}, deleted: true, installing: true, present: 12, total: 18,
			inventory: []string{"infrastructure-example@v0.1.0"}},
			"v0.1.0's components deleted and v0.1.1's partly installed (12 of 18 objects in the cluster): infrastructure-example is half-upgraded; the inventory says infrastructure-example@v0.1.0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.String(); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
	w := wouldState("v0.1.0", "v0.1.1", []string{"infrastructure-example"})
	for _, want := range []string{"nothing applied: the cluster still runs v0.1.0", "delete v0.1.0's components", "about 2.5 minutes",
		"infrastructure-example would be left half-upgraded (v0.1.0's components deleted, v0.1.1's CRD refused, the inventory still saying v0.1.0)"} {
		if !strings.Contains(w, want) {
			t.Errorf("%q does not say %q", w, want)
		}
	}
}

func TestClusterctlLog(t *testing.T) {
	var b strings.Builder
	l := &clusterctlLog{w: &b}
	restore := l.hear()
	version := "v0.1.0"
	log := clusterctlLogger()
	log.Info("Deleting", "Provider", "capi-example-system/infrastructure-example", "providerVersion", &version)
	log.WithValues("provider", "infrastructure-example").Info("Installing", "version", "v0.1.1")
	log.V(5).Info("Retrying with backoff", "cause", "the server refused")
	log.V(5).Info("Creating", "kind", "Deployment")
	log.Error(errors.New("boom"), "failed")
	restore()
	clusterctlLogger().Info("after", "x", 1) // no longer heard
	if !l.saw("Deleting", map[string]string{"providerVersion": "v0.1.0"}) || !l.saw("Installing", map[string]string{"provider": "infrastructure-example", "version": "v0.1.1"}) {
		t.Errorf("events %+v", l.events)
	}
	if l.saw("Installing", map[string]string{"version": "v0.1.0"}) || l.saw("Creating", nil) {
		t.Error("saw what was not logged at that level or with those values")
	}
	if got := l.retried(); got != "the server refused" {
		t.Errorf("last retry %q", got)
	}
	want := "  clusterctl: Deleting Provider=capi-example-system/infrastructure-example providerVersion=v0.1.0\n" +
		"  clusterctl: Installing provider=infrastructure-example version=v0.1.1\n" +
		"  clusterctl: failed error=boom\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("log (-want +got):\n%s", d)
	}
}

// failedReport is the report of a rehearsal the API server stopped at the
// check, with an object of each kind of outcome.
func failedReport() *Report {
	return &Report{Server: "https://127.0.0.1:6443", Old: "v0.1.0", New: "v0.1.1", Providers: []string{"infrastructure-example"},
		Core: []string{"cluster-api@v1.14.2"}, CertManager: "cluster", StandIns: []string{"EXAMPLE_REGION=capirepo-example-region"},
		Served: []Served{{Provider: "infrastructure-example", Version: "v0.1.0", File: "infrastructure-components.yaml",
			Removed: []string{"ValidatingWebhookConfiguration/v"}, NoConversion: []string{"CustomResourceDefinition/c"}, ScaledDown: []string{"Deployment/d"}},
			{Provider: "cluster-api", Version: "v1.14.2", File: "core-components.yaml"}},
		Steps: []Step{{Name: "init", Status: StatusOK, Detail: "installed", Seconds: 3.2}, {Name: "check", Status: StatusFailed, Detail: "1 of 6 CRDs refused", Seconds: 0.31}},
		Objects: []*Object{{File: "f", Object: "ExampleCluster/ns/c", Created: true, ReadBack: "same uid", NoOp: "refused by a rule", Refused: true},
			{File: "f", Object: "Cluster/ns/c", NotCreated: "no kind"}, {File: "f", Object: "ExampleMachine/ns/m", Created: true, Changed: `{"spec":{"a":1}}`}},
		Failure: &Failure{Step: "check", Message: "refused", State: "nothing applied"},
		Left:    []string{"Namespace/x (still deleting)"}, Seconds: 12.3}
}

func TestReportText(t *testing.T) {
	rep := failedReport()
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `upgrade rehearsal v0.1.0 -> v0.1.1 of infrastructure-example on https://127.0.0.1:6443 (clusterctl's client in process)
  core: cluster-api@v1.14.2
  cert-manager: the cluster's CRDs
  served infrastructure-example/v0.1.0/infrastructure-components.yaml: 1 webhook configurations taken out, 1 conversion webhooks set to None, 1 workloads run no Pod
  stand-ins (no real value given): EXAMPLE_REGION=capirepo-example-region
  init         ok        3.2s  installed
  check        failed    0.3s  1 of 6 CRDs refused
    refused     ExampleCluster/ns/c (f): read back: same uid; no-op apply: refused by a rule
    not created Cluster/ns/c (f): no kind
    changed     ExampleMachine/ns/m (f): {"spec":{"a":1}}
  FAILED at check: refused
  state: nothing applied
  left behind: Namespace/x (still deleting)
  2 objects created from v0.1.0's templates, 1 refused after the upgrade; 12.3s in all
  not judged: no controller ran and no webhook was called (conversion included): the server's validation and clusterctl's upgrade only
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if err := rep.err(); err == nil || err.Error() != "upgrade rehearsal: v0.1.0 -> v0.1.1: check: refused\nnothing applied" {
		t.Errorf("error %v", err)
	}
}

// TestClusterctlLog_StopsRetriesOfARefusal checks that clusterctl is
// stopped once it retries an object the API server refuses, after
// refusedRetries tries with the same refusal, and not for passing causes.
func TestClusterctlLog_StopsRetriesOfARefusal(t *testing.T) {
	l := &clusterctlLog{w: &strings.Builder{}}
	restore := l.hear()
	defer restore()
	var stopped error
	done := l.stopOnRefusal(func(err error) { stopped = err })
	retry := func(cause string) { clusterctlLogger().V(5).Info("Retrying with backoff", "cause", cause) }
	for range 5 {
		retry("failed to create provider object: dial tcp 127.0.0.1:6443: connect: connection refused")
	}
	const refused = `failed to create provider object: Service "capi-example-webhook-service" is invalid: spec.ports[0].port: Invalid value: 99999`
	retry(refused)
	retry(refused)
	retry(refused)
	if stopped != nil {
		t.Fatalf("stopped after 3 tries: %v", stopped)
	}
	retry(refused)
	var re *RefusedError
	if !errors.As(stopped, &re) || re.Cause != refused || re.Tries != 4 || !strings.Contains(stopped.Error(), "stopped after 4 tries") {
		t.Fatalf("stopped with %v, want the refusal after 4 tries", stopped)
	}
	done()
	stopped = nil
	done = l.stopOnRefusal(func(err error) { stopped = err })
	defer done()
	for range 3 {
		retry(refused)
	}
	if stopped != nil {
		t.Errorf("a new watch counted the retries before it: %v", stopped)
	}
}
