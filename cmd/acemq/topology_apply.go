package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/acemq-go/acemq/admin"
)

type applyOptions struct {
	diffOptions
	dryRun bool
	tls    tlsFlags
}

func newTopologyApplyCmd() *cobra.Command {
	var o applyOptions
	cmd := &cobra.Command{
		Use:   "apply -f FILE [--url AMQP_URL] [--management-url URL] [--dry-run]",
		Short: "Declare a topology file on a broker, unless a declaration would fail",
		Long: `apply compares the topology file with the broker first, as diff does, and
refuses, declaring nothing, when an exchange, queue or rung exists declared
otherwise: its redeclaration would fail with PRECONDITION_FAILED halfway
through. Otherwise it sends every declaration of the plan, in plan order,
over AMQP (those that exist already change nothing). --dry-run stops after
the comparison and says what it would send. Leftover rungs, and rungs of the
other kind beside the file's, are reported and left alone.

Exit status: 0 applied (or would apply), 1 refused, 2 on any error.`,
		Example: `  acemq topology apply -f examples/topology.yaml --dry-run
  acemq topology apply -f examples/topology.yaml --url amqp://app:secret@rabbit:5672/shop`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: runE(nil, func(cmd *cobra.Command, _ []string) error {
			o.stdin = cmd.InOrStdin()
			return runApply(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		}),
	}
	o.addFlags(cmd)
	o.tls.addFlags(cmd)
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "compare and say what would be declared; declare nothing")
	return cmd
}

func runApply(ctx context.Context, stdout, stderr io.Writer, o applyOptions) error {
	t, plan, endpoint, report, err := diffFile(ctx, o.diffOptions)
	if err != nil {
		return err
	}
	var b strings.Builder
	if conflicts := report.Conflicts(); len(conflicts) > 0 {
		fmt.Fprintf(&b, "refused: %d declaration%s of %s would fail with PRECONDITION_FAILED on %s; nothing was declared\n",
			len(conflicts), plural(len(conflicts)), o.name(), endpoint)
		writeFindings(&b, conflicts)
		if _, err := io.WriteString(stdout, b.String()); err != nil {
			return err
		}
		return &exitError{code: exitDrift}
	}
	var missing, leftovers []admin.Finding
	for _, f := range report.Findings {
		if f.Unplanned() {
			leftovers = append(leftovers, f)
		} else {
			missing = append(missing, f)
		}
	}
	if o.dryRun {
		fmt.Fprintf(&b, "dry run: applying %s to %s would send these %d declarations, in order (%d of them missing there; the rest exist as declared):\n",
			o.name(), endpoint, len(plan), len(missing))
		writeNumbered(&b, plan)
		for _, f := range missing {
			fmt.Fprintf(&b, "missing: %s\n", f.Object)
		}
	} else {
		ctx, cancel := context.WithTimeout(ctx, o.timeout)
		defer cancel()
		conn, err := o.tls.connect(ctx, amqpURL(o.url), "acemq topology apply")
		if err != nil {
			return err
		}
		defer conn.Close()
		if err := t.Apply(ctx, conn); err != nil {
			return err
		}
		fmt.Fprintf(&b, "applied: %d declarations of %s sent to %s (%d of them were missing)\n",
			len(plan), o.name(), endpoint, len(missing))
	}
	for _, f := range leftovers {
		fmt.Fprintf(&b, "left alone: %s: %s\n", f.Object, f.Meaning)
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return err
	}
	return writeWarnings(stderr, t.Warnings())
}
