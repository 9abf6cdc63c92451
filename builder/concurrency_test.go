package builder

import (
	"bytes"
	"context"
	"path/filepath"
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
	if _, err := Build(context.Background(), Options{Dir: dir, Config: loadConfig(t, dir), Version: "v1.2.3", Providers: []string{"infrastructure-nope"}}); err == nil {
		t.Error("unknown provider filter accepted")
	}
}

// TestBuild_FlavorsRenderConcurrently: flavors render at once, and alongside
// the components; each equals its render alone (run under -race by make test).
func TestBuild_FlavorsRenderConcurrently(t *testing.T) {
	files := testtree.Minimal(map[string]string{
		"templates/flavors/base/kustomization.yaml": "resources: [c.yaml]\n",
		"templates/flavors/base/c.yaml":             "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\n",
	})
	flavors := []string{"a", "b", "c", "d", "e", "f"}
	for _, f := range flavors {
		files["templates/flavors/"+f+"/kustomization.yaml"] = "resources: [../base]\npatches:\n- patch: |\n    - op: add\n      path: /metadata/labels\n      value: {flavor: " + f + "}\n  target: {kind: Cluster}\n"
	}
	dir := testtree.Write(t, files)
	res := mustBuild(t, dir, Options{})
	fs, err := newTreeFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Release.Providers[0]
	for _, f := range flavors {
		got, ok := p.File("cluster-template-" + f + ".yaml")
		if !ok {
			t.Fatalf("no flavor %s", f)
		}
		alone, err := renderPlain(fs, filepath.Join(dir, "templates/flavors", f), false)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, alone) || !strings.Contains(string(alone), "flavor: "+f) {
			t.Errorf("flavor %s differs from its render alone:\n%s", f, got.Data)
		}
	}
}
