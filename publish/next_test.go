package publish_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/publish"
)

// TestNextSteps_WritesTheConfigOnlyWhenAskedAndNamesIt: without a file the
// lines say to save the printed config; with one, the config is written
// there (absolute), the summary names it and the init line reads it.
func TestNextSteps_WritesTheConfigOnlyWhenAskedAndNamesIt(t *testing.T) {
	sum := func() *publish.Summary {
		return &publish.Summary{URL: "file:///repo", Version: "v1.2.0", Providers: []publish.ProviderURL{
			{Name: "example", Type: "InfrastructureProvider", URL: "file:///repo/infrastructure-example/v1.2.0/infrastructure-components.yaml"},
			{Name: "kubeadm", Type: "BootstrapProvider", URL: "file:///repo/bootstrap-kubeadm/v1.2.0/bootstrap-components.yaml"},
		}}
	}
	s := sum()
	next, err := publish.NextSteps(context.Background(), s, publish.Reach{}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"save the clusterctl config printed for file:///repo as FILE (or pass --config-out FILE)",
		"try it: clusterctl init --bootstrap kubeadm:v1.2.0 --infrastructure example:v1.2.0 --config FILE"}
	if diff := cmp.Diff(want, next); diff != "" || s.ConfigFile != "" {
		t.Errorf("next (-want +got):\n%s\nconfig file %q", diff, s.ConfigFile)
	}

	dir := t.TempDir()
	t.Chdir(dir)
	s = sum()
	if next, err = publish.NextSteps(context.Background(), s, publish.Reach{}, "clusterctl.yaml"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "clusterctl.yaml")
	want = []string{"clusterctl config for file:///repo written to " + file,
		"try it: clusterctl init --bootstrap kubeadm:v1.2.0 --infrastructure example:v1.2.0 --config " + file}
	if diff := cmp.Diff(want, next); diff != "" || s.ConfigFile != file {
		t.Errorf("next (-want +got):\n%s\nconfig file %q", diff, s.ConfigFile)
	}
	data, err := os.ReadFile(file)
	if err != nil || string(data) != (publish.ClusterctlConfig{Providers: s.Providers}).YAML() {
		t.Errorf("written config: %v\n%s", err, data)
	}

	s = sum()
	s.Draft = true
	if next, err = publish.NextSteps(context.Background(), s, publish.Reach{}, ""); err != nil || !strings.HasPrefix(next[1], "once the draft is published (capirepo publish github without --draft), try it: clusterctl init ") {
		t.Errorf("a draft: %v %q", err, next)
	}

	if _, err := publish.NextSteps(context.Background(), sum(), publish.Reach{}, filepath.Join(dir, "missing", "c.yaml")); err == nil || !strings.Contains(err.Error(), "--config-out") {
		t.Errorf("a file in a missing folder: %v", err)
	}
}

// TestWriteConfigFile_LeavesAnUnchangedFileAlone: the same config again
// does not touch the file (a watching dev loop); another config replaces it.
func TestWriteConfigFile_LeavesAnUnchangedFileAlone(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	cfg := publish.ClusterctlConfig{Providers: []publish.ProviderURL{{Name: "a", Type: "InfrastructureProvider", URL: "file:///a"}}}
	if _, written, err := publish.WriteConfigFile(file, cfg); err != nil || !written {
		t.Fatalf("first write: %v, written %v", err, written)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
	if _, written, err := publish.WriteConfigFile(file, cfg); err != nil || written {
		t.Errorf("same config: %v, written %v", err, written)
	}
	if fi, err := os.Stat(file); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("same config touched the file: %v", err)
	}
	cfg.Providers[0].URL = "file:///b"
	if _, written, err := publish.WriteConfigFile(file, cfg); err != nil || !written {
		t.Errorf("changed config: %v, written %v", err, written)
	}
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), "file:///b") {
		t.Errorf("not rewritten:\n%s", data)
	}
}

// TestSummary_WriteTextSaysAddedForFilesNewToAVersion: files new to a
// version that already held files are "added" and named; a new version's
// are "written"/"uploaded"; replaced files are named.
func TestSummary_WriteTextSaysAddedForFilesNewToAVersion(t *testing.T) {
	for _, tc := range []struct {
		sum  publish.Summary
		want []string
		not  []string
	}{
		{publish.Summary{Kind: "local", Uploaded: []string{"a", "b"}}, []string{"assets: 2 written ("}, []string{"added", "replaced:"}},
		{publish.Summary{Kind: "github", Uploaded: []string{"a"}}, []string{"assets: 1 uploaded ("}, []string{"added"}},
		{publish.Summary{Kind: "local", Uploaded: []string{"x.sigstore.json"}, Skipped: []string{"a"}},
			[]string{"assets: 1 added (", "1 skipped (unchanged), 0 replaced\n", "added: x.sigstore.json\n"}, []string{"replaced:"}},
		{publish.Summary{Kind: "github", Uploaded: []string{"n"}, Replaced: []string{"p"}},
			[]string{"assets: 1 added (", "added: n\n", "replaced: p\n"}, nil},
		{publish.Summary{Kind: "oci", Uploaded: []string{}, Skipped: []string{"a"}}, []string{"assets: nothing to do: all 1 already there"}, []string{"added", "0 uploaded"}},
	} {
		var b strings.Builder
		if err := tc.sum.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%+v: lacks %q:\n%s", tc.sum, w, b.String())
			}
		}
		for _, n := range tc.not {
			if strings.Contains(b.String(), n) {
				t.Errorf("%+v: has %q:\n%s", tc.sum, n, b.String())
			}
		}
	}
}
