package configmap

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

var metadata = []byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 1\n  minor: 2\n  contract: v1beta2\n")

func newProvider(t *testing.T, id provider.ID, version string, components []byte) *release.Provider {
	t.Helper()
	p := &release.Provider{ID: id, Version: version, ComponentsFile: id.DefaultComponentsFile()}
	if err := p.Add("metadata.yaml", metadata); err != nil {
		t.Fatal(err)
	}
	if err := p.Add(p.ComponentsFile, components); err != nil {
		t.Fatal(err)
	}
	return p
}

var infra = provider.ID{Name: "example", Type: clusterctlv1.InfrastructureProviderType}

// roundTrip renders a release, parses the output and loads every provider
// back by the operator's rules.
func roundTrip(t *testing.T, rel *release.Release, o Options) ([]*release.Provider, []Item, []byte) {
	t.Helper()
	out, items, err := Render(rel, o)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("out.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	var got []*release.Provider
	for _, r := range f.Resources {
		p, err := Load(f, r)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	return got, items, out
}

func TestBuild_CompressesOnlyAboveTheOperatorsThreshold(t *testing.T) {
	for _, tc := range []struct {
		name       string
		total      int // metadata + components
		compressed bool
	}{
		{"one byte under", MaxSize - 1, false},
		{"exactly 1 MiB", MaxSize, false},
		{"one byte over", MaxSize + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			comp := bytes.Repeat([]byte("# x\n"), (tc.total-len(metadata))/4+1)[:tc.total-len(metadata)]
			p := newProvider(t, infra, "v1.2.3", comp)
			cm, err := Build(p, "ns")
			if err != nil {
				t.Fatal(err)
			}
			if got := cm.Metadata.Annotations[AnnotationCompressed] == "true"; got != tc.compressed {
				t.Errorf("compressed = %v, want %v", got, tc.compressed)
			}
			if _, inData := cm.Data[KeyComponents]; inData == tc.compressed {
				t.Errorf("data.components present = %v with compressed = %v", inData, tc.compressed)
			}
			if cm.Size() > MaxSize {
				t.Errorf("ConfigMap data is %d bytes, over the API server's %d", cm.Size(), MaxSize)
			}
			got, _, _ := roundTrip(t, &release.Release{Version: "v1.2.3", Providers: []*release.Provider{p}}, Options{})
			if !bytes.Equal(got[0].Components().Data, comp) {
				t.Error("components read back differ")
			}
		})
	}
}

// generatedComponents is a components file of about size bytes: CRDs with
// large schemas, as real providers ship.
func generatedComponents(size int) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capx-system\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things%d.infrastructure.cluster.x-k8s.io\nspec:\n  group: infrastructure.cluster.x-k8s.io\n  names:\n    kind: Thing%d\n  versions:\n  - name: v1beta2\n    schema:\n      openAPIV3Schema:\n        properties:\n", i, i)
		for j := range 40 {
			fmt.Fprintf(&b, "          field%d:\n            description: Field%d of Thing%d is a setting the controller reads on every reconcile.\n            type: string\n", j, j, i)
		}
	}
	return b.Bytes()
}

func TestRender_GeneratedTenMegabyteComponents(t *testing.T) {
	comp := generatedComponents(10 << 20)
	p := newProvider(t, infra, "v1.2.3", comp)
	got, items, out := roundTrip(t, &release.Release{Version: "v1.2.3", Providers: []*release.Provider{p}}, Options{})
	if !items[0].Compressed || items[0].Size > MaxSize || items[0].RawSize != len(comp)+len(metadata) {
		t.Errorf("item %+v", items[0])
	}
	if items[0].Namespace != "capx-system" {
		t.Errorf("namespace %s, want the one the components create", items[0].Namespace)
	}
	// (cmp.Diff walks 10 MB byte by byte: compare the bytes directly.)
	if got[0].ComponentsFile != p.ComponentsFile || !bytes.Equal(got[0].Components().Data, comp) {
		t.Errorf("read back %s, %d bytes; want %s, %d bytes", got[0].ComponentsFile, len(got[0].Components().Data), p.ComponentsFile, len(comp))
	}
	t.Logf("10 MiB components: ConfigMap data %d bytes, file %d bytes", items[0].Size, len(out))
}

func TestBuild_StillTooLargeCompressedIsAClearError(t *testing.T) {
	comp := make([]byte, 3<<20)
	if _, err := rand.Read(comp); err != nil { // random bytes do not compress
		t.Fatal(err)
	}
	_, err := Build(newProvider(t, infra, "v1.2.3", comp), "ns")
	if err == nil {
		t.Fatal("a ConfigMap over the limit was built")
	}
	for _, want := range []string{"infrastructure-example v1.2.3", "infrastructure-components.yaml", "3.0 MiB", "1048576", "publish oci"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestRender_LabelsAndProviderResources(t *testing.T) {
	comp := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capi-kubeadm-control-plane-system\n")
	cp := newProvider(t, provider.ID{Name: "kubeadm", Type: clusterctlv1.ControlPlaneProviderType}, "v1.14.2", comp)
	out, _, err := Render(&release.Release{Version: "v1.14.2", Providers: []*release.Provider{cp}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: capi-kubeadm-control-plane-system\n---\napiVersion: v1\ndata:\n",
		"name: controlplane-kubeadm-v1.14.2\n",
		"provider.cluster.x-k8s.io/name: kubeadm\n", "provider.cluster.x-k8s.io/type: controlplane\n", "provider.cluster.x-k8s.io/version: v1.14.2\n",
		"kind: ControlPlaneProvider\n", "selector:\n      matchLabels:\n", "version: v1.14.2\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestLoad_TheOperatorsRules(t *testing.T) {
	p1 := newProvider(t, infra, "v1.2.3", []byte("# v1.2.3\n"))
	p2 := newProvider(t, infra, "v1.3.0", []byte("# v1.3.0\n"))
	var docs []byte
	for _, p := range []*release.Provider{p1, p2} {
		out, _, err := Render(&release.Release{Version: p.Version, Providers: []*release.Provider{p}}, Options{Namespace: "capx"})
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, out...)
	}
	f, err := Parse("x.yaml", docs)
	if err != nil {
		t.Fatal(err)
	}
	r := f.Resources[0]
	load := func(r Resource) string {
		p, err := Load(f, r)
		if err != nil {
			return "error: " + err.Error()
		}
		return p.Version + " " + string(p.Components().Data)
	}
	if got := load(r); got != "v1.2.3 # v1.2.3\n" {
		t.Errorf("spec.version v1.2.3: %s", got)
	}
	r.Version = ""
	if got := load(r); got != "v1.3.0 # v1.3.0\n" {
		t.Errorf("no spec.version, want the newest: %s", got)
	}
	r.Namespace = "elsewhere"
	if got := load(r); !strings.Contains(got, "no ConfigMaps found") {
		t.Errorf("another namespace: %s", got)
	}
	r.Namespace, r.Version = "capx", "v9.9.9"
	if got := load(r); !strings.Contains(got, "hold versions [v1.2.3, v1.3.0]") {
		t.Errorf("a version not there: %s", got)
	}

	// Without the version label the name is the version, and must be semver.
	r.Version = ""
	delete(f.ConfigMaps[0].Metadata.Labels, LabelVersion)
	if got := load(r); !strings.Contains(got, "has invalid version:infrastructure-example-v1.2.3 (from the Name)") {
		t.Errorf("name that is no version: %s", got)
	}
	f.ConfigMaps[0].Metadata.Name = "v1.4.0"
	if got := load(r); got != "v1.4.0 # v1.2.3\n" {
		t.Errorf("version from the name: %s", got)
	}
	// The highest, pre-releases included, is the operator's rule
	// (getLatestVersion), not clusterctl's latest.
	f.ConfigMaps[0].Metadata.Name = "v1.4.0-rc.1"
	if got := load(r); got != "v1.4.0-rc.1 # v1.2.3\n" {
		t.Errorf("a pre-release is the highest: %s", got)
	}
	// The operator asks for the highest as v<semver>: a ConfigMap of
	// version 1.4.0 is not found by it.
	f.ConfigMaps[0].Metadata.Name = "1.4.0"
	if got := load(r); !strings.Contains(got, "which it asks for as v1.4.0, and no ConfigMap has that version (versions [v1.3.0, 1.4.0])") {
		t.Errorf("the highest without the v: %s", got)
	}
	f.ConfigMaps[0].Metadata.Name = "v1.4.0"
	delete(f.ConfigMaps[0].Data, KeyMetadata)
	if got := load(r); !strings.Contains(got, "capx/v1.4.0 has no metadata") {
		t.Errorf("no metadata: %s", got)
	}
}

func TestParse_RefusesAFileWithoutProviderResources(t *testing.T) {
	if _, err := Parse("x.yaml", []byte("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  metadata: x\n")); err == nil ||
		!strings.Contains(err.Error(), "no operator Provider resource") {
		t.Errorf("err = %v", err)
	}
}

func TestRender_ExampleProviderRoundTrip(t *testing.T) {
	dir := filepath.Join("..", "..", "builder", "testdata", "golden", "infrastructure-example")
	md, err := os.ReadFile(filepath.Join(dir, "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	comp, err := os.ReadFile(filepath.Join(dir, "infrastructure-components.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := &release.Provider{ID: infra, Version: "v0.1.0", ComponentsFile: "infrastructure-components.yaml"}
	_ = p.Add("metadata.yaml", md)
	_ = p.Add("infrastructure-components.yaml", comp)
	got, items, _ := roundTrip(t, &release.Release{Version: "v0.1.0", Providers: []*release.Provider{p}}, Options{})
	if items[0].Compressed || items[0].Namespace != "capi-example-system" {
		t.Errorf("item %+v", items[0])
	}
	if diff := cmp.Diff(p, got[0]); diff != "" {
		t.Errorf("(-rendered +read)\n%s", diff)
	}
}

func TestBuild_VersionsThatAreNoObjectName(t *testing.T) {
	cm, err := Build(newProvider(t, infra, "v1.2.0-RC.1", []byte("#\n")), "ns")
	if err != nil {
		t.Fatal(err)
	}
	if cm.Metadata.Name != "infrastructure-example-v1.2.0-rc.1" || cm.Metadata.Labels[LabelVersion] != "v1.2.0-RC.1" {
		t.Errorf("name %s, version label %s", cm.Metadata.Name, cm.Metadata.Labels[LabelVersion])
	}
	if _, err := Build(newProvider(t, infra, "v1.2.0+build.7", []byte("#\n")), "ns"); err == nil || !strings.Contains(err.Error(), "label value") {
		t.Errorf("build metadata: err = %v", err)
	}
}
