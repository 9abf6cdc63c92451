package diff_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/capirepo/capirepo/diff"
)

// TestStorageBlocks: a release whose storage version the new one dropped is
// blocked by that CRD alone, and Straight names the oldest release that can
// upgrade instead.
func TestStorageBlocks(t *testing.T) {
	old, new := realPair(t)
	only(old, core)
	only(new, core)
	if got := diff.StorageBlocks(old, new); len(got) > 0 {
		t.Fatalf("v1.13.0 to v1.14.2 is blocked: %v", got)
	}
	// An old release that stored v1beta1; the new one drops v1beta1.
	editCRD(t, old, md, func(c *apiextensionsv1.CustomResourceDefinition) {
		version(c, "v1beta1").Storage, version(c, "v1beta2").Storage = true, false
	})
	editCRD(t, new, md, func(c *apiextensionsv1.CustomResourceDefinition) {
		c.Spec.Versions = slices.DeleteFunc(c.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == "v1beta1" })
	})
	got := diff.StorageBlocks(old, new)
	want := []diff.Block{{Provider: core, CRD: md, Version: "v1beta1"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("blocks (-want +got):\n%s", d)
	}
	fs := diff.Straight(new, "v1.10.3", got, "v1.11.0")
	if len(fs) != 1 || fs[0].Rule != "CAPI703" || fs[0].Severity != I || fs[0].Object != crd(md) || fs[0].File != coreComps {
		t.Fatalf("findings %+v", fs)
	}
	for _, w := range []string{"up to v1.10.3", "as v1beta1", "the oldest release that can is v1.11.0"} {
		if !strings.Contains(fs[0].Message, w) {
			t.Errorf("message lacks %q: %s", w, fs[0].Message)
		}
	}
}
