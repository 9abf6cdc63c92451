// Package stderrfilter drops known messages that a library writes straight
// to the process's standard error (kustomize prints its deprecation notices
// with fmt.Fprintf(os.Stderr, ...), once per kustomization file and render),
// so that the caller can report them once, counted, instead.
//
// While a Filter is held, file descriptor 2 is a pipe: everything written to
// it, by Go code, C code or child processes, is passed on to the real
// standard error in order, except exact occurrences of the dropped messages.
// The os.Stderr variable is never assigned (other goroutines read it). When
// the last hold is released, descriptor 2 is the original again and
// everything written before has been passed on. Where there are no Unix file
// descriptors (Windows), holding does nothing and the messages print.
//
// It is not a logger and not for capirepo's own output, which goes to the
// writers the commands are given.
package stderrfilter
