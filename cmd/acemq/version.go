package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of acemq",
		Args:  cobra.NoArgs,
		RunE: runE(nil, func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "acemq %s\n", version())
			return err
		}),
	}
}

// version is the module's version as the build recorded it (v1.2.3 when
// installed with go install ...@v1.2.3), "(devel)" for a build from a
// checkout.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
