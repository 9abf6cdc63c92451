package pipeline

import (
	"fmt"
	"io"
)

// Progress hears of each step as it starts and as it ends; n counts from 1.
type Progress interface {
	Start(n, total int, step string)
	Done(n, total int, r StepResult)
}

// Lines writes progress to w: a line per start and per end for logs and
// CI, or, on a terminal, one line rewritten in place.
func Lines(w io.Writer, terminal bool) Progress { return &lines{w: w, term: terminal} }

// StatusLines is Lines that ends each step with its status alone, for a
// run that prints every step's detail in a summary table afterwards (the
// release's), so no detail is said twice.
func StatusLines(w io.Writer, terminal bool) Progress {
	return &lines{w: w, term: terminal, noDetail: true}
}

type lines struct {
	w        io.Writer
	term     bool
	noDetail bool
}

func (p *lines) Start(n, total int, name string) {
	if p.term {
		fmt.Fprintf(p.w, "\r\033[K[%d/%d] %s ...", n, total, name)
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s\n", n, total, name)
}

func (p *lines) Done(n, total int, r StepResult) {
	prefix := ""
	if p.term {
		prefix = "\r\033[K"
	}
	fmt.Fprintf(p.w, "%s[%d/%d] %s: %s", prefix, n, total, r.Step, r.Status)
	if r.Status == StatusFailed {
		// The run returns the failure: it is printed once, last, not here
		// and in the summary too.
		fmt.Fprintln(p.w, " (the error is printed last)")
		return
	}
	if r.Detail != "" && !p.noDetail {
		fmt.Fprintf(p.w, " (%s)", r.Detail)
	}
	fmt.Fprintln(p.w)
}
