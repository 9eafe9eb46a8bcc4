package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/devcert"
)

// defaultCertsDir is where `acemq certs` writes without --out.
const defaultCertsDir = "acemq-dev-certs"

func newCertsCmd() *cobra.Command {
	var (
		out   string
		force bool
		hosts []string
	)
	cmd := &cobra.Command{
		Use:   "certs",
		Short: "Make development TLS certificates for a local RabbitMQ",
		Long: `certs makes a CA, a broker (server) certificate and a client certificate for
local work, into --out (default ./` + defaultCertsDir + `), named as RabbitMQ's
ssl_options name them, and prints the rabbitmq.conf lines that use them.

Every certificate carries "` + contract.DevelopmentCertificateMarker + `" in its
subject (O), and every AceMQ library refuses a broker certificate that
carries it, even with verification off, unless development certificates
are allowed: acemq.WithDevelopmentCertificates() in Go, --allow-dev-certs
(or ACEMQ_ALLOW_DEV_CERTS=true) for this command's connections.

The keys are ECDSA P-256; the certificates are valid for ` + fmt.Sprint(devcert.Validity.Hours()/24) + ` days; the
broker's for localhost, 127.0.0.1, ::1 and each --host. The CA's key is not
kept, so nothing else can be signed by it: run certs again (with --force)
for new ones. Files already there are replaced only with --force.`,
		Example: `  acemq certs
  acemq certs --out /tmp/rabbit-tls --host rabbit.dev.test --host 192.168.1.20`,
		Args: cobra.NoArgs,
		RunE: runE(nil, func(cmd *cobra.Command, _ []string) error {
			set, err := devcert.Generate(hosts, time.Now())
			if err != nil {
				return errors.New(strings.TrimPrefix(err.Error(), "devcert: "))
			}
			dir, err := filepath.Abs(out)
			if err != nil {
				return err
			}
			if _, err := set.Write(dir, force); err != nil {
				if exists, ok := errors.AsType[*devcert.ExistsError](err); ok {
					return fmt.Errorf("%s already holds %s; give --force to replace them, or another --out", exists.Dir, strings.Join(exists.Names, ", "))
				}
				return errors.New(strings.TrimPrefix(err.Error(), "devcert: "))
			}
			return printCerts(cmd.OutOrStdout(), dir, set)
		}),
	}
	cmd.Flags().StringVar(&out, "out", defaultCertsDir, "the `DIR` to write the files into (made if missing)")
	cmd.Flags().BoolVar(&force, "force", false, "replace the files if DIR holds them already")
	cmd.Flags().StringSliceVar(&hosts, "host", nil, "a further DNS name or IP address the broker certificate is valid for (repeat it, or separate with commas)")
	return cmd
}

// printCerts says where the files are, the rabbitmq.conf lines that use
// them and how to connect.
func printCerts(w io.Writer, dir string, set *devcert.Set) error {
	path := func(name string) string { return filepath.Join(dir, name) }
	var b strings.Builder
	fmt.Fprintf(&b, "development certificates in %s\n", dir)
	fmt.Fprintf(&b, "  valid until %s, for %s\n", set.NotAfter.Format(time.DateOnly), strings.Join(set.Hosts, ", "))
	fmt.Fprintf(&b, "  marked %q: AceMQ refuses them unless development certificates are allowed\n\n", contract.DevelopmentCertificateMarker)
	for _, f := range []struct{ name, what string }{
		{devcert.CAFile, "the CA that signed the two others (its key is not kept)"},
		{devcert.ServerCertFile, "the broker's certificate"},
		{devcert.ServerKeyFile, "the broker's key (0600)"},
		{devcert.ClientCertFile, "a client certificate, CN " + devcert.ClientName},
		{devcert.ClientKeyFile, "the client's key (0600)"},
	} {
		fmt.Fprintf(&b, "  %-24s %s\n", f.name, f.what)
	}
	fmt.Fprintf(&b, "\nrabbitmq.conf (an amqps:// listener on 5671; a client certificate is checked if one is presented):\n")
	for _, line := range rabbitMQConf(dir, 5671) {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	fmt.Fprintf(&b, "\nconnect from Go:\n")
	fmt.Fprintf(&b, "  acemq.Connect(ctx, \"amqps://guest:guest@localhost:5671/\",\n")
	fmt.Fprintf(&b, "      acemq.WithCA(%q),\n", path(devcert.CAFile))
	fmt.Fprintf(&b, "      acemq.WithClientCertificate(%q, %q),\n", path(devcert.ClientCertFile), path(devcert.ClientKeyFile))
	fmt.Fprintf(&b, "      acemq.WithDevelopmentCertificates())\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// rabbitMQConf is a TLS listener on port with the files in dir: the
// broker's certificate, and the CA to check a client's (verify_peer), which
// a client need not present (fail_if_no_peer_cert = false: a user name and
// password do, as over amqp://). scripts/rabbitmq.sh writes the same lines
// for its TLS node.
func rabbitMQConf(dir string, port int) []string {
	return []string{
		fmt.Sprintf("listeners.ssl.default = %d", port),
		"ssl_options.cacertfile = " + filepath.Join(dir, devcert.CAFile),
		"ssl_options.certfile = " + filepath.Join(dir, devcert.ServerCertFile),
		"ssl_options.keyfile = " + filepath.Join(dir, devcert.ServerKeyFile),
		"ssl_options.verify = verify_peer",
		"ssl_options.fail_if_no_peer_cert = false",
	}
}
