package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
