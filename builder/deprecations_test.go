package builder

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/types"

	"github.com/capirepo/capirepo/internal/testtree"
)

// deprecatedTree is a provider whose kustomizations use deprecated fields.
func deprecatedTree() map[string]string { return testtree.DeprecatedKustomize() }

// notice is kustomize's own notice for one field, taken from kustomize.
func notice(t *testing.T, field string) string {
	t.Helper()
	var k types.Kustomization
	if err := k.Unmarshal([]byte(field + ": []\n")); err != nil {
		if err := k.Unmarshal([]byte(field + ": {}\n")); err != nil { // a map
			t.Fatal(err)
		}
	}
	ns := *k.CheckDeprecatedFields()
	if len(ns) != 1 {
		t.Fatalf("kustomize gives %d notices for %s", len(ns), field)
	}
	return ns[0]
}

// TestBuild_KustomizeDeprecationsOncePerNotice: each deprecated field gives
// one warning, in kustomize's words, naming the files that use it and how
// many renders met it, however often kustomize loaded those files.
func TestBuild_KustomizeDeprecationsOncePerNotice(t *testing.T) {
	dir := testtree.Write(t, deprecatedTree())
	// KeepImage: the components render once, as they are.
	res := mustBuild(t, dir, Options{KeepImage: true})
	var got []string
	for _, w := range res.Warnings {
		if strings.HasPrefix(w, "kustomize: ") {
			got = append(got, w)
		}
	}
	text := func(field string) string { return strings.TrimPrefix(notice(t, field), "# Warning: ") }
	want := []string{
		"kustomize: " + text("bases") + " (templates/flavors/ha/kustomization.yaml; in 1 render)",
		"kustomize: " + text("commonLabels") + " (templates/flavors/base/kustomization.yaml; in 2 renders)",
		"kustomize: " + text("patchesStrategicMerge") + " (config/default/kustomization.yaml; in 1 render)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kustomize warnings (-want +got):\n%s\nall warnings: %q", diff, res.Warnings)
	}
	if names := templateNames(res.Release.Providers[0]); len(names) != 2 {
		t.Errorf("templates %v, want the default and ha flavors", names)
	}
}

// TestKustomizeNotices_EveryDeprecatedField: the notices the build drops
// from stderr are all kustomize can print, each as kustomize prints it.
func TestKustomizeNotices_EveryDeprecatedField(t *testing.T) {
	for _, f := range []string{"bases", "commonLabels", "imageTags", "patchesJson6902", "patchesStrategicMerge", "vars"} {
		n := notice(t, f)
		found := false
		for _, k := range kustomizeNotices {
			found = found || k == n
		}
		if !found {
			t.Errorf("%s: %q is not among %q", f, n, kustomizeNotices)
		}
	}
}
