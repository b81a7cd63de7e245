// Package cli holds formwork's cobra commands. Each subcommand has an
// options struct, a constructor that binds its flags and a run function
// that takes the options; the work itself lives in library packages.
//
// Exit status: 0 success, 1 error, 2 usage error, 3 advisor findings at or
// above --fail-on, 130 interrupted.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitFindings    = 3
	ExitInterrupted = 130
)

// Env is what a command may touch of the outside world, so that tests can
// substitute it.
type Env struct {
	Stdout, Stderr io.Writer
	// Signals receives interrupt and termination signals.
	Signals func() (ctx context.Context, stop func())
}

// StdEnv returns the process's real environment.
func StdEnv() Env {
	return Env{
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Signals: func() (context.Context, func()) {
			return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		},
	}
}

// usageError marks errors in the command line itself.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }

// errInterrupted reports that a signal stopped the command.
var errInterrupted = errors.New("interrupted")

// Main runs formwork with args and returns the exit status.
func Main(args []string, env Env) int {
	root := newRoot(env)
	root.SetArgs(args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.Execute()
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errInterrupted):
		return ExitInterrupted
	case errors.Is(err, errFindings):
		return ExitFindings
	}
	fmt.Fprintln(env.Stderr, "formwork:", err)
	var ue usageError
	if errors.As(err, &ue) || isFlagError(err) {
		return ExitUsage
	}
	return ExitError
}

func isFlagError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown command", "unknown shorthand", "invalid argument", "flag needs an argument", "accepts "} {
		if len(msg) >= len(p) && containsFold(msg, p) {
			return true
		}
	}
	return false
}

func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func newRoot(env Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "formwork",
		Short:         "MongoDB schema design patterns, executable",
		SilenceUsage:  true,
		SilenceErrors: true,
		Long: `Formwork makes MongoDB's schema design patterns executable: an embedded
MongoDB-compatible server, pattern packages, an advisor and a lab.`,
	}
	root.AddCommand(newServeCmd(env), newBenchCmd(env), newLabCmd(env), newJobsCmd(env), newAdviseCmd(env))
	return root
}
