package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/values"
)

var exampleID = provider.ID{Name: "example", Type: clusterctlv1.InfrastructureProviderType}

// goodProvider loads the small release under testdata/good.
func goodProvider(t *testing.T) *release.Provider {
	t.Helper()
	p := &release.Provider{ID: exampleID, Version: "v0.1.0", ComponentsFile: "infrastructure-components.yaml"}
	entries, err := os.ReadDir("testdata/good")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("testdata/good", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Add(e.Name(), data); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// writeRelease writes providers as a dist folder in a fresh temp dir.
func writeRelease(t *testing.T, ps ...*release.Provider) string {
	t.Helper()
	out := t.TempDir()
	if err := release.Write(out, &release.Release{Version: ps[0].Version, Providers: ps}); err != nil {
		t.Fatal(err)
	}
	return out
}

func remove(p *release.Provider, name string) {
	p.Files = slices.DeleteFunc(p.Files, func(f release.File) bool { return f.Name == name })
}

func edit(t *testing.T, p *release.Provider, name, old, new string) {
	t.Helper()
	f, ok := p.File(name)
	if !ok || !bytes.Contains(f.Data, []byte(old)) {
		t.Fatalf("fixture %s does not hold %q", name, old)
	}
	if err := p.Add(name, bytes.Replace(f.Data, []byte(old), []byte(new), 1)); err != nil {
		t.Fatal(err)
	}
}

func TestDir_GoodReleaseReportsWhatClusterctlRead(t *testing.T) {
	root := writeRelease(t, goodProvider(t))
	rep, err := Dir(context.Background(), root, Options{})
	if err != nil {
		t.Fatalf("Dir: %v", err)
	}
	if len(rep.Providers) != 1 {
		t.Fatalf("got %d providers, want 1", len(rep.Providers))
	}
	p := rep.Providers[0]
	str := func(s string) *string { return &s }
	want := &ProviderReport{
		Label:          "infrastructure-example",
		URL:            "file://" + filepath.ToSlash(filepath.Join(root, "infrastructure-example", "v0.1.0", "infrastructure-components.yaml")),
		Version:        "v0.1.0",
		Versions:       []string{"v0.1.0"},
		Contract:       "v1beta2",
		ComponentsFile: "infrastructure-components.yaml",
		Objects:        8,
		Namespace:      "example-system",
		Images:         []string{"ghcr.io/example/capi-example-controller:v0.1.0"},
		Variables: []Variable{
			{Name: "EXAMPLE_B64ENCODED_CREDENTIALS", Required: true, Value: "Y2FwaXJlcG8tcGxhY2Vob2xkZXI=", Placeholder: true},
			{Name: "EXAMPLE_DIAGNOSTICS_ADDRESS", Default: str(":8443"), Value: ":8443"},
			{Name: "EXAMPLE_LOG_LEVEL", Default: str("2"), Value: "2"},
		},
		Flavors: []*TemplateReport{
			{Name: "", File: "cluster-template.yaml", Objects: 4, Variables: []Variable{
				{Name: "CLUSTER_NAME", Required: true, Value: values.ClusterName},
				{Name: "EXAMPLE_MACHINE_FLAVOR", Required: true, Value: "capirepo-example-machine-flavor", Placeholder: true},
				{Name: "EXAMPLE_REGION", Default: str("local"), Value: "local"},
				{Name: "KUBERNETES_VERSION", Required: true, Value: values.KubernetesVersion},
				{Name: "NAMESPACE", Required: true, Value: Namespace},
				{Name: "WORKER_MACHINE_COUNT", Required: true, Value: "1"},
			}},
			{Name: "topology", File: "cluster-template-topology.yaml", Objects: 4, ClusterClasses: []string{"capirepo-verify/example-quick-start"}, Variables: []Variable{
				{Name: "CLUSTER_NAME", Required: true, Value: values.ClusterName},
				{Name: "CONTROL_PLANE_MACHINE_COUNT", Required: true, Value: "1"},
				{Name: "EXAMPLE_MACHINE_FLAVOR", Required: true, Value: "capirepo-example-machine-flavor", Placeholder: true},
				{Name: "EXAMPLE_REGION", Default: str("local"), Value: "local"},
				{Name: "KUBERNETES_VERSION", Required: true, Value: values.KubernetesVersion},
				{Name: "NAMESPACE", Required: true, Value: Namespace},
				{Name: "WORKER_MACHINE_COUNT", Required: true, Value: "1"},
			}},
		},
		ClusterClasses: []*TemplateReport{
			{Name: "example-quick-start", File: "clusterclass-example-quick-start.yaml", Objects: 3, Variables: []Variable{
				{Name: "EXAMPLE_REGION", Default: str("local"), Value: "local"},
			}},
		},
		TemplatesListed: true,
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}

	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"infrastructure-example v0.1.0  (" + rep.Providers[0].URL + ")",
		"  contract:   v1beta2",
		"  components: infrastructure-components.yaml: 8 objects, namespace example-system",
		"    image    ghcr.io/example/capi-example-controller:v0.1.0",
		`    variable EXAMPLE_B64ENCODED_CREDENTIALS (required) = "Y2FwaXJlcG8tcGxhY2Vob2xkZXI=" placeholder`,
		`    variable EXAMPLE_LOG_LEVEL (default "2") = "2"`,
		"  flavor (default): cluster-template.yaml: 4 objects, 6 variables",
		"  flavor topology: cluster-template-topology.yaml: 4 objects, 7 variables, with ClusterClass capirepo-verify/example-quick-start",
		"  clusterclass example-quick-start: clusterclass-example-quick-start.yaml: 3 objects, 1 variable",
		// Each template variable once, not once per file.
		`  template variables: CLUSTER_NAME (required), CONTROL_PLANE_MACHINE_COUNT (required), EXAMPLE_MACHINE_FLAVOR (required), EXAMPLE_REGION (default "local"), KUBERNETES_VERSION (required), NAMESPACE (required), WORKER_MACHINE_COUNT (required)`,
		// Which values were stand-ins, as the components' lines say theirs.
		"  template stand-ins (no real value given): EXAMPLE_MACHINE_FLAVOR",
	} {
		if !strings.Contains(text.String(), line+"\n") {
			t.Errorf("text report lacks line %q:\n%s", line, text.String())
		}
	}
	if n := strings.Count(text.String(), "\n"); n != 12 {
		t.Errorf("text report has %d lines, want 12 (no line per template variable):\n%s", n, text.String())
	}

	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rep, &back); diff != "" {
		t.Errorf("json round trip (-want +got):\n%s", diff)
	}
}

func TestDir_FailsWhereClusterctlFails(t *testing.T) {
	const comps = "infrastructure-components.yaml"
	tests := []struct {
		name   string
		mutate func(t *testing.T, p *release.Provider)
		// want are substrings of the error: the file and clusterctl's words.
		want []string
	}{
		{
			name:   "missing metadata.yaml",
			mutate: func(t *testing.T, p *release.Provider) { remove(p, "metadata.yaml") },
			want:   []string{"infrastructure-example v0.1.0: metadata.yaml: ", `failed to read "metadata.yaml" from the repository for provider "infrastructure-example"`},
		},
		{
			name: "metadata does not cover the version",
			mutate: func(t *testing.T, p *release.Provider) {
				edit(t, p, "metadata.yaml", "minor: 1", "minor: 2")
			},
			want: []string{"metadata.yaml: field releaseSeries:", "version v0.1.0 for the provider infrastructure-example does not match any release series", "Available series: [0.2]"},
		},
		{
			name: "metadata contract clusterctl does not accept",
			mutate: func(t *testing.T, p *release.Provider) {
				edit(t, p, "metadata.yaml", "contract: v1beta2", "contract: v1alpha4")
			},
			want: []string{"metadata.yaml: field releaseSeries (0.1).contract:", "only compatible with providers implementing the v1beta2, v1beta1 contract", `"v1alpha4"`},
		},
		{
			name: "metadata with a wrong apiVersion",
			mutate: func(t *testing.T, p *release.Provider) {
				edit(t, p, "metadata.yaml", "clusterctl.cluster.x-k8s.io/v1alpha3", "clusterctl.cluster.x-k8s.io/v1alpha2")
			},
			want: []string{"metadata.yaml: "},
		},
		{
			name: "two Namespace objects",
			mutate: func(t *testing.T, p *release.Provider) {
				edit(t, p, comps, "---\n", "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: second\n---\n")
			},
			want: []string{comps + ": ", "There should be no more than one resource with Kind Namespace"},
		},
		{
			name: "no Namespace object",
			mutate: func(t *testing.T, p *release.Provider) {
				edit(t, p, comps, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example-system\n---\n", "")
			},
			want: []string{comps + ": without --target-namespace: ", "target namespace can't be defaulted"},
		},
		{
			name: "image that is not fully qualified",
			mutate: func(t *testing.T, p *release.Provider) {
				edit(t, p, comps, "ghcr.io/example/capi-example-controller:v0.1.0", "example-controller:v0.1.0")
			},
			want: []string{comps + ": ", "couldn't parse image name", "repository name must be canonical"},
		},
		{
			name: "image from a registry variable that is not a registry",
			mutate: func(t *testing.T, p *release.Provider) {
				edit(t, p, comps, "ghcr.io/example/capi-example-controller:v0.1.0", "${EXAMPLE_HOST:=example}/controller:v0.1.0")
			},
			want: []string{comps + ": ", "couldn't parse image name"},
		},
		{
			name: "CRD with a wrong name",
			mutate: func(t *testing.T, p *release.Provider) {
				edit(t, p, comps, "name: exampleclusters.infrastructure.cluster.x-k8s.io", "name: examplecluster.infrastructure.cluster.x-k8s.io")
			},
			want: []string{comps + ": CustomResourceDefinition examplecluster.infrastructure.cluster.x-k8s.io: field metadata.name: ", `it should be "exampleclusters.infrastructure.cluster.x-k8s.io"`},
		},
		{
			name: "components with an unclosed variable brace",
			mutate: func(t *testing.T, p *release.Provider) {
				edit(t, p, comps, "${EXAMPLE_LOG_LEVEL:=2}", "${EXAMPLE_LOG_LEVEL:=2")
			},
			want: []string{comps + ": ", "unable to parse substitution"},
		},
		{
			name: "template with an unclosed variable brace",
			mutate: func(t *testing.T, p *release.Provider) {
				edit(t, p, "cluster-template.yaml", "${EXAMPLE_MACHINE_FLAVOR}", "${EXAMPLE_MACHINE_FLAVOR")
			},
			want: []string{"infrastructure-example v0.1.0: cluster-template.yaml: ", "missing closing brace"},
		},
		{
			name: "template that is not YAML after substitution",
			mutate: func(t *testing.T, p *release.Provider) {
				edit(t, p, "cluster-template.yaml", "  region: ${EXAMPLE_REGION:=local}", "  region: [${EXAMPLE_REGION:=local}")
			},
			want: []string{"cluster-template.yaml: ", "failed to parse yaml"},
		},
		{
			name: "topology template whose clusterclass file is missing",
			mutate: func(t *testing.T, p *release.Provider) {
				remove(p, "clusterclass-example-quick-start.yaml")
			},
			want: []string{"cluster-template-topology.yaml: ClusterClass example-quick-start used by a topology Cluster: clusterclass-example-quick-start.yaml: ", `failed to read "clusterclass-example-quick-start.yaml" from provider's repository "infrastructure-example"`},
		},
		{
			name: "topology template whose class ships only inline (CAPA's shape)",
			mutate: func(t *testing.T, p *release.Provider) {
				class, _ := p.File("clusterclass-example-quick-start.yaml")
				topo, _ := p.File("cluster-template-topology.yaml")
				if err := p.Add("cluster-template-topology.yaml", append(append(append([]byte{}, topo.Data...), "---\n"...), class.Data...)); err != nil {
					t.Fatal(err)
				}
				remove(p, "clusterclass-example-quick-start.yaml")
			},
			want: []string{"cluster-template-topology.yaml: ClusterClass example-quick-start used by a topology Cluster: clusterclass-example-quick-start.yaml: "},
		},
		{
			name: "topology template whose class flavor ships another class",
			mutate: func(t *testing.T, p *release.Provider) {
				class, _ := p.File("clusterclass-example-quick-start.yaml")
				if err := p.Add("cluster-template-clusterclass.yaml", bytes.Replace(class.Data, []byte("name: example-quick-start\n"), []byte("name: example-other\n"), 1)); err != nil {
					t.Fatal(err)
				}
				remove(p, "clusterclass-example-quick-start.yaml")
			},
			want: []string{"cluster-template-topology.yaml: ClusterClass example-quick-start used by a topology Cluster: clusterclass-example-quick-start.yaml: "},
		},
		{
			name: "topology Cluster with a mistyped field",
			mutate: func(t *testing.T, p *release.Provider) {
				edit(t, p, "cluster-template-topology.yaml", "replicas: ${CONTROL_PLANE_MACHINE_COUNT}", "replicas: many")
			},
			want: []string{"cluster-template-topology.yaml: cluster capirepo-verify: failed to convert object to Cluster"},
		},
		{
			name: "clusterclass file with an unclosed variable brace",
			mutate: func(t *testing.T, p *release.Provider) {
				edit(t, p, "clusterclass-example-quick-start.yaml", "${EXAMPLE_REGION:=local}", "${EXAMPLE_REGION:=local")
			},
			want: []string{"infrastructure-example v0.1.0: clusterclass-example-quick-start.yaml: ", "unable to parse substitution"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := goodProvider(t)
			tt.mutate(t, p)
			root := writeRelease(t, p)
			rep, err := Dir(context.Background(), root, Options{})
			if err == nil {
				t.Fatalf("Dir succeeded, want an error holding %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if rep == nil || len(rep.Providers) != 1 {
				t.Fatalf("want a report of what was read next to the error, got %+v", rep)
			}
		})
	}
}

func TestDir_CallerValuesWinOverPlaceholders(t *testing.T) {
	root := writeRelease(t, goodProvider(t))
	rep, err := Dir(context.Background(), root, Options{
		KubernetesVersion: "v1.34.1",
		Variables:         map[string]string{"EXAMPLE_MACHINE_FLAVOR": "large", "EXAMPLE_REGION": "eu-1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range rep.Providers[0].Flavors[0].Variables {
		got[v.Name] = v.Value
		if v.Placeholder {
			t.Errorf("%s got a placeholder though the caller gave a value", v.Name)
		}
	}
	for name, want := range map[string]string{"EXAMPLE_MACHINE_FLAVOR": "large", "EXAMPLE_REGION": "eu-1", "KUBERNETES_VERSION": "v1.34.1"} {
		if got[name] != want {
			t.Errorf("%s = %q, want %q", name, got[name], want)
		}
	}
}

func TestDir_ImageVariablesGetImagePlaceholders(t *testing.T) {
	p := goodProvider(t)
	edit(t, p, "infrastructure-components.yaml", "ghcr.io/example/capi-example-controller:v0.1.0", "${EXAMPLE_REGISTRY}/controller:${EXAMPLE_TAG}")
	rep, err := Dir(context.Background(), writeRelease(t, p), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"registry.invalid/capirepo/controller:v0.0.0"}, rep.Providers[0].Images); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
}

func TestDirTargets(t *testing.T) {
	p1 := goodProvider(t)
	p2 := goodProvider(t)
	p2.Version = "v0.2.0"
	core := &release.Provider{ID: provider.ID{Name: "cluster-api", Type: clusterctlv1.CoreProviderType}, Version: "v0.1.0", ComponentsFile: "core-components.yaml",
		Files: []release.File{{Name: "core-components.yaml", Data: []byte("{}")}, {Name: "metadata.yaml", Data: []byte("{}")}}}
	root := writeRelease(t, p1, core)
	if err := release.Write(root, &release.Release{Version: "v0.2.0", Providers: []*release.Provider{p2}}); err != nil {
		t.Fatal(err)
	}
	url := func(label, version, file string) string {
		return "file://" + filepath.ToSlash(filepath.Join(root, label, version, file))
	}
	infra, coreID := exampleID, core.ID
	tests := []struct {
		name    string
		root    string
		version string
		want    []Repo
		wantErr string
	}{
		{name: "newest version by default", root: root, want: []Repo{
			{ID: infra, Version: "v0.2.0", URL: url("infrastructure-example", "v0.2.0", "infrastructure-components.yaml")},
		}},
		{name: "chosen version, every provider holding it", root: root, version: "v0.1.0", want: []Repo{
			{ID: coreID, Version: "v0.1.0", URL: url("cluster-api", "v0.1.0", "core-components.yaml")},
			{ID: infra, Version: "v0.1.0", URL: url("infrastructure-example", "v0.1.0", "infrastructure-components.yaml")},
		}},
		{name: "a version folder", root: filepath.Join(root, "cluster-api", "v0.1.0"), want: []Repo{
			{ID: coreID, Version: "v0.1.0", URL: url("cluster-api", "v0.1.0", "core-components.yaml")},
			{ID: infra, Version: "v0.1.0", URL: url("infrastructure-example", "v0.1.0", "infrastructure-components.yaml")},
		}},
		{name: "absent version", root: root, version: "v9.0.0", wantErr: "holds no provider folder for version v9.0.0"},
		{name: "version without v", root: root, version: "0.1.0", wantErr: `version "0.1.0" must start with 'v'`},
		{name: "empty folder", root: t.TempDir(), wantErr: "holds no <provider-label>/<version> folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DirRepos(tt.root, tt.version)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRepository_ReadsOnlyTheListedTemplates(t *testing.T) {
	// Repo.Files, as a publisher passes it for a GitHub release, decides
	// which templates are read, even where the folder holds more.
	root := writeRelease(t, goodProvider(t))
	targets, err := DirRepos(root, "")
	if err != nil {
		t.Fatal(err)
	}
	targets[0].Files = []string{"cluster-template-topology.yaml", "metadata.yaml"}
	rep, err := Repository(context.Background(), targets, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var flavors []string
	for _, f := range rep.Providers[0].Flavors {
		flavors = append(flavors, f.File)
	}
	if diff := cmp.Diff([]string{"cluster-template-topology.yaml"}, flavors); diff != "" {
		t.Errorf("flavors read (-want +got):\n%s", diff)
	}
	if len(rep.Providers[0].ClusterClasses) != 0 {
		t.Errorf("read clusterclass files not in the list: %+v", rep.Providers[0].ClusterClasses)
	}
}

func TestRepository_RejectsURLClusterctlRejects(t *testing.T) {
	tests := []struct {
		name, url, want string
	}{
		{"relative path", "file://dist/infrastructure-example/v0.1.0/infrastructure-components.yaml", "infrastructure-example v0.1.0: "},
		{"plain http", "http://example.com/infrastructure-example/v0.1.0/infrastructure-components.yaml", "invalid provider url"},
		{"label mismatch", "file:///tmp/infrastructure-other/v0.1.0/infrastructure-components.yaml", `must contain provider "infrastructure-example"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Repository(context.Background(), []Repo{{ID: exampleID, URL: tt.url, Version: "v0.1.0"}}, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// A variable that one flavor requires and another defaults is listed with
// the flavors that say each (issue 38: `BOOT_VOLUME_DEVICE (required;
// default "scsi0")` did not say where).
func TestReport_TemplateVariablesSayWhichFlavorsDiffer(t *testing.T) {
	str := func(s string) *string { return &s }
	rep := &Report{Providers: []*ProviderReport{{
		Label: "infrastructure-x", Version: "v1.0.0", URL: "file:///r", ComponentsFile: "infrastructure-components.yaml", TemplatesListed: true,
		Flavors: []*TemplateReport{
			{Name: "", File: "cluster-template.yaml", Variables: []Variable{{Name: "BOOT_VOLUME_DEVICE", Required: true}, {Name: "CLUSTER_NAME", Required: true}}},
			{Name: "ha", File: "cluster-template-ha.yaml", Variables: []Variable{{Name: "BOOT_VOLUME_DEVICE", Required: true}, {Name: "CLUSTER_NAME", Required: true}}},
			{Name: "md", File: "cluster-template-md.yaml", Variables: []Variable{{Name: "BOOT_VOLUME_DEVICE", Default: str("scsi0")}, {Name: "CLUSTER_NAME", Required: true}}},
		},
		ClusterClasses: []*TemplateReport{
			{Name: "quick", File: "clusterclass-quick.yaml", Variables: []Variable{{Name: "BOOT_VOLUME_DEVICE", Default: str("virtio")}}},
		},
	}}}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := `  template variables: BOOT_VOLUME_DEVICE (required: flavor (default), flavor ha; default "scsi0": flavor md; default "virtio": clusterclass quick), CLUSTER_NAME (required)` + "\n"
	if !strings.Contains(text.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, text.String())
	}
}
