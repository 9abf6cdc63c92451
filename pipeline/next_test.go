package pipeline_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/pipeline"
)

// TestRun_SaysWhatToDoNext: a run that published writes the clusterctl
// config to ConfigOut and gives the clusterctl init line that reads it; a
// dry run says what a real run would publish where.
func TestRun_SaysWhatToDoNext(t *testing.T) {
	repo := "file://" + filepath.Join(t.TempDir(), "repo")
	cfg := filepath.Join(t.TempDir(), "clusterctl.yaml")
	var log bytes.Buffer
	o := minimalRun(t, buildtest.MinimalTree(t, 2), &log, repo)
	o.ConfigOut = cfg
	sum, err := pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	data, err := os.ReadFile(cfg)
	if err != nil || !strings.Contains(string(data), "providers:") || !strings.Contains(string(data), "infrastructure-components.yaml") {
		t.Fatalf("config %s: %v\n%s", cfg, err, data)
	}
	want := []string{"clusterctl config for " + repo + " written to " + cfg, "try it: clusterctl init --infrastructure test:v0.2.0 --config " + cfg}
	if diff := cmp.Diff(want, sum.Next); diff != "" {
		t.Errorf("next (-want +got):\n%s", diff)
	}

	o = minimalRun(t, buildtest.MinimalTree(t, 2), &log, repo)
	o.DryRun = true
	sum, err = pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if len(sum.Next) != 1 || !strings.HasPrefix(sum.Next[0], "a real run would publish ") || !strings.HasSuffix(sum.Next[0], " of v0.2.0 to "+repo) {
		t.Errorf("next %q", sum.Next)
	}
}
