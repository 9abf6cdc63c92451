package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/internal/suggest"
)

// UsageError marks an error as the caller's: exit code 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef makes a UsageError.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// IsUsage says whether err is, or wraps, a UsageError.
func IsUsage(err error) bool {
	var ue UsageError
	return errors.As(err, &ue)
}

// CheckUsage makes every mistake on the command line a UsageError (exit 2),
// for the commands there are now and those added later: it is applied to
// the whole tree once every command is added.
//
//   - a command that only groups others (publish) and the root run
//     GroupRunE, so an unknown subcommand is an error with a suggestion,
//     not the help and exit 0;
//   - argument-count errors (cobra.NoArgs, ExactArgs, ...) are wrapped;
//   - required flags and flag groups are checked before cobra would check
//     them, and their errors wrapped;
//   - flag errors (unknown flag, bad value) are wrapped by the root's
//     FlagErrorFunc, which every command inherits.
//
// Each of these errors ends with "see 'capirepo X --help'".
func CheckUsage(cmd *cobra.Command) {
	if !cmd.Runnable() {
		cmd.Args = cobra.ArbitraryArgs
		cmd.RunE = GroupRunE
	} else if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return UsageError{WithHelpHint(c, err)}
			}
			return nil
		}
	}
	pre, preNoErr := cmd.PreRunE, cmd.PreRun // cobra runs PreRun only without PreRunE
	cmd.PreRunE = func(c *cobra.Command, a []string) error {
		if err := c.ValidateRequiredFlags(); err != nil {
			return UsageError{WithHelpHint(c, err)}
		}
		if err := c.ValidateFlagGroups(); err != nil {
			return UsageError{WithHelpHint(c, err)}
		}
		switch {
		case pre != nil:
			return pre(c, a)
		case preNoErr != nil:
			preNoErr(c, a)
		}
		return nil
	}
	for _, c := range cmd.Commands() {
		CheckUsage(c)
	}
}

// GroupRunE runs a command that only holds subcommands: without arguments
// the root prints its help (exit 0) and a group names what it needs
// (exit 2); an unknown subcommand is a usage error that suggests the
// nearest one.
func GroupRunE(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		if !cmd.HasParent() {
			return cmd.Help()
		}
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		return UsageError{WithHelpHint(cmd, fmt.Errorf("%s needs a subcommand: %s", cmd.CommandPath(), strings.Join(names, ", ")))}
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return UsageError{WithHelpHint(cmd, errors.New(msg))}
}

// FlagError explains a flag error, for every command (the root's
// FlagErrorFunc). On a command that only groups others, an argument before
// the flag that names no subcommand is the mistake (capirepo biuld --version
// v1: the flag belongs to the command the user meant), so it is reported
// with the nearest command; an unknown flag gets the nearest flag the
// command has.
func FlagError(c *cobra.Command, err error) error {
	if c.HasSubCommands() {
		if args := c.Flags().Args(); len(args) > 0 {
			return GroupRunE(c, args)
		}
	}
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && ne.GetSpecifiedShortnames() == "" {
		var names []string
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		if s := suggest.Nearest(ne.GetSpecifiedName(), names); s != "" {
			err = fmt.Errorf("%w (did you mean --%s?)", err, s)
		}
	}
	return UsageError{WithHelpHint(c, err)}
}

// WithHelpHint ends err with where to read how the command is used.
func WithHelpHint(cmd *cobra.Command, err error) error {
	return fmt.Errorf("%w; see '%s --help'", err, cmd.CommandPath())
}

// DeprecatedAlias adds old as a hidden, deprecated name of the flag name
// (already defined): both set the same value, and old prints a notice on w
// (stderr; cobra's own deprecation notice would go to the command's
// output, stdout).
func DeprecatedAlias(w io.Writer, f *pflag.FlagSet, old, name string) {
	nf := f.Lookup(name)
	f.AddFlag(&pflag.Flag{Name: old, Usage: nf.Usage, Hidden: true, DefValue: nf.DefValue, NoOptDefVal: nf.NoOptDefVal,
		Value: deprecatedValue{Value: nf.Value, w: w, notice: fmt.Sprintf("Flag --%s has been deprecated, use --%s\n", old, name)}})
}

// DeprecatedFlag hides the flag name (already defined) and makes it print
// a notice on w when used, saying what to do instead: for a flag whose
// value is now an argument (--dir: PATH, --from: DIST). It keeps working.
func DeprecatedFlag(w io.Writer, f *pflag.FlagSet, name, instead string) {
	fl := f.Lookup(name)
	fl.Hidden = true
	fl.Value = deprecatedValue{Value: fl.Value, w: w, notice: fmt.Sprintf("Flag --%s has been deprecated, %s\n", name, instead)}
}

// Arg takes what a command reads from its optional argument (arg in
// messages: PATH, DIST) into value, where the deprecated flag says the
// same; both given, differently, is a UsageError naming what (the tree,
// the dist folder).
func Arg(cmd *cobra.Command, args []string, flag, arg, what string, value *string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.Flags().Changed(flag) && *value != args[0] {
		return Usagef("%s is given twice, as %s %s and --%s %s: pass one", what, arg, args[0], flag, *value)
	}
	*value = args[0]
	return nil
}

// ArgName is how an error names a folder given as the argument arg or,
// deprecated, as the flag: as the user gave it.
func ArgName(cmd *cobra.Command, flag, arg string) string {
	if cmd.Flags().Changed(flag) {
		return "--" + flag
	}
	return arg
}

type deprecatedValue struct {
	pflag.Value
	w      io.Writer
	notice string
}

func (v deprecatedValue) Set(s string) error {
	_, _ = io.WriteString(v.w, v.notice)
	return v.Value.Set(s)
}

// NewHelpCmd replaces cobra's help command (example is its Example), which prints the root's help
// and exits 0 for a topic it does not know: here that is an unknown
// command, with a suggestion, like any other.
func NewHelpCmd(example string) *cobra.Command {
	return &cobra.Command{
		Use:     "help [command]",
		Short:   "Help about any command",
		Example: example,
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil {
				return UsageError{WithHelpHint(c.Root(), err)}
			}
			if len(rest) > 0 && target.HasSubCommands() {
				return GroupRunE(target, rest)
			}
			return target.Help()
		},
	}
}

// optionAnnotation marks a flag that gives an option under another name
// than the option's own (option.Words).
const optionAnnotation = "capirepo/option"

// Prefixed binds nothing: it marks each flag prefix+NAME of cmd as the
// flag that gives option NAME (release's --github-target gives
// option.Target), so what the steps say names the flag this command has.
func Prefixed(cmd *cobra.Command, prefix string, names ...string) {
	if prefix == "" {
		return
	}
	for _, n := range names {
		_ = cmd.Flags().SetAnnotation(prefix+n, optionAnnotation, []string{n})
	}
}

// Words are the flags of cmd that give an option under another name.
func Words(cmd *cobra.Command) option.Words {
	w := option.Words{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if n := f.Annotations[optionAnnotation]; len(n) == 1 {
			w[option.Name(n[0])] = "--" + f.Name
		}
	})
	return w
}
