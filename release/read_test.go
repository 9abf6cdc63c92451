package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRead_TreeNoteSaysTheCallersVerbAndHowToChoose(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"infrastructure-foo/v0.1.0/metadata.yaml":                  "old",
		"infrastructure-foo/v0.1.0/infrastructure-components.yaml": "old",
		"infrastructure-foo/v0.2.0/metadata.yaml":                  "new",
		"infrastructure-foo/v0.2.0/infrastructure-components.yaml": "new",
		"infrastructure-foo/v0.3.0/README.md":                      "no assets: not a version",
	})
	dir := filepath.Join(root, "infrastructure-foo")
	for _, tc := range []struct {
		name string
		o    ReadOptions
		want string
	}{
		{"defaults", ReadOptions{}, "infrastructure-foo: reading v0.2.0, the newest version in " + dir + " (choose one with --version)"},
		{"lint", ReadOptions{Doing: "linting"}, "infrastructure-foo: linting v0.2.0, the newest version in " + dir + " (choose one with --version)"},
		{"diff side", ReadOptions{Choose: root + "@VERSION"}, "infrastructure-foo: reading v0.2.0, the newest version in " + dir + " (choose one with " + root + "@VERSION)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rel, notes, err := Read(root, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tc.want}, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			if rel.Version != "v0.2.0" || len(rel.Providers) != 1 || string(rel.Providers[0].Components().Data) != "new" {
				t.Errorf("read %s with %d providers, want v0.2.0's one provider", rel.Version, len(rel.Providers))
			}
		})
	}

	rel, notes, err := Read(root, ReadOptions{Version: "v0.1.0", Doing: "linting"})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 || rel.Version != "v0.1.0" || string(rel.Providers[0].Components().Data) != "old" {
		t.Errorf("--version v0.1.0: got %s, notes %q; want v0.1.0's files and no note", rel.Version, notes)
	}
}

// TestRead_TreeTakesTheVersionClusterctlInstallsForLatest: lint DIR and
// diff DIR without a version read the release clusterctl installs for
// latest, a release before newer pre-releases, and say so; a tree of
// pre-releases alone gives its newest.
func TestRead_TreeTakesTheVersionClusterctlInstallsForLatest(t *testing.T) {
	for _, tc := range []struct {
		versions   []string
		want, said string
	}{
		{[]string{"v0.1.0", "v0.2.0", "v0.3.0-rc.1", "v0.3.0-rc.2"}, "v0.2.0", "the newest release (v0.3.0-rc.2 is a pre-release, which clusterctl installs only when asked for it)"},
		{[]string{"v0.2.0-rc.1", "v0.2.0-rc.2"}, "v0.2.0-rc.2", "the newest version"},
		{[]string{"v0.9.0", "v0.10.0"}, "v0.10.0", "the newest version"},
	} {
		root := t.TempDir()
		files := map[string]string{}
		for _, v := range tc.versions {
			files["infrastructure-foo/"+v+"/metadata.yaml"] = v
			files["infrastructure-foo/"+v+"/infrastructure-components.yaml"] = v
		}
		writeFiles(t, root, files)
		rel, notes, err := Read(root, ReadOptions{Doing: "linting"})
		if err != nil {
			t.Fatal(err)
		}
		want := "infrastructure-foo: linting " + tc.want + ", " + tc.said + " in " + filepath.Join(root, "infrastructure-foo") + " (choose one with --version)"
		if diff := cmp.Diff([]string{want}, notes); diff != "" {
			t.Errorf("%v: notes (-want +got):\n%s", tc.versions, diff)
		}
		if rel.Version != tc.want || string(rel.Providers[0].Components().Data) != tc.want {
			t.Errorf("%v: read %s, want %s", tc.versions, rel.Version, tc.want)
		}
	}
}

func TestRead_FlatFolderTakesLabelAndVersionFromTheObjects(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	writeFiles(t, dir, map[string]string{
		"infrastructure-components.yaml": "kind: Deployment\nmetadata:\n  labels:\n    cluster.x-k8s.io/provider: infrastructure-foo\nspec:\n  template:\n    spec:\n      containers:\n      - image: example.com/foo:v0.4.1\n",
		"metadata.yaml":                  "md",
		"checksums.txt":                  "ignored",
	})
	rel, notes, err := Read(dir, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"provider infrastructure-foo, from the objects' cluster.x-k8s.io/provider label",
		"version v0.4.1, from the manager image's tag (set it with --version)",
	}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	p := rel.Providers[0]
	if rel.Version != "v0.4.1" || p.Label() != "infrastructure-foo" || p.ComponentsFile != "infrastructure-components.yaml" || len(p.Files) != 2 {
		t.Errorf("read %s %s with components %q and %d files; want infrastructure-foo v0.4.1, its components file, 2 files", p.Label(), rel.Version, p.ComponentsFile, len(p.Files))
	}
}

func TestRead_FolderWithoutAssetsNamesTheLayouts(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"README.md": "nothing"})
	_, _, err := Read(root, ReadOptions{Version: "v1.0.0"})
	if err == nil || !strings.Contains(err.Error(), "holds no release assets of version v1.0.0") || !strings.Contains(err.Error(), "<label>/<version>/") {
		t.Fatalf("got %v, want an error naming the version and the layouts looked for", err)
	}
}
