package builder

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/internal/testtree"
)

// TestBuild_MonorepoProvidersRenderConcurrently builds four providers of one
// tree, which render at the same time (run under -race by make test), and
// checks each is identical to building it alone.
func TestBuild_MonorepoProvidersRenderConcurrently(t *testing.T) {
	base := testtree.Minimal(nil)
	files := map[string]string{"metadata.yaml": base["metadata.yaml"]}
	var cfg strings.Builder
	cfg.WriteString("providers:\n")
	for _, label := range []string{"cluster-api", "bootstrap-one", "control-plane-two", "infrastructure-three"} {
		for name, content := range base {
			if !strings.HasPrefix(name, "config/") {
				continue
			}
			content = strings.ReplaceAll(content, "infrastructure-test", label)
			// A patch makes kustomize consult its OpenAPI schema during the render.
			if name == "config/default/kustomization.yaml" {
				content += "patches:\n- path: patch.yaml\n"
				files[label+"/config/default/patch.yaml"] = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller-manager\n  namespace: system\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        args: [\"--leader-elect\"]\n"
			}
			files[label+"/"+name] = content
		}
		cfg.WriteString("- name: " + label + "\n  kustomize: " + label + "/config/default\n")
	}
	files["capirepo.yaml"] = cfg.String()
	dir := testtree.Write(t, files)
	all := mustBuild(t, dir, Options{})
	if len(all.Release.Providers) != 4 {
		t.Fatalf("providers = %d", len(all.Release.Providers))
	}
	for _, p := range all.Release.Providers {
		alone := mustBuild(t, dir, Options{Providers: []string{p.Label()}})
		if !bytes.Equal(alone.Release.Providers[0].Components().Data, p.Components().Data) {
			t.Errorf("%s renders differently alone and concurrently", p.Label())
		}
		if !strings.Contains(string(p.Components().Data), "--leader-elect") {
			t.Errorf("%s: patch not applied", p.Label())
		}
	}
	if _, err := Build(context.Background(), Options{Dir: dir, Version: "v1.2.3", Providers: []string{"infrastructure-nope"}}); err == nil {
		t.Error("unknown provider filter accepted")
	}
}
