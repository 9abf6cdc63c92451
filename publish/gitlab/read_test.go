package gitlab_test

import (
	"context"
	"errors"
	"testing"

	"github.com/capirepo/capirepo/publish/publishtest"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/release"
)

func TestGitLabSource_ReadsWhatThePublisherWrote(t *testing.T) {
	ctx := context.Background()
	f := newGLFixture(t)
	rel := glRelease(t, "v2.0.0", exampleFiles("1"))
	if _, err := f.publish(t, rel); err != nil {
		t.Fatal(err)
	}
	files := exampleFiles("2")
	files["cluster-template-ha.yaml"] = "ha 2"
	if _, err := f.publish(t, glRelease(t, "v2.1.0", files)); err != nil {
		t.Fatal(err)
	}
	// A copy left over from an older upload: GitLab serves the newest.
	f.srv.Seed(glProject, "infrastructure-example", "v2.1.0", "cluster-template-ha.yaml", []byte("ha 3"))
	f.srv.Seed(glProject, "infrastructure-examples", "v9.0.0", "metadata.yaml", []byte("a package of another name"))

	r, err := gitlab.New(f.options())
	if err != nil {
		t.Fatal(err)
	}
	vs, err := r.Versions(ctx, publishtest.ID(t, "infrastructure-example"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"v2.0.0", "v2.1.0"}, vs); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	got, err := publishtest.ReadBack(ctx, r, "infrastructure-example", "v2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	want := rel.Providers[0]
	if diff := cmp.Diff(want.Files, got.Files); diff != "" {
		t.Errorf("v2.0.0 files (-published +read):\n%s", diff)
	}
	got, err = publishtest.ReadBack(ctx, r, "infrastructure-example", "v2.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := got.File("cluster-template-ha.yaml"); string(f.Data) != "ha 3" {
		t.Errorf("read %q, want the newest copy", f.Data)
	}
	if _, ok := got.File(release.ChecksumsFile); ok {
		t.Errorf("checksums.txt was read")
	}
	if _, err := publishtest.ReadBack(ctx, r, "infrastructure-example", "v3.0.0"); !errors.Is(err, publish.ErrNotFound) {
		t.Errorf("missing version: err = %v, want ErrNotFound", err)
	}
}
