// Package devwatch_test measures capirepo dev --watch: the time from a
// saved file of the example provider to the dev repository holding it, in
// one running process (pipeline.DevWatch, warm: after its first run).
//
//	go test ./bench/devwatch -run '^$' -bench DevWatch -benchtime 20x -count 3
//
// ns/op is the latency of one save; p50-ms and max-ms are over the run's
// saves. The poll interval (pipeline.DevWatchMinPoll, 20 ms) is part of it:
// a save waits half of it on average. cpu-ms/op is the process's CPU time
// per save (the render, the writes and the polls between saves), which
// says more than the latency on a loaded machine.
package devwatch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/pipeline"
)

func BenchmarkDevWatch_SaveToUpdatedRepository(b *testing.B) {
	tree := testtree.CopyTree(b, "../../examples/infrastructure-example")
	root := filepath.Join(b.TempDir(), "dev")
	ctx, cancel := context.WithCancel(context.Background())
	runs := make(chan error, 64)
	done := make(chan error, 1)
	go func() {
		done <- pipeline.DevWatch(ctx, pipeline.DevOptions{Dir: tree, Root: root, BuildID: "bench"},
			pipeline.DevWatchOptions{OnRun: func(_ *pipeline.DevResult, err error) { runs <- err }})
	}()
	defer func() { cancel(); <-done }()
	if err := <-runs; err != nil {
		b.Fatal(err)
	}
	src := filepath.Join(tree, "templates", "cluster-template.yaml")
	orig, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	published := filepath.Join(root, "infrastructure-example", "v0.1.99", "cluster-template.yaml")
	var lat []time.Duration
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		cidr := fmt.Sprintf("10.%d.%d.0/24", i/250%250, i%250)
		start := time.Now()
		if err := os.WriteFile(src, []byte(strings.Replace(string(orig), "192.168.0.0/16", cidr, 1)), 0o644); err != nil {
			b.Fatal(err)
		}
		for {
			data, err := os.ReadFile(published)
			if err == nil && strings.Contains(string(data), cidr) {
				break
			}
			select {
			case err := <-runs:
				if err != nil {
					b.Fatal(err)
				}
			case <-time.After(500 * time.Microsecond):
			}
			if time.Since(start) > time.Minute {
				b.Fatal("the dev repository did not follow the save within a minute")
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

// cpuTime is the process's user and system CPU time: unlike the latency,
// it hardly moves with the machine's load.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
