package release

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestWriteContext_ConcurrentWritersNeverLeaveAPart runs 12 writers of four
// different contents of one version into one dist folder at once (under
// -race in make test): each succeeds, and every version folder is afterwards
// complete and equal to one of the inputs, with no staging folder left.
func TestWriteContext_ConcurrentWritersNeverLeaveAPart(t *testing.T) {
	out := t.TempDir()
	const n = 12
	inputs := make([]*Release, 4)
	for i := range inputs {
		r := testRelease(t)
		for _, p := range r.Providers {
			// Different sizes and names, so a mix of two is visible.
			if err := p.Add(fmt.Sprintf("cluster-template-%d.yaml", i), []byte(strings.Repeat(fmt.Sprint(i), 1000*(i+1)))); err != nil {
				t.Fatal(err)
			}
		}
		inputs[i] = r
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = WriteContext(context.Background(), out, inputs[i%len(inputs)], WriteOptions{})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	for _, label := range []string{"cluster-api", "bootstrap-kubeadm"} {
		labelDir := filepath.Join(out, label)
		entries, err := os.ReadDir(labelDir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != "v1.0.0" {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("%s holds %v, want only v1.0.0", labelDir, names)
		}
		got, err := LoadProvider(filepath.Join(labelDir, "v1.0.0"))
		if err != nil {
			t.Fatalf("the version folder is not complete: %v", err)
		}
		matched := false
		for _, in := range inputs {
			want, _ := in.Provider(label)
			if equalFiles(want.Files, got.Files) {
				matched = true
			}
		}
		if !matched {
			t.Errorf("%s/v1.0.0 equals none of the inputs", label)
		}
	}
}

// TestWriteContext_CleansAKilledRunsStaging: a staging folder left by a
// killed build is removed by the next write, which holds the lock.
func TestWriteContext_CleansAKilledRunsStaging(t *testing.T) {
	out := t.TempDir()
	rel := testRelease(t)
	stale, err := StageDir(filepath.Join(out, "cluster-api"), "v1.0.0", []File{{Name: "half.yaml", Data: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(out, rel); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("stale staging folder %s survived the next build", stale)
	}
	if _, err := LoadProvider(filepath.Join(out, "cluster-api", "v1.0.0")); err != nil {
		t.Fatal(err)
	}
}

func equalFiles(a, b []File) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || string(a[i].Data) != string(b[i].Data) {
			return false
		}
	}
	return true
}
