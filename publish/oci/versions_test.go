package oci

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/crane"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/publishtest"
	"github.com/capirepo/capirepo/versions"
)

// TestReadOCI_TagsWithoutTheVAreListedAsClusterctlListsThem: a tag
// clusterctl would take as a version (0.2.0, no v) is listed, so the choice
// of the newest sees it as clusterctl sees such a tag; it asks for v0.2.0,
// which the registry does not hold, passes over it, and takes v0.1.0.
// Tags that are no version are not listed.
func TestReadOCI_TagsWithoutTheVAreListedAsClusterctlListsThem(t *testing.T) {
	ctx := context.Background()
	reg := newTestRegistry(t)
	p := newPublisher(t, reg, nil)
	if _, err := p.Publish(ctx, exampleRelease(t)); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"0.2.0", "latest", "v0.3"} {
		if err := crane.Tag(reg.host+"/capi/infrastructure-example:v0.1.0", tag, crane.Insecure); err != nil {
			t.Fatal(err)
		}
	}
	id := publishtest.ID(t, "infrastructure-example")
	vs, err := p.Versions(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(vs)
	if diff := cmp.Diff([]string{"0.2.0", "v0.1.0"}, vs); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	var skipped []string
	repo := &publish.Repository{Source: p, IDs: []provider.ID{id}, Skipped: func(tag string, _ error) { skipped = append(skipped, tag) }}
	latest, err := versions.Latest(ctx, repo)
	if latest != "v0.1.0" || err != nil || !cmp.Equal(skipped, []string{"v0.2.0"}) {
		t.Errorf("latest %q, %v, passed over %v; want v0.1.0, having passed over v0.2.0", latest, err, skipped)
	}
}
