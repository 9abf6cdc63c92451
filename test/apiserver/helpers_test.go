package apiserver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// root is capirepo's checkout: this module lives in test/apiserver.
const root = "../.."

// CertManagerModule is cert-manager's Go module at the version clusterctl
// installs: its zip holds deploy/crds, the CRDs its release manifest ships
// (rendered there through its Helm chart, with the same schemas), so the
// tests get them through the Go module proxy, never from GitHub.
var CertManagerModule = "github.com/cert-manager/cert-manager@" + config.CertManagerDefaultVersion

var (
	crdGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// exampleRelease builds capirepo's bundled example provider.
func exampleRelease(t *testing.T) *release.Release {
	t.Helper()
	return buildtest.Build(t, filepath.Join(root, "examples", "infrastructure-example"), "v0.1.0").Release
}

// goodRelease is verify's small release under verify/testdata/good.
func goodRelease(t *testing.T) *release.Release {
	t.Helper()
	id, err := provider.ParseLabel("infrastructure-example")
	if err != nil {
		t.Fatal(err)
	}
	p := &release.Provider{ID: id, Version: "v0.1.0", ComponentsFile: "infrastructure-components.yaml"}
	dir := filepath.Join(root, "verify", "testdata", "good")
	for name, data := range testtree.ReadDir(t, dir) {
		if err := p.Add(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	return &release.Release{Version: p.Version, Providers: []*release.Provider{p}}
}

// realRelease builds a real provider tree from the module cache with its
// documented config (docs/configs), as the builder's real-tree tests do.
func realRelease(t testing.TB, module, configName, version string) *release.Release {
	t.Helper()
	dir := testtree.ModuleDir(t, module)
	cfg, err := provider.LoadConfig(dir, filepath.Join(root, "docs", "configs", configName))
	if err != nil {
		t.Fatal(err)
	}
	res, err := builder.Build(context.Background(), builder.Options{Dir: dir, Config: cfg, Version: version})
	if err != nil {
		t.Fatalf("build %s: %v", module, err)
	}
	return res.Release
}

// certManager is cert-manager's release as clusterctl would read it, with
// only its CRDs: the one file, cert-manager.yaml, from the module's
// deploy/crds.
func certManager(t testing.TB) *release.Provider {
	t.Helper()
	dir := filepath.Join(testtree.ModuleDir(t, CertManagerModule), "deploy", "crds")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s: %v", dir, err)
	}
	var b bytes.Buffer
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(bytes.TrimPrefix(data, []byte("---\n")))
	}
	return &release.Provider{ID: provider.CertManager, Version: config.CertManagerDefaultVersion, ComponentsFile: "cert-manager.yaml",
		Files: []release.File{{Name: "cert-manager.yaml", Data: b.Bytes()}}, NoChecksums: true}
}

// certManagerLoader hands the check cert-manager's release and counts the calls.
func certManagerLoader(t *testing.T, calls *int) func(context.Context) (*release.Provider, error) {
	cm := certManager(t)
	return func(context.Context) (*release.Provider, error) {
		*calls++
		return cm, nil
	}
}

// installCRDs creates the CRDs of files (multi-document YAML) for real, with
// conversion None, and waits until they are Established: the cluster a
// provider was installed in, as test setup.
func installCRDs(t testing.TB, cfg *rest.Config, files ...[]byte) []string {
	t.Helper()
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(cfg)
	var names []string
	for _, data := range files {
		objs, err := utilyaml.ToUnstructured(data)
		if err != nil {
			t.Fatal(err)
		}
		for i := range objs {
			o := &objs[i]
			if o.GetKind() != "CustomResourceDefinition" {
				continue
			}
			_ = unstructured.SetNestedMap(o.Object, map[string]any{"strategy": "None"}, "spec", "conversion")
			if _, err := dyn.Resource(crdGVR).Create(ctx, o, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("create %s: %v", o.GetName(), err)
			}
			names = append(names, o.GetName())
		}
	}
	for _, n := range names {
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			crd, err := dyn.Resource(crdGVR).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, c := range conds {
				if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("CRD %s not Established: %v", n, err)
		}
	}
	return names
}

// managementCluster starts a server with cluster-api's CRDs installed, and
// cert-manager's too when asked: a management cluster, as far as the API
// server is concerned.
func managementCluster(t testing.TB, withCertManager bool) *rest.Config {
	t.Helper()
	cfg := startServer(t)
	crds := components(realRelease(t, testtree.ClusterAPIModule, "cluster-api.capirepo.yaml", "v1.14.2"))
	if withCertManager {
		crds = append(crds, certManager(t).Components().Data)
	}
	installCRDs(t, cfg, crds...)
	return cfg
}

// components returns every provider's components file of a release.
func components(rel *release.Release) [][]byte {
	var out [][]byte
	for _, p := range rel.Providers {
		out = append(out, p.Components().Data)
	}
	return out
}

// crdNames lists the cluster's CRDs.
func crdNames(t *testing.T, cfg *rest.Config) map[string]bool {
	t.Helper()
	l, err := dynamic.NewForConfigOrDie(cfg).Resource(crdGVR).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, c := range l.Items {
		out[c.GetName()] = true
	}
	return out
}

// edit replaces old by new in a file of the release's provider label.
func edit(t *testing.T, rel *release.Release, label, file, old, new string) {
	t.Helper()
	for _, p := range rel.Providers {
		if p.Label() != label {
			continue
		}
		f, ok := p.File(file)
		if !ok || !bytes.Contains(f.Data, []byte(old)) {
			t.Fatalf("%s/%s does not hold %q", label, file, old)
		}
		if err := p.Add(file, bytes.Replace(f.Data, []byte(old), []byte(new), 1)); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no provider %s", label)
}

// report prints an install report for a failure message.
func report(rep *install.Report) string {
	if rep == nil {
		return "(no report)"
	}
	var b strings.Builder
	_ = rep.WriteText(&b)
	return b.String()
}

// file returns the report's entry for provider/version/name.
func file(t *testing.T, rep *install.Report, path string) *install.File {
	t.Helper()
	for _, f := range rep.Files {
		if f.Path() == path {
			return f
		}
	}
	t.Fatalf("the report has no file %s:\n%s", path, report(rep))
	return nil
}
