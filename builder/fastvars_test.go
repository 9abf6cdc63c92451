package builder

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
)

// TestVariableMap_SameAsClusterctl: variableMap agrees with clusterctl's
// GetVariableMap on every asset of
// the example, cluster-api and (CAPIREPO_TEST_LARGE=1) the large provider.
func TestVariableMap_SameAsClusterctl(t *testing.T) {
	check := func(name string, data []byte) {
		t.Helper()
		want, wantErr := yamlprocessor.NewSimpleProcessor().GetVariableMap(data)
		got, gotErr := variableMap(data)
		if (wantErr != nil) != (gotErr != nil) {
			t.Errorf("%s: clusterctl error %v, variableMap error %v", name, wantErr, gotErr)
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: (-clusterctl +variableMap):\n%s", name, diff)
		}
	}
	for name, dir := range withLarge(map[string]string{"example": exampleTree, "cluster-api": clusterAPIDir}) {
		tree := struct{ dir, version string }{dir, "v0.1.0"}
		if name == "cluster-api" {
			tree.version = "v1.14.2"
		}
		if _, err := os.Stat(tree.dir); err != nil {
			continue
		}
		res, err := Build(context.Background(), Options{Dir: tree.dir, Config: loadConfig(t, tree.dir), Version: tree.version})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range res.Release.Providers {
			for _, f := range p.Assets() {
				check(name+"/"+f.Name, f.Data)
			}
		}
	}
}
