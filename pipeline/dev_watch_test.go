package pipeline

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capirepo/capirepo/internal/testtree"
)

type watchRun struct {
	res *DevResult
	err error
}

// startWatch runs DevWatch on tree into root until the test ends; each
// run's result arrives on the channel.
// done is closed when DevWatch has returned, with its error in *werr.
func startWatch(t *testing.T, tree, root string) (runs <-chan watchRun, cancel context.CancelFunc, done <-chan struct{}, werr *error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan watchRun, 16)
	fin := make(chan struct{})
	werr = new(error)
	go func() {
		defer close(fin)
		*werr = DevWatch(ctx, DevOptions{Dir: tree, Root: root, BuildID: "test"}, DevWatchOptions{
			OnRun: func(r *DevResult, err error) { ch <- watchRun{r, err} },
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-fin
	})
	return ch, cancel, fin, werr
}

// save writes a file as an editor that saves by renaming does, so a poll
// never sees it half-written: each save is one run of the watch. (A save
// that truncates first can be seen empty; the watch then runs once more
// when the rest arrives, which a test counting runs cannot tell apart.)
func save(path string, data []byte) error {
	tmp := path + ".saving"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func nextRun(t *testing.T, runs <-chan watchRun) watchRun {
	t.Helper()
	select {
	case r := <-runs:
		return r
	case <-time.After(60 * time.Second):
		t.Fatal("no dev run within 60 s")
		return watchRun{}
	}
}

func TestDevWatch_RebuildsOnSaveAndKeepsWatchingAfterAnError(t *testing.T) {
	tree := testtree.CopyTree(t, devExampleDir)
	root := filepath.Join(t.TempDir(), "dev")
	runs, cancel, done, werr := startWatch(t, tree, root)

	first := nextRun(t, runs)
	if first.err != nil {
		t.Fatalf("first run: %v", first.err)
	}
	if len(first.res.Providers) != 1 || first.res.Providers[0].Cached || !first.res.Providers[0].Written {
		t.Fatalf("first run: %+v", first.res.Providers)
	}
	published := filepath.Join(root, "infrastructure-example", first.res.Providers[0].Version, "cluster-template.yaml")
	if data, err := os.ReadFile(published); err != nil || !strings.Contains(string(data), "192.168.0.0/16") {
		t.Fatalf("first run did not publish the template: %v", err)
	}

	// A saved edit: the dev repository follows without another command.
	src := filepath.Join(tree, "templates", "cluster-template.yaml")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "192.168.0.0/16", "10.244.0.0/16", 1)
	if err := save(src, []byte(edited)); err != nil {
		t.Fatal(err)
	}
	second := nextRun(t, runs)
	if second.err != nil {
		t.Fatalf("run after the edit: %v", second.err)
	}
	if p := second.res.Providers[0]; p.Cached || !p.Written {
		t.Errorf("run after the edit: %+v, want rendered and written", p)
	}
	if got, err := os.ReadFile(published); err != nil || !strings.Contains(string(got), "10.244.0.0/16") {
		t.Errorf("the dev repository's template does not have the edit: %v\n%s", err, got)
	}

	// A broken save is reported, the dev repository keeps the last good
	// build, and fixing the file brings the watch back.
	kust := filepath.Join(tree, "config", "default", "kustomization.yaml")
	good, err := os.ReadFile(kust)
	if err != nil {
		t.Fatal(err)
	}
	if err := save(kust, []byte("resources: [\n")); err != nil {
		t.Fatal(err)
	}
	if r := nextRun(t, runs); r.err == nil {
		t.Errorf("a broken kustomization.yaml gave no error: %+v", r.res)
	}
	if got, err := os.ReadFile(published); err != nil || !strings.Contains(string(got), "10.244.0.0/16") {
		t.Errorf("a failed run changed the dev repository: %v", err)
	}
	if err := save(kust, good); err != nil {
		t.Fatal(err)
	}
	if r := nextRun(t, runs); r.err != nil {
		t.Errorf("run after the fix: %v", r.err)
	}

	// Stopping returns at once and leaves no temporary file behind.
	stopped := time.Now()
	cancel()
	select {
	case <-done:
		if *werr != nil {
			t.Errorf("DevWatch after cancel: %v", *werr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("DevWatch did not stop within 10 s of the cancel")
	}
	if d := time.Since(stopped); d > 5*time.Second {
		t.Errorf("stopping took %v", d)
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}

func TestDevWatch_NoChangeNoRun(t *testing.T) {
	tree := testtree.CopyTree(t, devExampleDir)
	root := filepath.Join(t.TempDir(), "dev")
	runs, _, _, _ := startWatch(t, tree, root)
	if r := nextRun(t, runs); r.err != nil {
		t.Fatal(r.err)
	}
	// Touching a file Dev does not read (under .git) and the dev
	// repository's own writes start no run.
	if err := os.MkdirAll(filepath.Join(tree, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, ".git", "HEAD"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-runs:
		t.Errorf("a run without a change to the tree: %+v %v", r.res, r.err)
	case <-time.After(20 * DevWatchMinPoll):
	}
}
