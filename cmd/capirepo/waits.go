package main

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/capirepo/capirepo/internal/dirlock"
	"github.com/capirepo/capirepo/publish"
)

// wait is a flag bounding a wait (--timeout, --lock-timeout): a duration
// that must be positive. The root command checks every wait flag of the
// command it runs (checkWaits) before the command starts.
type wait time.Duration

func (w *wait) String() string { return time.Duration(*w).String() }
func (w *wait) Type() string   { return "duration" }
func (w *wait) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*w = wait(d)
	return nil
}

// bindWait adds a wait flag for d with its default.
func bindWait(cmd *cobra.Command, d *time.Duration, name string, def time.Duration, usage string) {
	*d = def
	cmd.Flags().Var((*wait)(d), name, usage)
}

// bindTimeout adds --timeout, the bound on each network wait.
func bindTimeout(cmd *cobra.Command, d *time.Duration) {
	bindWait(cmd, d, "timeout", publish.DefaultTimeout,
		"longest wait for a server: connecting (at most 30s), its reply, or any pause in a transfer; a request and its retries wait at most twice this in all; not a limit on a whole upload")
}

// bindLockTimeout adds --lock-timeout, the bound on waiting for another
// capirepo writing into the same output folder.
func bindLockTimeout(cmd *cobra.Command, d *time.Duration) {
	bindWait(cmd, d, "lock-timeout", dirlock.DefaultTimeout,
		"longest wait for another capirepo writing into the same output folder")
}

// checkWaits refuses a wait flag of cmd that is not positive.
func checkWaits(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if w, ok := f.Value.(*wait); ok && *w <= 0 && err == nil {
			err = usagef("--%s must be positive, like 30s or 2m, not %s", f.Name, time.Duration(*w))
		}
	})
	return err
}
