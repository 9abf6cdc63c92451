// Command capirepo turns a Cluster API provider's source tree into a provider
// repository clusterctl installs from, checks it, and publishes it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/pipeline"
)

func main() {
	ctx := signalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	os.Exit(code)
}

// exitCode maps an error to the exit code by its type, never by its text:
// 0 ok, 2 a usage error (the command line or the request was wrong: a
// cli.UsageError, set where flags and arguments are checked, or what
// pipeline.IsUsage says is one), 1 any other failure.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	if cli.IsUsage(err) || pipeline.IsUsage(err) {
		return exitUsage
	}
	return exitFailure
}

// signalContext is cancelled by the first SIGINT or SIGTERM, so the command
// stops cleanly (writes finish or are rolled back, waits end); the second
// one ends the process at once, as the default handlers are back by then.
func signalContext() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		fmt.Fprintf(os.Stderr, "capirepo: %v: stopping (send it again to exit at once)\n", s)
		cancel(fmt.Errorf("stopped by %v", s))
	}()
	return ctx
}
