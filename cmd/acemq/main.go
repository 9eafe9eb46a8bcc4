// Command acemq is the operator's tool for AceMQ: it shows what a retry
// policy does to a queue and what a topology file declares before any of it
// reaches a broker, compares a topology with a live broker and applies it,
// deals with dead letters, and makes development certificates.
//
//	acemq ladder orders.new --policy 'exponential(6, 10s, 5m)' [--attempt 3]
//	acemq topology plan -f topology.yaml
//	acemq topology diff -f topology.yaml
//	acemq dlq replay orders.new.dlq --match 'reason contains "timeout"'
//	acemq console --listen 127.0.0.1:8080
//	acemq certs --out ./acemq-dev-certs
//	acemq version
//
// Every verb is a thin call into the acemq packages, so what it prints is
// exactly what a service built with them would do. Exit status: 0 when all is
// well, 1 when a topology does not validate (or, for diff and apply, differs
// from the broker), 2 for a usage mistake or any other error, 130 when a dlq
// verb is stopped by Ctrl-C.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	exitOK      = 0
	exitInvalid = 1 // a topology with validation problems
	exitFailure = 2 // a usage mistake or any other error
)

func main() {
	// The first Ctrl-C (or SIGTERM) ends the context: a verb moving messages
	// finishes those in hand and stops. A second one kills the process, as
	// usual; the broker then hands back what the process held.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	os.Exit(execute(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// execute runs the command line args and says how the process should exit.
// Errors go to stderr as "acemq: ..." (errorLine); a usage mistake is
// followed by the command's usage.
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetIn(stdin)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	var exit *exitError
	if errors.As(err, &exit) {
		if exit.err != nil {
			fmt.Fprintln(stderr, errorLine(exit.err))
		}
		return exit.code
	}
	fmt.Fprintln(stderr, errorLine(err))
	var failed *runError
	if !errors.As(err, &failed) {
		fmt.Fprintf(stderr, "\n%s", cmd.UsageString())
	}
	return exitFailure
}

// errorPrefix starts every error line of the command.
const errorPrefix = "acemq: "

// errorLine is err as the command prints it, with errorPrefix once: the
// acemq package's own errors already start with it, as a Go package's
// errors name the package ("acemq: connect to ...").
func errorLine(err error) string {
	return errorPrefix + strings.TrimPrefix(strings.TrimRight(err.Error(), "\n"), errorPrefix)
}

// newRootCmd builds the command tree, writing to stdout and stderr. It
// prints no error itself: the caller (execute) does.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "acemq",
		Short: "Review AceMQ retry ladders and topologies, deal with dead letters, make development certificates",
		Long: `acemq shows what an AceMQ retry policy does to a queue and what a topology
file declares, exactly as the AceMQ libraries (Go, Java, .NET, Python, Ruby)
would declare it; compares a topology with a live broker and applies it; and
shows, replays, parks, exports and purges dead letters without losing one;
and makes TLS certificates for a local broker, marked for development.`,
		// execute prints errors, and usage only after a usage mistake.
		SilenceErrors: true,
		SilenceUsage:  true,
		// No Args: cobra then refuses an unknown command, with suggestions.
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newLadderCmd(), newTopologyCmd(), newDLQCmd(), newDemoCmd(), newConsoleCmd(), newCertsCmd(), newVersionCmd())
	return root
}

// runError is an error of a verb's work, once its arguments were accepted:
// no usage follows it.
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// exitError ends the command with code; err, when not nil, is printed.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// runE is a verb's RunE: check looks at the arguments (its errors are usage
// mistakes), then run does the work (its errors are not).
func runE(check func(cmd *cobra.Command, args []string) error, run func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if check != nil {
			if err := check(cmd, args); err != nil {
				return err
			}
		}
		cmd.SilenceUsage = true
		if err := run(cmd, args); err != nil {
			var exit *exitError
			if errors.As(err, &exit) {
				return err
			}
			return &runError{err}
		}
		return nil
	}
}

// exactArgs wants exactly the arguments named, such as "QUEUE".
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return fmt.Errorf("%s takes %d argument%s (%s), found %d", cmd.CommandPath(),
				len(names), plural(len(names)), strings.Join(names, " "), len(args))
		}
		return nil
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// writeJSON writes v indented, as every --json output is.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
