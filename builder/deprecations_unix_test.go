//go:build unix

package builder

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/capirepo/capirepo/internal/testtree"
)

const (
	deprecChildEnv = "BUILDER_TEST_DEPREC_CHILD"
	quietMark      = "=== quiet build\n"
)

func stderrID(t *testing.T) [2]uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(2, &st); err != nil {
		t.Fatal(err)
	}
	return [2]uint64{uint64(st.Dev), uint64(st.Ino)} //nolint:unconvert // int32 and uint64 on darwin
}

// TestBuild_KustomizeNoticesCountedNotPrinted runs a build of the tree with
// deprecated fields in a process of its own, twice: first with kustomize
// printing as it does (each notice comes from one file of this tree, so the
// count of its prints is the count of renders the warning must say), then
// as capirepo builds. There: none of kustomize's notices on
// stderr, each once in the warnings with kustomize's count of renders;
// another goroutine's stderr lines, written before, during and after the
// build, all arrive, in order; and after Build returns descriptor 2 is the
// original file.
func TestBuild_KustomizeNoticesCountedNotPrinted(t *testing.T) {
	if os.Getenv(deprecChildEnv) != "" {
		deprecChild(t, os.Getenv(deprecChildEnv))
		return
	}
	dir := testtree.Write(t, deprecatedTree())
	cmd := exec.Command(os.Args[0], "-test.run=^TestBuild_KustomizeNoticesCountedNotPrinted$", "-test.v=false")
	cmd.Env = append(os.Environ(), deprecChildEnv+"="+dir)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	loud, quiet, ok := strings.Cut(stderr.String(), quietMark)
	if !ok {
		t.Fatalf("no %q in the child's stderr:\n%s", quietMark, stderr.String())
	}
	warnings := stdout.String()
	if !strings.Contains(warnings, "restored=true") {
		t.Errorf("descriptor 2 is not the original after Build: %s", warnings)
	}
	if m := regexp.MustCompile(`during=(\d+)`).FindStringSubmatch(warnings); m == nil || m[1] == "0" {
		t.Errorf("no stderr line was written while the build held descriptor 2: %s", warnings)
	}
	for _, f := range []string{"bases", "commonLabels", "patchesStrategicMerge"} {
		n := notice(t, f)
		printed := strings.Count(loud, n+"\n")
		if printed == 0 {
			t.Fatalf("kustomize printed no %q without the filter:\n%s", n, loud)
		}
		if c := strings.Count(quiet, n); c != 0 {
			t.Errorf("%s: printed %d times by the quiet build", f, c)
		}
		re := regexp.MustCompile(regexp.QuoteMeta("kustomize: "+strings.TrimPrefix(n, "# Warning: ")) + ` \([^;]+; in (\d+) renders?\)`)
		ms := re.FindAllStringSubmatch(warnings, -1)
		if len(ms) != 1 {
			t.Errorf("%s: %d warnings, want 1:\n%s", f, len(ms), warnings)
			continue
		}
		if got, _ := strconv.Atoi(ms[0][1]); got != printed {
			t.Errorf("%s: the warning says %d renders, kustomize printed it %d times", f, got, printed)
		}
	}
	// The other goroutine's lines: all of them, in order, nothing else.
	for i, l := range strings.Split(strings.TrimSuffix(quiet, "\n"), "\n") {
		if l != fmt.Sprintf("other %d", i) {
			t.Fatalf("quiet stderr line %d is %q, want %q; stderr:\n%s", i, l, fmt.Sprintf("other %d", i), quiet)
		}
	}
}

func deprecChild(t *testing.T, dir string) {
	opts := func() Options {
		return Options{Dir: dir, Config: loadConfig(t, dir), Version: "v1.2.3"}
	}
	quietKustomize = false
	if _, err := Build(context.Background(), opts()); err != nil {
		t.Fatal(err)
	}
	quietKustomize = true
	fmt.Fprint(os.Stderr, quietMark)

	orig := stderrID(t)
	stop := make(chan struct{})
	done := make(chan struct{})
	var during atomic.Int64
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if stderrID(t) != orig {
				during.Add(1)
			}
			fmt.Fprintf(os.Stderr, "other %d\n", i)
			time.Sleep(time.Millisecond)
			if i > 2 && during.Load() > 2 {
				// enough written while held; wait for the build to end
				<-stop
				fmt.Fprintf(os.Stderr, "other %d\n", i+1)
				return
			}
		}
	}()
	res, err := Build(context.Background(), opts())
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("restored=%v during=%d\n", stderrID(t) == orig, during.Load())
	for _, w := range res.Warnings {
		fmt.Println(w)
	}
	t.Logf("quiet build: %d stderr lines written while held", during.Load())
}
