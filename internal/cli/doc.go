// Package cli is the command line's machinery that capirepo's commands
// share and that knows none of them: every cobra mistake a UsageError (exit
// code 2) that names the nearest command or flag, flags renamed with a
// notice, flags that bound a wait, upload bars on a terminal, the output
// format and its dispatch (with the Markdown appended to a CI job's
// summary), and the flags that give an option under another name than its
// own (option.Words).
//
// It is not the commands: their flags, help, the environment they read and
// what they print are cmd/capirepo's; nothing below cmd imports this.
package cli
