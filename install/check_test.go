package install

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// TestJudge turns the server's answers into refusals by field, keeps
// other warnings as warnings, and returns what is not about the object.
func TestJudge(t *testing.T) {
	gk := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	invalid := apierrors.NewInvalid(gk, "m", field.ErrorList{
		field.Invalid(field.NewPath("spec", "template", "spec", "containers").Index(0).Child("name"), "Manager_1", "a lowercase RFC 1123 label must consist of ..."),
		field.NotSupported(field.NewPath("spec", "strategy", "type"), "Sometimes", []string{"Recreate", "RollingUpdate"}),
	})
	cases := []struct {
		name         string
		a            answer
		wantRefused  []Refusal
		wantWarnings []string
		wantErr      bool
	}{
		{name: "accepted"},
		{name: "every cause, with its field", a: answer{err: invalid}, wantRefused: []Refusal{
			{Object: "Deployment/m", Field: "spec.template.spec.containers[0].name", Message: `Invalid value: "Manager_1": a lowercase RFC 1123 label must consist of ...`, Reason: "422 Invalid"},
			{Object: "Deployment/m", Field: "spec.strategy.type", Message: `Unsupported value: "Sometimes": supported values: "Recreate", "RollingUpdate"`, Reason: "422 Invalid"},
		}},
		{name: "fields Strict refuses, from fieldValidation=Warn's warnings", a: answer{warnings: []string{
			`unknown field "spec.replica"`, `duplicate field "spec.paused"`, `cluster.x-k8s.io/v1beta1 Cluster is deprecated; use cluster.x-k8s.io/v1beta2 Cluster`}},
			wantRefused: []Refusal{
				{Object: "Deployment/m", Field: "spec.replica", Message: `unknown field "spec.replica"`, Reason: "strict field validation"},
				{Object: "Deployment/m", Field: "spec.paused", Message: `duplicate field "spec.paused"`, Reason: "strict field validation"},
			},
			wantWarnings: []string{"Deployment/m: cluster.x-k8s.io/v1beta1 Cluster is deprecated; use cluster.x-k8s.io/v1beta2 Cluster"}},
		// The server follows a blocking schema error of a custom resource
		// with a cause of no field (apiextensions-apiserver's
		// hasBlockingErr): it says the CEL rules were skipped, and is no
		// refusal of its own.
		{name: "the CEL rules' follow-up is said with the refusal it follows", a: answer{err: apierrors.NewInvalid(gk, "m", field.ErrorList{
			field.Invalid(field.NewPath("spec", "replicas"), "one", "spec.replicas in body must be of type integer: \"string\""),
			field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"),
		})}, wantRefused: []Refusal{
			{Object: "Deployment/m", Field: "spec.replicas", Message: `Invalid value: "one": spec.replicas in body must be of type integer: "string"` +
				"; the server then skipped the object's validation rules (x-kubernetes-validations): some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
				Reason: "422 Invalid"},
		}},
		{name: "a refusal without causes", a: answer{err: apierrors.NewBadRequest("cannot be handled as a ConfigMap")},
			wantRefused: []Refusal{{Object: "Deployment/m", Message: "cannot be handled as a ConfigMap", Reason: "400 BadRequest"}}},
		{name: "a timeout is not about the object", a: answer{err: apierrors.NewTimeoutError("slow", 1)}, wantErr: true},
		{name: "nor is a missing permission", a: answer{err: apierrors.NewForbidden(schema.GroupResource{Resource: "deployments"}, "m", errors.New("RBAC"))}, wantErr: true},
		{name: "nor a refused connection", a: answer{err: errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")}, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			refused, warnings, err := judge("Deployment/m", c.a)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, c.wantErr)
			}
			if diff := cmp.Diff(c.wantRefused, refused); diff != "" {
				t.Errorf("refused (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.wantWarnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInstallReport_RefusalsGroupedByFile lists every refusal at once,
// under its file, in the order the files were sent.
func TestInstallReport_RefusalsGroupedByFile(t *testing.T) {
	rep := &Report{Server: "https://127.0.0.1:6443", Files: []*File{
		{Provider: "infrastructure-example", Version: "v0.1.0", File: "infrastructure-components.yaml", Accepted: 18, Refused: []Refusal{
			{Object: "Deployment/capi-example-controller-manager", Field: "spec.template.spec.containers[0].name", Message: `Invalid value: "Manager_1"`, Reason: "422 Invalid"},
			{Object: "Certificate/capi-example-serving-cert", Field: "spec.privateKey.algorithm", Message: `Unsupported value: "DSA"`, Reason: "422 Invalid"},
		}},
		{Provider: "infrastructure-example", Version: "v0.1.0", File: "cluster-template.yaml", Accepted: 7},
		{Provider: "infrastructure-example", Version: "v0.1.0", File: "cluster-template-ha.yaml", Accepted: 8, Refused: []Refusal{
			{Object: "MachineDeployment/c-md-0", Field: "spec.replica", Message: `unknown field "spec.replica"`, Reason: "strict field validation"},
		}, NotChecked: []NotChecked{{Object: "Thing/x", Why: "needs another provider's CustomResourceDefinition"}}},
	}}
	want := `install check: the API server at https://127.0.0.1:6443 refused objects of the release (refusals: 3, files: 2):
infrastructure-example/v0.1.0/infrastructure-components.yaml:
  Deployment/capi-example-controller-manager: field spec.template.spec.containers[0].name: Invalid value: "Manager_1" (422 Invalid)
  Certificate/capi-example-serving-cert: field spec.privateKey.algorithm: Unsupported value: "DSA" (422 Invalid)
infrastructure-example/v0.1.0/cluster-template-ha.yaml:
  MachineDeployment/c-md-0: field spec.replica: unknown field "spec.replica" (strict field validation)`
	if diff := cmp.Diff(want, rep.refusedError().Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if rep.Accepted() != 33 || rep.Refusals() != 3 || rep.NotCheckedCount() != 1 {
		t.Errorf("counts %d %d %d", rep.Accepted(), rep.Refusals(), rep.NotCheckedCount())
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"  infrastructure-example/v0.1.0/cluster-template-ha.yaml: 8 accepted, 1 refused, 1 not checked\n",
		"    not checked Thing/x: needs another provider's CustomResourceDefinition\n",
		"  33 accepted, 3 refused, 1 not checked\n",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("the text report lacks %q:\n%s", line, b.String())
		}
	}
	if (&Report{}).refusedError() != nil {
		t.Error("an empty report is an error")
	}
}

// TestInstall_ProvidersInClusterctlOrder stages a release and orders its
// providers as clusterctl init installs them, whatever the release's order.
func TestInstall_ProvidersInClusterctlOrder(t *testing.T) {
	base := buildtest.MinimalRelease(t, "v0.1.0").Providers[0]
	var provs []*release.Provider
	for _, id := range []provider.ID{
		{Name: "example", Type: clusterctlv1.InfrastructureProviderType},
		{Name: "kubeadm", Type: clusterctlv1.ControlPlaneProviderType},
		{Name: "in-cluster", Type: clusterctlv1.IPAMProviderType},
		{Name: "cluster-api", Type: clusterctlv1.CoreProviderType},
		{Name: "kubeadm", Type: clusterctlv1.BootstrapProviderType},
	} {
		p := *base
		p.ID = id
		provs = append(provs, &p)
	}
	in := &installer{tmp: t.TempDir(), run: "abcde"}
	got, err := in.providers(&release.Release{Version: "v0.1.0", Providers: provs})
	if err != nil {
		t.Fatal(err)
	}
	var labels, namespaces []string
	for _, ip := range got {
		labels = append(labels, ip.p.Label())
		namespaces = append(namespaces, ip.namespace)
	}
	want := []string{"cluster-api", "bootstrap-kubeadm", "control-plane-kubeadm", "infrastructure-example", "ipam-in-cluster"}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	// Each provider its own namespace, named by its place in the release.
	if diff := cmp.Diff([]string{"capirepo-install-abcde-4", "capirepo-install-abcde-5", "capirepo-install-abcde-2", "capirepo-install-abcde-1", "capirepo-install-abcde-3"}, namespaces); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
}

// TestInstall_NoServer fails at once, naming the server, and creates
// nothing: a server that answers everything with 503 is never written to.
func TestInstall_NoServer(t *testing.T) {
	var writes int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			writes++
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	rel := buildtest.MinimalRelease(t, "v0.1.0")
	for _, cfg := range []*rest.Config{{Host: srv.URL, Timeout: 5 * time.Second}, {Host: "https://127.0.0.1:1", Timeout: 5 * time.Second}} {
		_, err := Check(context.Background(), rel, Options{Config: cfg})
		if err == nil || !strings.Contains(err.Error(), "cannot reach the API server at "+cfg.Host) {
			t.Errorf("%s: %v", cfg.Host, err)
		}
	}
	if writes > 0 {
		t.Errorf("%d writes", writes)
	}
	if _, err := Check(context.Background(), rel, Options{}); err == nil {
		t.Error("no server given: no error")
	}
}
