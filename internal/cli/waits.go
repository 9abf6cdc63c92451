package cli

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// wait is a flag bounding a wait (--timeout, --lock-timeout): a duration
// that must be positive. The root command checks every wait flag of the
// command it runs (CheckWaits) before the command starts.
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

// BindWait adds a wait flag for d with its default.
func BindWait(cmd *cobra.Command, d *time.Duration, name string, def time.Duration, usage string) {
	*d = def
	cmd.Flags().Var((*wait)(d), name, usage)
}

// CheckWaits refuses a wait flag of cmd that is not positive.
func CheckWaits(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if w, ok := f.Value.(*wait); ok && *w <= 0 && err == nil {
			err = Usagef("--%s must be positive, like 30s or 2m, not %s", f.Name, time.Duration(*w))
		}
	})
	return err
}
