// Command capirepo turns a Cluster API provider's source tree into a provider
// repository clusterctl installs from, checks it, and publishes it.
package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/pipeline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// exitCode maps an error to the exit code by its type, never by its text:
// 0 ok, 2 a usage error (the command line or the request was wrong: a
// usageError, set where flags and arguments are checked), 1 any other failure.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ue usageError
	var mismatch *pipeline.ManagerMismatchError
	var oneImage *builder.ImageUsageError
	if errors.As(err, &ue) || errors.As(err, &mismatch) || errors.As(err, &oneImage) || errors.Is(err, builder.ErrNoVersion) {
		return exitUsage
	}
	return exitFailure
}
