package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"

	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/versions"
)

// versionTree writes a clusterctl local repository of infrastructure-example
// holding the example's release files at each version folder name, each
// with a metadata.yaml that lists the series of its major up to its own
// (as a release's does), and returns its root.
func versionTree(t *testing.T, names ...string) string {
	t.Helper()
	root := t.TempDir()
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		dir := filepath.Join(root, "infrastructure-example", n)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var major, minor int
		if _, err := fmt.Sscanf(strings.TrimPrefix(n, "v"), "%d.%d", &major, &minor); err != nil {
			t.Fatal(err)
		}
		var series []string
		for m := 0; m <= minor; m++ {
			series = append(series, fmt.Sprintf("%d.%d=v1beta2", major, m))
		}
		for _, e := range entries {
			if e.Name() == "checksums.txt" {
				continue
			}
			data, err := os.ReadFile(filepath.Join(goldenDir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if e.Name() == "metadata.yaml" {
				data = metadataFor(series...)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// clusterctlLatest is what clusterctl's own client installs for latest from
// the tree: its local repository resolves latest when it is opened.
func clusterctlLatest(t *testing.T, root string) string {
	t.Helper()
	ctx := context.Background()
	r := config.NewMemoryReader()
	if _, err := r.AddProvider("example", "InfrastructureProvider", "file://"+root+"/infrastructure-example/latest/infrastructure-components.yaml"); err != nil {
		t.Fatal(err)
	}
	if err := r.Init(ctx, ""); err != nil {
		t.Fatal(err)
	}
	r.Set("overridesFolder", t.TempDir())
	cfg, err := config.New(ctx, "", config.InjectReader(r))
	if err != nil {
		t.Fatal(err)
	}
	p, err := cfg.Providers().Get("example", "InfrastructureProvider")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := repository.New(ctx, p, cfg)
	if err != nil {
		return "error"
	}
	return repo.DefaultVersion()
}

// TestNewestAndPrevious_AsClusterctlsOwnClient: on a repository tree with
// pre-releases and a folder without the v, verify DIR, mirror (latest-1)
// and the upgrade check (diff against the tree) pick the newest and the
// release before it as clusterctl's own client does: its latest on the
// tree, and its latest on the tree without the versions from the newest
// up. Where clusterctl's choice reaches the folder without the v, it fails
// (it asks for v0.1.5), and capirepo refuses it by name.
func TestNewestAndPrevious_AsClusterctlsOwnClient(t *testing.T) {
	for _, tc := range []struct {
		name             string
		folders          []string
		newest, previous string // clusterctl's answers
		refusal          string // the folder capirepo refuses, by name
	}{
		{
			name:    "a release over newer pre-releases, a folder without the v beside",
			folders: []string{"v0.1.0", "v0.2.0", "v0.3.0-rc.1", "v0.3.0-rc.2", "0.0.9"},
			newest:  "v0.2.0", previous: "v0.1.0", refusal: "0.0.9",
		},
		{
			name:    "the folder without the v is the release before",
			folders: []string{"v0.1.0", "v0.2.0", "v0.3.0-rc.1", "0.1.5"},
			newest:  "v0.2.0", previous: "error", refusal: "0.1.5",
		},
		{
			name:    "the folder without the v is the newest",
			folders: []string{"v0.1.0", "v0.2.0", "0.2.1"},
			newest:  "error", refusal: "0.2.1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			tree := versionTree(t, tc.folders...)
			if got := clusterctlLatest(t, tree); got != tc.newest {
				t.Fatalf("clusterctl's latest is %s; the case says %s", got, tc.newest)
			}
			if tc.previous != "" {
				var below []string
				for _, f := range tc.folders {
					if versions.Compare(f, tc.newest) < 0 {
						below = append(below, f)
					}
				}
				if got := clusterctlLatest(t, versionTree(t, below...)); got != tc.previous {
					t.Fatalf("clusterctl's latest below %s is %s; the case says %s", tc.newest, got, tc.previous)
				}
			}
			refused := filepath.Join(tree, "infrastructure-example", tc.refusal) + ": clusterctl reads this folder as version " + tc.refusal

			// verify DIR: every version read back; clusterctl's latest is
			// said; the folder without the v is refused.
			var log bytes.Buffer
			_, err := pipeline.Verify(ctx, pipeline.VerifyOptions{Path: tree, Log: &log})
			if err == nil || !strings.Contains(err.Error(), refused) {
				t.Errorf("verify: %v, want the refusal %q", err, refused)
			}
			want := "(clusterctl's latest: " + tc.newest + ")"
			if tc.newest == "error" {
				want = "(clusterctl's latest: none, it fails: " + refused
			}
			if !strings.Contains(log.String(), want) {
				t.Errorf("verify says no %q:\n%s", want, log.String())
			}

			// mirror latest-1 from the tree.
			cfg := filepath.Join(t.TempDir(), "clusterctl.yaml")
			body := "providers:\n- name: example\n  type: InfrastructureProvider\n  url: file://" + tree + "/infrastructure-example/latest/infrastructure-components.yaml\n"
			if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			to, err := targets.Parse("file://" + t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			log.Reset()
			sum, err := pipeline.Mirror(ctx, pipeline.MirrorOptions{Requests: []string{"infrastructure-example:latest-1"}, Clusterctl: clusterctlConfig(t, cfg), To: to,
				Sources: targets.Options{HTTPClient: &http.Client{}, Retry: &publish.Retry{Attempts: 1}}, Log: &log})
			if tc.newest == "error" || tc.previous == "error" {
				if err == nil || !strings.Contains(err.Error(), refused) {
					t.Errorf("mirror: %v, want the refusal %q\n%s", err, refused, log.String())
				}
			} else {
				if err != nil {
					t.Fatalf("mirror: %v\n%s", err, log.String())
				}
				if diff := cmp.Diff(map[string][]string{"infrastructure-example": {tc.previous, tc.newest}}, versionsOf(sum)); diff != "" {
					t.Errorf("mirror latest-1 (-want +got):\n%s", diff)
				}
				if want := "/infrastructure-example/" + tc.newest + "/"; !strings.Contains(sum.Config, want) {
					t.Errorf("the site config names not %s:\n%s", tc.newest, sum.Config)
				}
			}

			// The upgrade check: the release before the newest, at the tree.
			if tc.newest == "error" {
				return
			}
			oldSide, err := pipeline.ParseSide("file://"+tree, "")
			if err != nil {
				t.Fatal(err)
			}
			newSide, err := pipeline.ParseSide(filepath.Join(tree, "infrastructure-example", tc.newest), "")
			if err != nil {
				t.Fatal(err)
			}
			log.Reset()
			dsum, err := pipeline.Diff(ctx, pipeline.DiffOptions{Old: []pipeline.Side{oldSide}, New: newSide, Log: &log})
			if tc.previous == "error" {
				if err == nil || !strings.Contains(err.Error(), refused) {
					t.Errorf("diff: %v, want the refusal %q", err, refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("diff: %v\n%s", err, log.String())
			}
			if len(dsum.Old) != 1 || dsum.Old[0].Version != tc.previous {
				t.Errorf("diff compared with %+v, want %s\n%s", dsum.Old, tc.previous, log.String())
			}
		})
	}
}
