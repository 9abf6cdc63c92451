package pipeline_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
)

// TestMirror_CopiesTheReleasesOtherAssetsAsTheyAre: the files a release
// publishes beside what clusterctl reads (a variables file, a script), named
// in its checksums.txt, are mirrored byte for byte, and a re-run finds them
// there (issue 31). A file a GitHub release holds but does not name there
// (a binary) is not: TestMirror_IntoAFolderResolvesVersionsAsClusterctlAndVerifies.
func TestMirror_CopiesTheReleasesOtherAssetsAsTheyAre(t *testing.T) {
	ctx := context.Background()
	rel := buildtest.MinimalRelease(t, "v0.1.0")
	extras := map[string][]byte{
		"example_variables.rc": []byte("export CLUSTER_NAME=test\n"),
		"pre-kubeadminit.sh":   []byte("#!/bin/bash\nset -e\n"),
	}
	for name, data := range extras {
		if err := rel.Providers[0].Add(name, data); err != nil {
			t.Fatal(err)
		}
	}
	src := t.TempDir()
	if err := release.Write(src, rel); err != nil {
		t.Fatal(err)
	}
	vdir := filepath.Join(src, "infrastructure-test", "v0.1.0")
	cfg := filepath.Join(t.TempDir(), "clusterctl.yaml")
	if err := os.WriteFile(cfg, []byte("providers:\n- name: test\n  type: InfrastructureProvider\n  url: file://"+vdir+"/infrastructure-components.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	loc, err := targets.Parse("file://" + dst)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	o := pipeline.MirrorOptions{Requests: []string{"infrastructure-test:v0.1.0"}, Clusterctl: clusterctlConfig(t, cfg), To: loc, Log: &log}
	if _, err := pipeline.Mirror(ctx, o); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got := filepath.Join(dst, "infrastructure-test", "v0.1.0")
	for name, want := range extras {
		data, err := os.ReadFile(filepath.Join(got, name))
		if err != nil || !bytes.Equal(data, want) {
			t.Errorf("%s mirrored as %q (%v), want the release's bytes", name, data, err)
		}
	}
	names := listTree(t, got)
	if slices.Contains(names, release.ChecksumsFile) {
		t.Errorf("the mirror holds a checksums.txt of its own: %v", names)
	}
	again, err := pipeline.Mirror(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if up, skip := written(again); up != 0 || skip != len(names) {
		t.Errorf("re-run wrote %d files and found %d, want 0 and %d", up, skip, len(names))
	}
}
