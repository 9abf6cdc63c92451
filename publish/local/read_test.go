package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/publish/publishtest"

	"github.com/capirepo/capirepo/builder/buildtest"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/publish"
)

func TestReader_ReadsWhatThePublisherWrote(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	rel := buildtest.MinimalRelease(t, "v0.1.0")
	if _, err := (&Target{Root: root}).Publish(ctx, rel); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Target{Root: root}).Publish(ctx, buildtest.MinimalRelease(t, "v0.2.0")); err != nil {
		t.Fatal(err)
	}
	label := rel.Providers[0].Label()
	// An interrupted write's leftover is not a version.
	if err := os.MkdirAll(filepath.Join(root, label, ".v0.3.0.tmp-123"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Target{Root: root}
	vs, err := r.Versions(ctx, publishtest.ID(t, label))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(vs)
	if diff := cmp.Diff([]string{"v0.1.0", "v0.2.0"}, vs); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	got, err := publishtest.ReadBack(ctx, r, label, "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rel.Providers[0], got); diff != "" {
		t.Errorf("read back (-published +read):\n%s", diff)
	}
	if _, err := publishtest.ReadBack(ctx, r, label, "v0.9.0"); !errors.Is(err, publish.ErrNotFound) {
		t.Errorf("missing version: err = %v, want ErrNotFound", err)
	}

	// A file changed behind capirepo's back fails its checksum.
	comp := filepath.Join(root, label, "v0.1.0", got.ComponentsFile)
	if err := os.WriteFile(comp, []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := publishtest.ReadBack(ctx, r, label, "v0.1.0"); err == nil {
		t.Error("a file that no longer matches checksums.txt was read")
	}
}

func TestReader_ReadsAFolderWithoutChecksums(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "infrastructure-hand", "v1.0.0")
	files := map[string]string{
		"metadata.yaml":                  "m",
		"infrastructure-components.yaml": "c",
		"cluster-template.yaml":          "t",
		"notes.md":                       "not read",
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, d := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := publishtest.ReadBack(context.Background(), (&Target{Root: root}), "infrastructure-hand", "v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 3 || got.ComponentsFile != "infrastructure-components.yaml" {
		t.Errorf("read %d files (components %s), want 3 without notes.md", len(got.Files), got.ComponentsFile)
	}
}

// TestReader_ListsWhatClusterctlListsAndRefusesWhatCapirepoCannotRead: the
// versions are every folder clusterctl's local repository lists (0.1.5
// without the v too; not a link), so the choice of the newest sees what
// clusterctl sees; asked for v0.1.5 (as clusterctl asks for that folder's
// version) or for a link named like a version, the reader refuses it by
// name, where clusterctl fails or follows the link; v0.1.0 reads as ever.
func TestReader_ListsWhatClusterctlListsAndRefusesWhatCapirepoCannotRead(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	if _, err := (&Target{Root: root}).Publish(ctx, buildtest.MinimalRelease(t, "v0.1.0")); err != nil {
		t.Fatal(err)
	}
	label := "infrastructure-test"
	if err := os.CopyFS(filepath.Join(root, label, "0.1.5"), os.DirFS(filepath.Join(root, label, "v0.1.0"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, label, "v0.1.0"), filepath.Join(root, label, "v0.2.0")); err != nil {
		t.Fatal(err)
	}
	r := &Target{Root: root}
	vs, err := r.Versions(ctx, publishtest.ID(t, label))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(vs)
	if diff := cmp.Diff([]string{"0.1.5", "v0.1.0"}, vs); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	for v, want := range map[string]string{
		"v0.1.5": filepath.Join(root, label, "0.1.5") + ": clusterctl reads this folder as version 0.1.5 of infrastructure-test",
		"v0.2.0": filepath.Join(root, label, "v0.2.0") + " is a symbolic link",
	} {
		_, err := r.List(ctx, publish.Ref{ID: publishtest.ID(t, label), Version: v})
		if err == nil || errors.Is(err, publish.ErrNotFound) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("List %s: %v, want the refusal %q", v, err, want)
		}
	}
	if _, err := publishtest.ReadBack(ctx, r, label, "v0.1.0"); err != nil {
		t.Errorf("v0.1.0: %v", err)
	}
}
