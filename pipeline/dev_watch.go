package pipeline

import (
	"context"
	"path/filepath"
	"slices"
	"time"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/provider"
)

// Bounds of the watch's poll interval: it polls every MinPoll, or every
// four times the last tree walk when that is longer (a large tree is not
// walked back to back), never slower than MaxPoll.
const (
	DevWatchMinPoll = 20 * time.Millisecond
	DevWatchMaxPoll = time.Second
)

// DevWatchOptions say how DevWatch polls and where each run's result goes.
type DevWatchOptions struct {
	// Poll is the shortest interval between two looks at the trees; 0 means
	// DevWatchMinPoll.
	Poll time.Duration
	// OnRun gets every run's result or error, the first run's included. An
	// error does not stop the watch: the next change runs Dev again.
	OnRun func(*DevResult, error)
}

// DevWatch runs Dev once, then again each time a file of the provider trees
// (or the configuration file) changes, until ctx is done. It polls the
// trees' names, sizes, modes and modification times, skipping the folders
// Dev does not hash and the dev repository itself; Dev's own cache then
// decides which providers to build again, and a render cache kept for the
// whole watch (opts.RenderCache, made when nil) which of their
// kustomizations to render again: a saved template does not render the
// components. It returns nil when ctx is cancelled: a run
// in progress stops the way Dev does on cancellation (every write is
// atomic, so the dev repository keeps the previous run's complete output).
func DevWatch(ctx context.Context, opts DevOptions, w DevWatchOptions) error {
	root, err := opts.root()
	if err != nil {
		return err
	}
	opts.Root = root
	minPoll := w.Poll
	if minPoll <= 0 {
		minPoll = DevWatchMinPoll
	}
	if opts.RenderCache == nil {
		opts.RenderCache = builder.NewRenderCache()
	}
	opts.tags = &tagMemo{}
	onRun := w.OnRun
	if onRun == nil {
		onRun = func(*DevResult, error) {}
	}
	var last string
	var paths []string
	run := func() {
		// The state is taken before the run, so a file saved while Dev
		// reads the tree is seen as a change by the next poll; but a tree
		// with before: commands takes it after, since those commands
		// (make generate, ...) write into the tree on every run.
		var before bool
		paths, before = watchPaths(opts)
		last, _ = builder.TreeState(paths, root)
		res, err := Dev(ctx, opts)
		if ctx.Err() != nil {
			return
		}
		if before {
			paths, _ = watchPaths(opts)
			last, _ = builder.TreeState(paths, root)
		}
		onRun(res, err)
	}
	run()
	poll := minPoll
	timer := time.NewTimer(poll)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		start := time.Now()
		state, _ := builder.TreeState(paths, root)
		poll = min(max(minPoll, 4*time.Since(start)), DevWatchMaxPoll)
		if state != last {
			run()
		}
		if ctx.Err() != nil {
			return nil
		}
		timer.Reset(poll)
	}
}

// watchPaths are the trees and files whose changes start a run: the
// provider trees the configuration names (or opts.Dir while the
// configuration does not resolve) and the configuration files; before says
// whether a tree has before: commands.
func watchPaths(opts DevOptions) (paths []string, before bool) {
	if srcs, err := provider.LoadTreeSpecs(opts.Dir, opts.ConfigPath); err == nil {
		for _, s := range srcs {
			paths = append(paths, s.Dir)
			if s.Config.File != "" {
				paths = append(paths, s.Config.File)
			}
			before = before || len(s.Config.Before) > 0
		}
	}
	dir := opts.Dir
	if dir == "" {
		dir = "."
	}
	if abs, err := filepath.Abs(dir); err == nil {
		paths = append(paths, abs)
	}
	if opts.ConfigPath != "" {
		paths = append(paths, opts.ConfigPath)
	}
	slices.Sort(paths)
	return slices.Compact(paths), before
}
