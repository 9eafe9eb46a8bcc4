package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/transport"
)

// exitDrift is topology diff's status when the broker differs from the file.
const exitDrift = 1

type diffOptions struct {
	stdin         io.Reader // for file "-"
	file          string
	url           string
	managementURL string
	json          bool
	timeout       time.Duration
}

func newTopologyDiffCmd() *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff -f FILE [--url AMQP_URL] [--management-url URL] [--json]",
		Short: "Compare a topology file with what a broker holds",
		Long: `diff reads what the broker holds through its management HTTP API and lists
every way it differs from the topology file: missing exchanges, queues and
bindings, exchanges and queues declared differently (redeclaring them fails
with PRECONDITION_FAILED), rungs that wait the wrong time or send messages
elsewhere, a missing acemq.retry binding, missing Q.dlq and Q.parked,
rungs no retry policy in the file produces any more, and rungs of the other
kind than the file's (contract or at-least-once) beside its own: a second
ladder for the queue. It changes nothing.

The vhost is the AMQP URL's (--url, else $ACEMQ_URL, else
amqp://guest:guest@localhost:5672/). The management API is at
--management-url (else $ACEMQ_MANAGEMENT_URL, else the AMQP host on port
15672), with that URL's credentials or else the AMQP URL's.

Exit status: 0 in sync, 1 when there is drift, 2 on any error (a file that
does not read or validate, a management API that does not answer).`,
		Example: `  acemq topology diff -f examples/topology.yaml
  acemq topology diff -f examples/topology.yaml --url amqp://app:secret@rabbit:5672/shop --json`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: runE(nil, func(cmd *cobra.Command, _ []string) error {
			o.stdin = cmd.InOrStdin()
			return runDiff(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		}),
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return cmd
}

// addFlags adds the flags diff and apply share: the file, the broker and
// the timeout.
func (o *diffOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.file, "file", "f", "", "the topology `FILE` (YAML); - for the standard input")
	cmd.Flags().StringVar(&o.url, "url", "", "the broker's AMQP `URL`, for its vhost and credentials (default $ACEMQ_URL or amqp://guest:guest@localhost:5672/)")
	cmd.Flags().StringVar(&o.managementURL, "management-url", "", "the management API, such as http://user:password@host:15672 (default $ACEMQ_MANAGEMENT_URL or the AMQP host on port 15672)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 30*time.Second, "how long to wait for the broker")
	_ = cmd.MarkFlagRequired("file")
}

func runDiff(ctx context.Context, stdout, stderr io.Writer, o diffOptions) error {
	t, plan, endpoint, report, err := diffFile(ctx, o)
	if err != nil {
		return err
	}
	if o.json {
		if report.Findings == nil {
			report.Findings = []admin.Finding{}
		}
		if err := writeJSON(stdout, struct {
			Broker string `json:"broker"`
			Vhost  string `json:"vhost"`
			InSync bool   `json:"inSync"`
			admin.Report
			Warnings []string `json:"warnings"`
		}{endpoint.URL, endpoint.Vhost, report.InSync(), report, append([]string{}, t.Warnings()...)}); err != nil {
			return err
		}
	} else {
		if _, err := io.WriteString(stdout, formatReport(o.name(), endpoint, len(plan), report)); err != nil {
			return err
		}
		if err := writeWarnings(stderr, t.Warnings()); err != nil {
			return err
		}
	}
	if !report.InSync() {
		return &exitError{code: exitDrift}
	}
	return nil
}

// diffFile reads and validates the topology file and compares its plan with
// the broker.
func diffFile(ctx context.Context, o diffOptions) (acemq.Topology, []transport.Declaration, admin.Endpoint, admin.Report, error) {
	var none admin.Report
	t, err := readTopology(o.stdin, o.file)
	if err != nil {
		return t, nil, admin.Endpoint{}, none, err
	}
	plan, err := t.Plan()
	var invalid *acemq.ValidationError
	if errors.As(err, &invalid) {
		// Exit 1 means drift here, so an invalid file is an error (2).
		return t, nil, admin.Endpoint{}, none, fmt.Errorf("invalid topology\n  - %s", strings.Join(invalid.Problems, "\n  - "))
	}
	if err != nil {
		return t, nil, admin.Endpoint{}, none, err
	}
	endpoint, err := managementEndpoint(o.url, o.managementURL)
	if err != nil {
		return t, nil, admin.Endpoint{}, none, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	live, err := admin.Read(ctx, endpoint)
	if err != nil {
		return t, nil, endpoint, none, err
	}
	return t, plan, endpoint, admin.Diff(plan, live), nil
}

// name is the file's name in a report.
func (o diffOptions) name() string {
	if o.file == "-" {
		return "the standard input"
	}
	return o.file
}

// amqpURL is the --url flag's value, else $ACEMQ_URL, else the local
// default: the broker every verb that reaches one uses.
func amqpURL(flag string) string {
	return orDefault(flag, os.Getenv("ACEMQ_URL"), "amqp://guest:guest@localhost:5672/")
}

// managementEndpoint is the management API of the broker at the --url
// flag's AMQP URL: the --management-url flag's, else
// $ACEMQ_MANAGEMENT_URL, else found from the AMQP URL (admin.EndpointFor).
func managementEndpoint(urlFlag, managementFlag string) (admin.Endpoint, error) {
	return admin.EndpointFor(amqpURL(urlFlag), orDefault(managementFlag, os.Getenv("ACEMQ_MANAGEMENT_URL")))
}

func formatReport(file string, endpoint admin.Endpoint, declarations int, r admin.Report) string {
	if r.InSync() {
		return fmt.Sprintf("in sync: %s holds all %d declarations of %s\n", endpoint, declarations, file)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "drift: %s differs from %s in %d way%s\n", endpoint, file, len(r.Findings), plural(len(r.Findings)))
	writeFindings(&b, r.Findings)
	return b.String()
}

// writeFindings lists findings, numbered, with what they mean and what to do.
func writeFindings(b *strings.Builder, findings []admin.Finding) {
	for i, f := range findings {
		fmt.Fprintf(b, "\n%d. %s: %s\n", i+1, f.Kind, f.Object)
		for _, d := range f.Differences {
			fmt.Fprintf(b, "   - %s\n", d)
		}
		fmt.Fprintf(b, "   means: %s\n   do:    %s\n", f.Meaning, f.Action)
	}
}

// orDefault is the first of values that is not "".
func orDefault(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
