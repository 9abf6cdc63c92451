package templates

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/provider"
)

func TestMakeTarget(t *testing.T) {
	// cluster-api-provider-openstack: templates lists the renders, each
	// made by a (pattern) rule from its kustomization.
	const capo = `TEMPLATES_DIR ?= templates
.PHONY: templates
templates: ## Generate cluster templates
templates: $(TEMPLATES_DIR)/cluster-template.yaml \\
	$(TEMPLATES_DIR)/cluster-template-flatcar.yaml

$(TEMPLATES_DIR)/cluster-template.yaml: kustomize/v1beta1/default $(KUSTOMIZE) FORCE
	$(KUSTOMIZE) build "$<" > "$@"

$(TEMPLATES_DIR)/cluster-template-%.yaml: kustomize/v1beta1/% $(KUSTOMIZE) FORCE
	$(KUSTOMIZE) build "$<" > "$@"
`
	tests := []struct{ makefile, file, want string }{
		// cluster-api-provider-azure: the flavors target, not the e2e one.
		{"generate-e2e-templates: $(KUSTOMIZE)\n\techo\n.PHONY: generate-flavors ## Generate template flavors.\ngenerate-flavors: $(KUSTOMIZE) generate-addons\n\t./hack/gen-flavors.sh\n", "templates/cluster-template-aad.yaml", "generate-flavors"},
		{"generate-templates: $(KUSTOMIZE)\n\tkustomize build templates/x > templates/cluster-template-x.yaml\n", "templates/cluster-template-x.yaml", "generate-templates"},
		{"X := generate-flavors\nbuild:\n\tgo build\n", "templates/cluster-template-x.yaml", ""},
		{"generate-test-flavors: $(KUSTOMIZE)\n\techo\n", "templates/cluster-template-x.yaml", ""},
		{capo, "templates/cluster-template-flatcar.yaml", "templates"},
		// Not listed by templates, but a pattern rule makes it.
		{capo, "templates/cluster-template-without-lb.yaml", "templates/cluster-template-without-lb.yaml"},
		{capo, "other/cluster-template-x.yaml", ""},
	}
	for _, tt := range tests {
		if got := makeTarget([]byte(tt.makefile), tt.file); got != tt.want {
			t.Errorf("makeTarget(%q, %s) = %q, want %q", tt.makefile, tt.file, got, tt.want)
		}
	}
}

func TestCompareObjects(t *testing.T) {
	a := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata: {x: \"1\", y: \"2\"}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"
	tests := []struct {
		name, b, want string
	}{
		{"same objects, other order, field order, quoting and comments", "# rendered\napiVersion: v1\nkind: Secret\nmetadata: {name: \"s\"}\n---\nkind: ConfigMap\napiVersion: v1\nmetadata:\n  name: a\ndata:\n  y: \"2\"\n  x: '1'\n", ""},
		{"value differs", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata: {x: \"1\", y: \"3\"}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n", "ConfigMap a differently"},
		{"object missing", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata: {x: \"1\", y: \"2\"}\n", "no Secret s"},
		{"object added", a + "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: t\n", "Secret t, which the committed file lacks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := compareObjects([]byte(a), []byte(tt.b))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFlavorFile(t *testing.T) {
	tests := []struct {
		folder, file string
		class        bool
		wantErr      string
	}{
		{folder: "default", file: "cluster-template.yaml"},
		{folder: "cluster-template", file: "cluster-template.yaml"},
		{folder: "aad", file: "cluster-template-aad.yaml"},
		{folder: "cluster-template-powervs", file: "cluster-template-powervs.yaml"},
		{folder: "clusterclass-quick", file: "clusterclass-quick.yaml", class: true},
		{folder: "ubuntu-ha", file: "cluster-template-ubuntu-ha.yaml"},
		// Names clusterctl takes and every target carries (issue 45.7):
		// Cloud Director's flavors after Kubernetes versions, metal-stack's.
		{folder: "v1.24.10-crs", file: "cluster-template-v1.24.10-crs.yaml"},
		{folder: "pre-v1.33", file: "cluster-template-pre-v1.33.yaml"},
		{folder: "Ubuntu_22.04", file: "cluster-template-Ubuntu_22.04.yaml"},
		{folder: "My Flavor", wantErr: `flavor folder "My Flavor" publishes cluster-template-My Flavor.yaml: flavor name "My Flavor" holds ' ': GitHub renames a release asset whose name holds it (its REST API turns it into '.' or '-'), so clusterctl does not find cluster-template-My Flavor.yaml there, and GitLab's generic packages refuse the file name; use letters, digits, '.', '-' and '_'; rename the folder (e.g. "My-Flavor"), or leave it out with templates.exclude`},
		{folder: "v1+k3s", wantErr: `flavor name "v1+k3s" holds '+': GitHub renames a release asset whose name holds it (its REST API turns it into '.' or '-'), so clusterctl does not find cluster-template-v1+k3s.yaml there; use`},
		{folder: "1.2~rc", wantErr: `holds '~': GitHub renames`},
	}
	for _, tt := range tests {
		file, class, err := flavorFile(tt.folder)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.folder, err, tt.wantErr)
			}
			continue
		}
		if err != nil || file != tt.file || class != tt.class {
			t.Errorf("%s: got %s %v %v, want %s %v", tt.folder, file, class, err, tt.file, tt.class)
		}
	}
}

// TestGather_KustomizationLookupAndWalk pins the edges where the lookup
// and the walk of package internal/kustomization differ from the copies
// this package had.
func TestGather_KustomizationLookupAndWalk(t *testing.T) {
	tests := []struct {
		name         string
		files        map[string]string
		exclude      []string
		want         []string
		wantWarnings []string
	}{
		{
			// Was a flavor (the lookup took any path that exists); kustomize
			// finds no kustomization there either.
			name: "a folder named kustomization.yaml is not a kustomization",
			files: map[string]string{
				"/t/flavors/a/kustomization.yaml":        "resources: [c.yaml]\n",
				"/t/flavors/a/c.yaml":                    cluster,
				"/t/flavors/b/kustomization.yaml/x.yaml": "",
				"/t/flavors/b/c.yaml":                    cluster,
			},
			want: []string{"cluster-template-a.yaml"},
		},
		{
			// The walk from pub stopped at excl, which the exclusion had
			// marked, and warned that inner was not published.
			name: "a kustomization an excluded flavor uses for a published one is used",
			files: map[string]string{
				"/t/flavors/pub/kustomization.yaml":        "resources: [c.yaml, ../excl]\n",
				"/t/flavors/pub/c.yaml":                    cluster,
				"/t/flavors/excl/kustomization.yaml":       "resources: [inner]\n",
				"/t/flavors/excl/inner/kustomization.yaml": "resources: [c.yaml]\n",
				"/t/flavors/excl/inner/c.yaml":             cluster,
			},
			exclude: []string{"cluster-template-excl.yaml"},
			want:    []string{"cluster-template-pub.yaml"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := memFS(t, tt.files)
			set, err := Gather(fs, "/", provider.Templates{Dir: "t", Exclude: tt.exclude}, fakeRender(fs))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range set.Files {
				names = append(names, f.Name)
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantWarnings, set.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}
