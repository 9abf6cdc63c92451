package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/capirepo/capirepo/provider"
)

// RunBefore runs the config's before: commands in the tree, one after
// another, each printed first with its output after it (GoReleaser's
// before.hooks). The first failure stops the build.
func RunBefore(ctx context.Context, dir string, cfg *provider.Config, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	for i, c := range cfg.Before {
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(log, "before: %s\n", c)
		cmd := exec.CommandContext(ctx, "sh", "-c", c)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = log, log
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return fmt.Errorf("%s: before[%d] %q failed in %s (exit %d): fix the command or the tree; nothing was rendered", cfg.File, i, c, dir, ee.ExitCode())
			}
			return fmt.Errorf("%s: before[%d] %q: %w", cfg.File, i, c, err)
		}
	}
	return nil
}
