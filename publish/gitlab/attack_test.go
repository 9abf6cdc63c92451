package gitlab_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/publish/publishtest"
)

// TestGitLabSource_AFileThatStreamsWithoutEndIsCutOffAtItsListedSize: a
// package file download that never ends stops after the size GitLab lists
// for the file, naming it, without a retry.
func TestGitLabSource_AFileThatStreamsWithoutEndIsCutOffAtItsListedSize(t *testing.T) {
	f := newGLFixture(t)
	files := exampleFiles("1")
	if _, err := f.publish(t, glRelease(t, "v2.0.0", files)); err != nil {
		t.Fatal(err)
	}
	r, err := gitlab.New(f.options())
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Fail(fakegl.Fault{Route: fakegl.RouteDownload, Endless: true})
	start := time.Now()
	_, err = publishtest.ReadBack(context.Background(), r, "infrastructure-example", "v2.0.0")
	var big *publish.TooLargeError
	want := "cluster-template-ha.yaml: the server sends more than the "
	if err == nil || !errors.As(err, &big) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v\nwant %q", err, want)
	}
	if big.Limit != int64(len(files["cluster-template-ha.yaml"])) {
		t.Errorf("cut off at %d bytes, the file is listed at %d", big.Limit, len(files["cluster-template-ha.yaml"]))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}
