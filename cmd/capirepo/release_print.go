package main

import (
	"fmt"
	"io"
	"text/tabwriter"

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
