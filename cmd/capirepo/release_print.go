package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
)

// isTerminal says whether w is a terminal, where progress rewrites one line
// and uploads get bars; not a file, a pipe or /dev/null.
func isTerminal(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok { // the secrets mask
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeNext prints what a maintainer does next, once the run passed.
func writeNext(w io.Writer, next []string) {
	if len(next) > 0 {
		fmt.Fprintln(w, "next:")
	}
	for _, n := range next {
		fmt.Fprintf(w, "  %s\n", n)
	}
}
