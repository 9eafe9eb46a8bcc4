package main

import (
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/acemq-go/acemq/internal/console"
)

// The console's credentials, from the environment only: a flag would show
// them in the process list.
const (
	consoleTokenEnv    = "ACEMQ_CONSOLE_TOKEN"
	consoleUserEnv     = "ACEMQ_CONSOLE_USER"
	consolePasswordEnv = "ACEMQ_CONSOLE_PASSWORD"
)

func newConsoleCmd() *cobra.Command {
	var (
		o             brokerOptions
		po            previewOptions
		managementURL string
		listen        string
		readOnly      bool
		topology      string
		pageTimeout   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "console [--listen HOST:PORT] [--url AMQP_URL] [--management-url URL] [--read-only] [--topology FILE]",
		Short: "Serve the dead-letter console: dead letters, replays and drift in a browser",
		Long: `console serves, at --listen (127.0.0.1:8080 by default), pages for what
the dlq verbs and topology diff do: every source queue with a dead-letter
queue or a ladder and what waits in them; a queue's dead letters, counted
by reason class and shown with a decoded preview of their bodies (read
with --keys, --avro-schema, --schema-registry and --claim-store, as dlq show
does); replay, park, purge, export and import, each confirmed first and
followed live; and a topology file (--topology, or an upload) compared with
the broker. The moves are the dlq verbs': each message confirmed at its
target before its original is removed.

The broker is --url, else $ACEMQ_URL, else amqp://guest:guest@localhost:5672/;
its management API --management-url, else $ACEMQ_MANAGEMENT_URL, else the
AMQP host on port 15672.

On a loopback address it needs no credentials. Anywhere else it refuses to
start without them: $` + consoleTokenEnv + ` (a bearer token, or given on the
login page), or $` + consoleUserEnv + ` and $` + consolePasswordEnv + ` (basic
auth). --read-only refuses every action that changes a queue.`,
		Example: `  acemq console
  ACEMQ_CONSOLE_TOKEN=$(openssl rand -hex 16) acemq console --listen :8080 --read-only`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: runE(nil, func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c := console.Config{ReadOnly: readOnly, Topology: topology, PageTimeout: pageTimeout, Token: os.Getenv(consoleTokenEnv),
				User: os.Getenv(consoleUserEnv), Password: os.Getenv(consolePasswordEnv)}
			// Refused before anything connects.
			if err := console.CheckListen(listen, c); err != nil {
				return err
			}
			endpoint, err := managementEndpoint(o.url, managementURL)
			if err != nil {
				return err
			}
			bodies, closeBodies, err := po.open(ctx)
			if err != nil {
				return err
			}
			defer closeBodies()
			conn, err := o.connect(ctx, "console")
			if err != nil {
				return err
			}
			defer conn.Close()
			c.Conn, c.Endpoint, c.Bodies = conn, endpoint, bodies
			s, err := console.New(c)
			if err != nil {
				return err
			}
			defer s.Close()
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "acemq console: http://%s/ (%s)\n", l.Addr(), endpoint)
			return s.Serve(ctx, l)
		}),
	}
	o.addFlags(cmd)
	po.addFlags(cmd)
	cmd.Flags().StringVar(&managementURL, "management-url", "", "the management API, such as http://user:password@host:15672 (default $ACEMQ_MANAGEMENT_URL or the AMQP host on port 15672)")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "serve at `HOST:PORT`; beyond loopback only with credentials")
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "refuse every action that changes a queue")
	cmd.Flags().StringVar(&topology, "topology", "", "a topology `FILE` the drift page compares with the broker")
	cmd.Flags().DurationVar(&pageTimeout, "page-timeout", console.DefaultPageTimeout, "a page whose broker has not answered by then says what is wrong instead")
	return cmd
}
