// Package cmdline holds what the command lines of skills-mcp and
// skills-hub share: the table each command declares its settings in (a
// flag, its environment twin, its config-file key and its help in one
// row), the errors of bad usage and how they are printed, the exit-status
// contract, and the wiring of a table into a cobra command (help, flag
// suggestions, completion). It reads no environment itself: a command
// hands it an [Env].
package cmdline

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Exit statuses: the contract of both binaries, the same in every command.
const (
	ExitOK      = 0 // done, or help asked for
	ExitFailure = 1 // a failure at run time
	ExitUsage   = 2 // bad usage: a flag, a variable, an argument
)

// Env looks a variable up: os.LookupEnv in a binary, a map in tests.
type Env func(string) (string, bool)

// UsageError is bad input from the user: the command exits [ExitUsage]
// and prints Hint, if any, after the error.
type UsageError struct {
	Err  error
	Hint string
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef is a [UsageError] with a hint and a formatted error.
func Usagef(hint, format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...), Hint: hint}
}

// ErrHelp is returned by a command that printed its help on request
// (exit status 0).
var ErrHelp = errors.New("help requested")

// PrintError writes err as the command line's one error and returns the
// exit status. A usage error gets its hint, unless that only repeats
// the help, and then "Try: CMDPATH --help"; any other error is a failure
// at run time.
func PrintError(w io.Writer, cmdPath string, err error) int {
	if ue, ok := errors.AsType[*UsageError](err); ok {
		fmt.Fprintf(w, "Error: %v\n", ue.Err)
		program, _, _ := strings.Cut(cmdPath, " ")
		if h := ue.Hint; h != "" && !strings.HasSuffix(h, " -h") && !strings.HasSuffix(h, " --help") && h != program+" help" {
			fmt.Fprintf(w, "Hint: %s\n", h)
		}
		fmt.Fprintf(w, "Try: %s --help\n", cmdPath)
		return ExitUsage
	}
	fmt.Fprintf(w, "Error: %v\n", err)
	return ExitFailure
}
