package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/capirepo/capirepo/pipeline"
)

// writeSteps prints the run's summary table. A failed step's error is the
// command's own, printed last ("Error: ..."): its row points there rather
// than saying it a second time.
func writeSteps(w io.Writer, steps []pipeline.StepResult) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tSTATUS\tDETAIL")
	for _, r := range steps {
		detail := r.Detail
		if r.Status == pipeline.StatusFailed {
			detail = "the error below"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Step, r.Status, detail)
	}
	_ = tw.Flush()
}

// isTerminal says whether w is a terminal, where progress rewrites one line
// and uploads get bars; not a file, a pipe or /dev/null.
func isTerminal(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok { // the secrets mask
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
