package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/acemq-go/acemq/console"
)

// The console's credentials, from the environment only: a flag would show
// them in the process list.
const (
	consoleTokenEnv    = "ACEMQ_CONSOLE_TOKEN"
	consoleUserEnv     = "ACEMQ_CONSOLE_USER"
	consolePasswordEnv = "ACEMQ_CONSOLE_PASSWORD"
	// actuatorTokenEnv is the control token of the services' actuators
	// (--service), sent to each.
	actuatorTokenEnv = "ACEMQ_ACTUATOR_TOKEN"
)

func newConsoleCmd() *cobra.Command {
	var (
		o             brokerOptions
		po            previewOptions
		managementURL string
		listen        string
		readOnly      bool
		topology      string
		tlsCert       string
		tlsKey        string
		insecureHTTP  bool
		maxImportMiB  int64
		pageTimeout   time.Duration
		services      []string
	)
	cmd := &cobra.Command{
		Use:   "console [--listen HOST:PORT] [--tls-cert FILE --tls-key FILE] [--url AMQP_URL] [--management-url URL] [--read-only] [--topology FILE]",
		Short: "Serve the dead-letter console: dead letters, replays and drift in a browser",
		Long: `console serves, at --listen (127.0.0.1:8080 by default), pages for what
the dlq verbs and topology diff do: every source queue with a dead-letter
queue or a ladder and what waits in them; a queue's dead letters, counted
by reason class and shown with a decoded preview of their bodies (read
with --keys, --avro-schema, --schema-registry and --claim-store, as dlq show
does); replay, park, purge, export and import, each confirmed first and
followed live; the jobs run since it started (/jobs); and a topology file
(--topology, or an upload) compared with the broker. The moves are the dlq
verbs': each message confirmed at its target before its original is
removed.

The broker is --url, else $ACEMQ_URL, else amqp://guest:guest@localhost:5672/;
its management API --management-url, else $ACEMQ_MANAGEMENT_URL, else the
AMQP host on port 15672.

On a loopback address it needs no credentials. Anywhere else it refuses to
start without them: $` + consoleTokenEnv + ` (a bearer token, or given on the
login page, which starts a session of that browser's own, ended by Sign
out), or $` + consoleUserEnv + ` and $` + consolePasswordEnv + ` (basic
auth); and it refuses to take them over plain HTTP: give it --tls-cert and
--tls-key (HTTPS, with Secure cookies; acemq certs makes development ones),
or listen on a loopback address behind a TLS-terminating proxy, or accept
credentials in clear with --insecure-http (a warning is logged). Wrong
credentials are throttled per client address.

No request from another site is served but a link to the overview; a POST
carries at most 1 MiB of form, an import file at most --max-import-mib
(streamed to a temporary file). --read-only refuses every action that
changes a queue.

--service NAME=URL (again for each) names a service's actuator: the
Consumers page lists its consumers and pauses, resumes and rescales them
(the token of its consumer control, if it has one, is $` + actuatorTokenEnv + `).

Every action (who, what, which queue, how many, the outcome), sign-in,
failed sign-in and sign-out is logged to stderr, one JSON line each (log/slog),
with the requests refused.`,
		Example: `  acemq console
  acemq certs --out ./certs
  ACEMQ_CONSOLE_TOKEN=$(openssl rand -hex 16) acemq console --listen :8443 \
    --tls-cert ./certs/server_certificate.pem --tls-key ./certs/server_key.pem --read-only`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: runE(nil, func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if maxImportMiB < 1 {
				return fmt.Errorf("--max-import-mib %d: want 1 or more", maxImportMiB)
			}
			svcs, err := parseServices(services, os.Getenv(actuatorTokenEnv))
			if err != nil {
				return err
			}
			c := console.Config{Services: svcs, ReadOnly: readOnly, Topology: topology, PageTimeout: pageTimeout, Token: os.Getenv(consoleTokenEnv),
				User: os.Getenv(consoleUserEnv), Password: os.Getenv(consolePasswordEnv),
				TLSCert: tlsCert, TLSKey: tlsKey, InsecureHTTP: insecureHTTP, MaxImport: maxImportMiB << 20,
				Logger: slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil))}
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
			fmt.Fprintf(cmd.OutOrStdout(), "acemq console: %s://%s/ (%s)\n", s.Scheme(), l.Addr(), endpoint)
			return s.Serve(ctx, l)
		}),
	}
	o.addFlags(cmd)
	po.addFlags(cmd)
	cmd.Flags().StringVar(&managementURL, "management-url", "", "the management API, such as http://user:password@host:15672 (default $ACEMQ_MANAGEMENT_URL or the AMQP host on port 15672)")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "serve at `HOST:PORT`; beyond loopback only with credentials, and TLS or --insecure-http")
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "refuse every action that changes a queue")
	cmd.Flags().StringVar(&topology, "topology", "", "a topology `FILE` the drift page compares with the broker")
	cmd.Flags().StringVar(&tlsCert, "tls-cert", "", "serve HTTPS with the certificate (chain) in PEM `FILE`; with --tls-key")
	cmd.Flags().StringVar(&tlsKey, "tls-key", "", "the private key in PEM `FILE` of --tls-cert")
	cmd.Flags().BoolVar(&insecureHTTP, "insecure-http", false, "take credentials over plain HTTP beyond loopback (a TLS-terminating proxy on another machine); logs a warning")
	cmd.Flags().Int64Var(&maxImportMiB, "max-import-mib", console.DefaultMaxImport>>20, "the largest export file an import takes, in MiB (larger: 413)")
	cmd.Flags().StringArrayVar(&services, "service", nil, "a service's actuator, `NAME=URL` (again for each): the Consumers page controls its consumers")
	cmd.Flags().DurationVar(&pageTimeout, "page-timeout", console.DefaultPageTimeout, "a page whose broker has not answered by then says what is wrong instead")
	return cmd
}

// parseServices reads --service NAME=URL flags; token is every actuator's
// control token.
func parseServices(flags []string, token string) ([]console.Service, error) {
	var out []console.Service
	for _, f := range flags {
		name, u, ok := strings.Cut(f, "=")
		if !ok || name == "" || u == "" {
			return nil, fmt.Errorf("--service %q: want NAME=URL, such as orders=http://127.0.0.1:9464", f)
		}
		out = append(out, console.Service{Name: name, URL: u, Token: token})
	}
	return out, nil
}
