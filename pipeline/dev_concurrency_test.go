package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/capirepo/capirepo/builder/buildtest"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/publish/local"
	"github.com/capirepo/capirepo/release"
)

// TestConcurrentPublishAndDevIntoOneRoot runs 12 writers into one root at
// once (under -race in make test): four publish the same v0.1.0, four a
// different v0.1.0, four run dev (v0.1.5, replaced in place). The first
// v0.1.0 to take the lock wins: its four succeed, the other four are refused
// as a changed release; every dev run succeeds; every version folder is
// complete and equal to its input, and no staging folder is left.
func TestConcurrentPublishAndDevIntoOneRoot(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	a := buildtest.MinimalRelease(t, "v0.1.0")
	b := buildtest.Clone(a)
	if err := b.Providers[0].Add("cluster-template-other.yaml", []byte("kind: Cluster\n")); err != nil {
		t.Fatal(err)
	}
	tree := buildtest.MinimalTree(t, 1)
	// dev keeps the image the kustomization names (the developer's :dev).
	devRes, err := builder.Build(context.Background(), builder.Options{Dir: tree, Config: buildtest.Config(t, tree), Version: "v0.1.5", KeepImage: true})
	if err != nil {
		t.Fatal(err)
	}
	devWant := devRes.Release.Providers[0]

	const perKind = 4
	type outcome struct {
		kind string
		err  error
	}
	outs := make([]outcome, 3*perKind)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Go(func() {
			switch i % 3 {
			case 0:
				_, err := (&local.Target{Root: root}).Publish(ctx, a)
				outs[i] = outcome{"a", err}
			case 1:
				_, err := (&local.Target{Root: root}).Publish(ctx, b)
				outs[i] = outcome{"b", err}
			default:
				_, err := Dev(ctx, DevOptions{Dir: tree, Root: root, Version: "v0.1.5", BuildID: "test"})
				outs[i] = outcome{"dev", err}
			}
		})
	}
	wg.Wait()

	ok := map[string]int{}
	conflicts := map[string]int{}
	for _, o := range outs {
		var ce *local.ConflictError
		switch {
		case o.err == nil:
			ok[o.kind]++
		case errors.As(o.err, &ce) && o.kind != "dev":
			conflicts[o.kind]++
		default:
			t.Errorf("%s: unexpected error: %v", o.kind, o.err)
		}
	}
	if ok["dev"] != perKind {
		t.Errorf("%d of %d dev runs succeeded", ok["dev"], perKind)
	}
	var winner *release.Release
	switch {
	case ok["a"] == perKind && conflicts["b"] == perKind:
		winner = a
	case ok["b"] == perKind && conflicts["a"] == perKind:
		winner = b
	default:
		t.Fatalf("succeeded %v, refused %v: want one release to win and the other refused every time", ok, conflicts)
	}
	label := filepath.Join(root, "infrastructure-test")
	if diff := cmp.Diff(assetMap(winner.Providers[0]), testtree.ReadDir(t, filepath.Join(label, "v0.1.0"))); diff != "" {
		t.Errorf("v0.1.0 is not the winner's release (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(assetMap(devWant), testtree.ReadDir(t, filepath.Join(label, "v0.1.5"))); diff != "" {
		t.Errorf("v0.1.5 is not the dev build (-want +got):\n%s", diff)
	}
	if testtree.HasLeftover(t, label) {
		t.Errorf("staging left behind: %v", testtree.Names(t, label))
	}
	if _, err := release.LoadProvider(filepath.Join(label, "v0.1.0")); err != nil {
		t.Error(err)
	}
}

func assetMap(p *release.Provider) map[string]string {
	m := map[string]string{}
	for _, f := range p.Assets() {
		m[f.Name] = string(f.Data)
	}
	return m
}
