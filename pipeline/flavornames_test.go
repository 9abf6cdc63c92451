package pipeline_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/release"
)

// TestBuildVerify_FlavorNamesClusterctlAccepts: flavors named after
// Kubernetes versions (Cloud Director ships cluster-template-v1.24.10-crs.yaml
// and its siblings in a flat templates/ folder) and metal-stack's
// cluster-template-pre-v1.33.yaml in config/clusterctl-templates/ build,
// pass the lint and are read back by clusterctl's client under the flavor
// names clusterctl generate cluster --flavor takes (issue 45.7). The install
// check lists flavors with the same release.FlavorOf.
func TestBuildVerify_FlavorNamesClusterctlAccepts(t *testing.T) {
	const cluster = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\n  namespace: ${NAMESPACE}\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  []string // flavors clusterctl read
	}{
		{"Cloud Director: flavors after Kubernetes versions", map[string]string{
			"templates/cluster-template.yaml":                        cluster,
			"templates/cluster-template-v1.24.10.yaml":               cluster,
			"templates/cluster-template-v1.24.10-crs.yaml":           cluster,
			"templates/cluster-template-v1.26.11-tkgv2.5.0-crs.yaml": cluster,
		}, []string{"", "v1.24.10", "v1.24.10-crs", "v1.26.11-tkgv2.5.0-crs"}},
		{"metal-stack: pre-v1.33 in config/clusterctl-templates", map[string]string{
			"capirepo.yaml": "providers:\n- name: infrastructure-test\n  templates: config/clusterctl-templates\n",
			"config/clusterctl-templates/cluster-template.yaml":           cluster,
			"config/clusterctl-templates/cluster-template-pre-v1.33.yaml": cluster,
		}, []string{"", "pre-v1.33"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := testtree.Write(t, testtree.Minimal(c.files))
			out := filepath.Join(t.TempDir(), "dist")
			if _, err := pipeline.BuildRelease(context.Background(), pipeline.BuildOptions{Dir: dir, Version: "v1.2.0", Out: out}, nil); err != nil {
				t.Fatalf("build: %v", err)
			}
			rep, err := pipeline.Verify(context.Background(), pipeline.VerifyOptions{Path: out, Variables: map[string]string{"TEST_TOKEN": "t"}})
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			var got []string
			for _, f := range rep.Read.Providers[0].Flavors {
				got = append(got, f.Name)
				if flavor, ok := release.FlavorOf(f.File); !ok || flavor != f.Name {
					t.Errorf("the install check's FlavorOf(%s) = %q, %v; want %q", f.File, flavor, ok, f.Name)
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("flavors clusterctl read (-want +got):\n%s", diff)
			}
		})
	}
}
