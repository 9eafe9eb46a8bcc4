package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/transport/memory"
	"github.com/acemq-go/acemq/transport/rabbitmq"
)

// The environment of tlsFlags.
const (
	caEnv            = "ACEMQ_CA"
	allowDevCertsEnv = "ACEMQ_ALLOW_DEV_CERTS"
)

// tlsFlags are the TLS flags of the verbs that connect over AMQP.
type tlsFlags struct {
	ca            string
	allowDevCerts bool
}

func (f *tlsFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.ca, "ca", "", "trust only the CA certificates in `FILE` for an amqps:// broker (default $"+caEnv+", else the system's CAs)")
	cmd.Flags().BoolVar(&f.allowDevCerts, "allow-dev-certs", false, "accept a broker certificate marked as a development certificate (acemq certs), refused otherwise; for local work only (or $"+allowDevCertsEnv+"=true)")
}

// options are the flags' connect options, each flag else its environment
// variable.
func (f tlsFlags) options() ([]acemq.ConnectOption, error) {
	var opts []acemq.ConnectOption
	if ca := orDefault(f.ca, os.Getenv(caEnv)); ca != "" {
		opts = append(opts, acemq.WithCA(ca))
	}
	allow := f.allowDevCerts
	if v := os.Getenv(allowDevCertsEnv); !allow && v != "" {
		var err error
		if allow, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("%s=%q: use true or false", allowDevCertsEnv, v)
		}
	}
	if allow {
		opts = append(opts, acemq.WithDevelopmentCertificates())
	}
	return opts, nil
}

// connect opens the broker at rawURL with the TLS flags: memory://NAME
// has none.
func (f tlsFlags) connect(ctx context.Context, rawURL, name string, opts ...acemq.ConnOption) (*acemq.Conn, error) {
	var tlsOpts []acemq.ConnectOption
	if !strings.HasPrefix(rawURL, "memory://") {
		var err error
		if tlsOpts, err = f.options(); err != nil {
			return nil, err
		}
	}
	return connect(ctx, rawURL, name, opts, tlsOpts...)
}

// connect opens the broker at rawURL: memory://NAME is the in-process
// broker, which the command links and a service need not; anything else is
// RabbitMQ's, for acemq.Connect, named name in its management UI. opts
// configure the Conn on either; dial, only a RabbitMQ connection.
func connect(ctx context.Context, rawURL, name string, opts []acemq.ConnOption, dial ...acemq.ConnectOption) (*acemq.Conn, error) {
	if u, err := url.Parse(rawURL); err == nil && u.Scheme != "memory" && u.Scheme != "amqp" && u.Scheme != "amqps" {
		return nil, fmt.Errorf("acemq: connect to %s: the scheme %q is not supported; use amqp://, amqps:// or memory://NAME", rabbitmq.RedactURL(rawURL), u.Scheme)
	}
	if strings.HasPrefix(rawURL, "memory://") {
		t, err := memory.Dial(ctx, rawURL)
		if err != nil {
			return nil, err
		}
		return acemq.New(t, opts...)
	}
	if name != "" {
		dial = append(dial, acemq.WithConnectionName(name))
	}
	for _, o := range opts {
		dial = append(dial, o)
	}
	conn, err := acemq.Connect(ctx, rawURL, dial...)
	if errors.Is(err, rabbitmq.ErrDevelopmentCertificate) {
		return nil, fmt.Errorf("%w; for this command: --allow-dev-certs or %s=true", err, allowDevCertsEnv)
	}
	return conn, err
}
