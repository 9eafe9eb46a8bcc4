package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/topologyfile"
	"github.com/acemq-go/acemq/transport"
)

func newTopologyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topology",
		Short: "Review what a topology file declares",
		// Runnable, so that an unknown subcommand is refused, not met with help.
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newTopologyPlanCmd(), newTopologyDiffCmd(), newTopologyApplyCmd())
	return cmd
}

func newTopologyPlanCmd() *cobra.Command {
	var (
		file    string
		jsonOut bool
	)
	cmd := &cobra.Command{
		Use:   "plan -f FILE [--json]",
		Short: "Print the declarations a topology file makes, in order",
		Long: `plan reads a topology file and prints every declaration applying it makes,
in order: exchanges, then queues (dead-letter queues and retry rungs
included), then bindings. A topology that does not validate prints every
problem and exits with status 1. What validates but can lose messages (a
quorum queue with contract rungs) is printed as a warning on the standard
error. FILE "-" is the standard input.`,
		Example: `  acemq topology plan -f examples/topology.yaml
  acemq topology plan -f examples/topology.yaml --json`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: runE(nil, func(cmd *cobra.Command, _ []string) error {
			t, err := readTopology(cmd.InOrStdin(), file)
			if err != nil {
				return err
			}
			return runPlan(cmd.OutOrStdout(), cmd.ErrOrStderr(), t, jsonOut)
		}),
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the topology `FILE` (YAML); - for the standard input")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// readTopology reads the topology file at path, or the standard input when
// path is "-".
func readTopology(stdin io.Reader, path string) (acemq.Topology, error) {
	if path != "-" {
		return topologyfile.Read(path)
	}
	data, err := io.ReadAll(stdin)
	if err != nil {
		return acemq.Topology{}, fmt.Errorf("reading the topology from the standard input: %w", err)
	}
	t, err := topologyfile.Parse(data)
	var perr *topologyfile.Error
	if errors.As(err, &perr) {
		perr.Path = "(standard input)"
	}
	return t, err
}

func runPlan(stdout, stderr io.Writer, t acemq.Topology, jsonOut bool) error {
	plan, err := t.Plan()
	var invalid *acemq.ValidationError
	switch {
	case errors.As(err, &invalid):
		if jsonOut {
			if err := writeJSON(stdout, struct {
				Problems []string `json:"problems"`
			}{invalid.Problems}); err != nil {
				return err
			}
		} else {
			var b strings.Builder
			b.WriteString("acemq: invalid topology\n")
			for _, p := range invalid.Problems {
				fmt.Fprintf(&b, "  - %s\n", p)
			}
			if _, err := io.WriteString(stderr, b.String()); err != nil {
				return err
			}
		}
		return &exitError{code: exitInvalid}
	case err != nil:
		return err
	}
	warnings := t.Warnings()
	if jsonOut {
		return writeJSON(stdout, struct {
			Declarations []transport.Declaration `json:"declarations"`
			Warnings     []string                `json:"warnings"`
		}{append([]transport.Declaration{}, plan...), append([]string{}, warnings...)})
	}
	var b strings.Builder
	writeNumbered(&b, plan)
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return err
	}
	return writeWarnings(stderr, warnings)
}

// writeWarnings writes each warning on a line of its own.
func writeWarnings(w io.Writer, warnings []string) error {
	var b strings.Builder
	for _, warning := range warnings {
		fmt.Fprintf(&b, "acemq: warning: %s\n", warning)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
