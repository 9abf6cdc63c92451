package builder

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
)

// TestCompleteMetadata_RealTreeWithoutKind: CAPA v2.9.0's metadata.yaml has
// apiVersion but no kind, which clusterctl v1.11.0 refused on every init and
// upgrade plan (cluster-api #12712). The release's copy gains kind: Metadata
// after the comments, every other line kept in order, and passes what
// clusterctl checks.
func TestCompleteMetadata_RealTreeWithoutKind(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testtree.ModuleDir(t, "sigs.k8s.io/cluster-api-provider-aws/v2@v2.9.0"), "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, problems := provider.CheckMetadata(data); !slices.ContainsFunc(problems, func(p provider.MetadataProblem) bool { return p.Kind == provider.MetadataNoKind }) {
		t.Fatalf("the fixture has a kind: %v", problems)
	}
	out, added := completeMetadata(data)
	if diff := cmp.Diff([]string{"kind"}, added); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
	if _, problems := provider.CheckMetadata(out); len(problems) > 0 {
		t.Errorf("problems left: %v\n%s", problems, out)
	}
	in, got := strings.Split(string(data), "\n"), strings.Split(string(out), "\n")
	i := slices.Index(got, "kind: Metadata")
	if i < 0 || !slices.Equal(got[:i], in[:i]) || !slices.Equal(got[i+1:], in[i:]) {
		t.Errorf("not the file with one line added:\n%s", out)
	}
	if !strings.HasPrefix(got[0], "#") || i > 0 && strings.HasPrefix(got[i-1], "#") {
		t.Errorf("kind is not after the comments and before the first key:\n%s", out)
	}
}

func TestCompleteMetadata(t *testing.T) {
	const series = "releaseSeries:\n- {major: 1, minor: 2, contract: v1beta2}\n"
	cases := []struct {
		name, in, want string
		added          []string
	}{
		{"neither field, after a document marker", "---\n" + series,
			"---\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\n" + series, []string{"apiVersion", "kind"}},
		{"both fields", "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\n" + series, "", nil},
		{"a wrong kind is the lint's (CAPI102)", "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Meta\n" + series, "", nil},
		{"kind after the series", "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\n" + series + "kind: Metadata\n", "", nil},
		{"a flow mapping is left alone", "{releaseSeries: [{major: 1, minor: 2, contract: v1beta2}]}\n", "", nil},
		{"not YAML", "releaseSeries: [\n", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, added := completeMetadata([]byte(c.in))
			want := c.want
			if want == "" {
				want = c.in
			}
			if diff := cmp.Diff(want, string(out)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.added, added); diff != "" {
				t.Errorf("added (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuild_WritesMetadataKind: a tree whose metadata.yaml lacks kind builds
// a release whose metadata.yaml has it, says so, and passes the lint.
func TestBuild_WritesMetadataKind(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"metadata.yaml": "# series\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries: [{major: 1, minor: 2, contract: v1beta2}]\n",
	}))
	res, err := build(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := res.Release.Providers[0].File(provider.MetadataFile)
	if want := "# series\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries: [{major: 1, minor: 2, contract: v1beta2}]\n"; string(f.Data) != want {
		t.Errorf("metadata.yaml:\n%s\nwant:\n%s", f.Data, want)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "metadata.yaml has no kind") }) {
		t.Errorf("no warning: %q", res.Warnings)
	}
	if rep := lintBuilt(res, contract.Options{}); slices.ContainsFunc(rep.Findings, func(f contract.Finding) bool { return f.Rule == contract.RuleMetadataInvalid }) {
		t.Errorf("CAPI102 on the built release: %v", rep.Findings)
	}
}
