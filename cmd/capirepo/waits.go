package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/dirlock"
	"github.com/capirepo/capirepo/publish"
)

// bindTimeout adds --timeout, the bound on each network wait.
func bindTimeout(cmd *cobra.Command, d *time.Duration) {
	cmd.Flags().DurationVar(d, "timeout", publish.DefaultTimeout,
		"longest wait for a server: connecting (at most 30s), its reply, or any pause in a transfer; a request and its retries wait at most twice this in all; not a limit on a whole upload")
}

// bindLockTimeout adds --lock-timeout, the bound on waiting for another
// capirepo writing into the same output folder.
func bindLockTimeout(cmd *cobra.Command, d *time.Duration) {
	cmd.Flags().DurationVar(d, "lock-timeout", dirlock.DefaultTimeout,
		"longest wait for another capirepo writing into the same output folder")
}

// checkWaits refuses a bound that is not positive.
func checkWaits(ds map[string]time.Duration) error {
	for name, d := range ds {
		if d <= 0 {
			return usagef("--%s must be positive, like 30s or 2m, not %s", name, d)
		}
	}
	return nil
}
