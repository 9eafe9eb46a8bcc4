package acemq

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/rabbitmq"
)

// The transport errors, matched with errors.Is on what Publish, Consume and
// declarations return.
var (
	ErrUnroutable         = transport.ErrUnroutable
	ErrRefused            = transport.ErrRefused
	ErrBlocked            = transport.ErrBlocked
	ErrNotFound           = transport.ErrNotFound
	ErrPreconditionFailed = transport.ErrPreconditionFailed
	ErrClosed             = transport.ErrClosed
	ErrNotConfirmed       = transport.ErrNotConfirmed
	// ErrStaleDelivery: a RawDelivery's channel is gone, so it can no
	// longer be settled; the broker delivers the message again.
	ErrStaleDelivery = transport.ErrStaleDelivery
)

// Conn is a connection to a broker, shared by publishers and consumers. It
// recovers from a lost connection by itself: consumers consume again, with
// their ladders declared first, without anything done by the caller.
type Conn struct {
	transport transport.Transport
	url       string // redacted: it may be logged and printed
	logger    *slog.Logger
	clock     transport.Clock
	observer  Observer
	// The Conn's interceptors, run before a Publisher's or a consumer's.
	publishChain, consumeChain []Interceptor
	consumers                  openConsumers // started and not yet closed
	capabilities               capabilities  // what the service used through it
	closed                     atomic.Bool   // Close was called
	draining                   atomic.Bool   // Shutdown was called
}

// Credentials supply a username and password on every connect and reconnect,
// so that rotated secrets are picked up.
type Credentials func(ctx context.Context) (username, password string, err error)

// CredentialsFromEnv reads the username and password from two environment
// variables on every connect.
func CredentialsFromEnv(usernameVar, passwordVar string) Credentials {
	return func(context.Context) (string, string, error) {
		user, pass := os.Getenv(usernameVar), os.Getenv(passwordVar)
		if user == "" {
			return "", "", fmt.Errorf("credentials: the environment variable %s is empty", usernameVar)
		}
		return user, pass, nil
	}
}

// CredentialsFromFiles reads the username and password from two files (as
// Kubernetes and Docker mount secrets) on every connect; surrounding white
// space is trimmed.
func CredentialsFromFiles(usernameFile, passwordFile string) Credentials {
	return func(context.Context) (string, string, error) {
		user, err := os.ReadFile(usernameFile)
		if err != nil {
			return "", "", fmt.Errorf("credentials: %w", err)
		}
		pass, err := os.ReadFile(passwordFile)
		if err != nil {
			return "", "", fmt.Errorf("credentials: %w", err)
		}
		return strings.TrimSpace(string(user)), strings.TrimSpace(string(pass)), nil
	}
}

// Connect opens a connection to the RabbitMQ broker at rawURL, amqp:// or
// amqps://. The password, whether in the URL or from Credentials, never
// appears in an error, a log line or String. For any other broker, such as
// the in-process one of package transport/memory, open its transport and
// pass it to New: a program that only uses RabbitMQ never links the others.
func Connect(ctx context.Context, rawURL string, opts ...ConnectOption) (*Conn, error) {
	redacted := rabbitmq.RedactURL(rawURL)
	var all options
	if err := configure(&all, opts, ConnectOption.connectSetting, "connect to "+redacted); err != nil {
		return nil, err
	}
	o := withConnDefaults(all.conn)
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("acemq: connect: the URL %s does not parse", redacted)
	}
	switch u.Scheme {
	case "amqp", "amqps":
	case "memory":
		return nil, fmt.Errorf("acemq: connect to %s: memory:// is the in-process broker, which Connect does not link: "+
			"pass memory.NewBroker().Connect() (or memory.Dial(ctx, url)) from package transport/memory to acemq.New", redacted)
	default:
		return nil, fmt.Errorf("acemq: connect to %s: the scheme %q is not supported; use amqp:// or amqps://", redacted, u.Scheme)
	}
	t, err := o.dialRabbitMQ(ctx, rawURL)
	if err != nil {
		return nil, fmt.Errorf("acemq: %w", err)
	}
	return newConn(t, redacted, o), nil
}

// New makes a Conn on a transport the caller opened, as River takes a
// driver: the in-process broker (memory.NewBroker().Connect()), or any other
// transport.Transport. The Conn owns t: closing the Conn closes it. The
// options that configure a RabbitMQ connection (TLS, credentials, fallback
// URLs, the connection name) are ConnectOptions, which New does not take.
func New(t transport.Transport, opts ...ConnOption) (*Conn, error) {
	if t == nil {
		return nil, errors.New("acemq: new: the transport is nil")
	}
	var all options
	if err := configure(&all, opts, ConnOption.connSetting, "new on "+t.String()); err != nil {
		return nil, err
	}
	return newConn(t, t.String(), withConnDefaults(all.conn)), nil
}

// withConnDefaults fills what o's options left unset: no logging, the
// system clock, no observer.
func withConnDefaults(o connectOptions) connectOptions {
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	if o.clock == nil {
		o.clock = transport.SystemClock
	}
	if o.observer == nil {
		o.observer = NopObserver{}
	}
	return o
}

func newConn(t transport.Transport, redactedURL string, o connectOptions) *Conn {
	c := &Conn{transport: t, url: redactedURL, logger: o.logger, clock: o.clock, observer: o.observer,
		publishChain: o.publishChain, consumeChain: o.consumeChain}
	t.Notify(c.connectionEvent)
	return c
}

func (o connectOptions) dialRabbitMQ(ctx context.Context, rawURL string) (transport.Transport, error) {
	opts, err := o.rabbitMQOptions()
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", rabbitmq.RedactURL(rawURL), err)
	}
	return rabbitmq.Dial(ctx, rawURL, opts)
}

// rabbitMQOptions are the transport's options from the Connect options.
func (o connectOptions) rabbitMQOptions() (rabbitmq.Options, error) {
	tlsConfig, err := o.tlsConfig()
	if err != nil {
		return rabbitmq.Options{}, err
	}
	return rabbitmq.Options{
		TLS:            tlsConfig,
		Credentials:    o.credentials,
		Logger:         o.logger,
		ConnectionName: o.name,
		Addresses:      slices.Clone(o.fallbacks),

		AllowDevelopmentCertificates: o.devCerts,
	}, nil
}

// tlsConfig builds the TLS configuration from the options; nil when none
// was given (amqps:// then trusts the system pool).
func (o connectOptions) tlsConfig() (*tls.Config, error) {
	if o.tls == nil && o.caFile == "" && o.certFile == "" && o.serverName == "" {
		return nil, nil
	}
	cfg := o.tls
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if o.caFile != "" {
		pem, err := os.ReadFile(o.caFile)
		if err != nil {
			return nil, fmt.Errorf("reading the CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the CA file %s holds no PEM certificate", o.caFile)
		}
		cfg.RootCAs = pool
	}
	if o.certFile != "" || o.keyFile != "" {
		cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
		if err != nil {
			return nil, fmt.Errorf("loading the client certificate: %w", err)
		}
		cfg.Certificates = append(cfg.Certificates, cert)
	}
	if o.serverName != "" {
		cfg.ServerName = o.serverName
	}
	return cfg, nil
}

// connectionEvent passes the transport's connection events to the
// observer; the transport logs them itself.
func (c *Conn) connectionEvent(e transport.Event) {
	var kind EventKind
	switch e.Kind {
	case transport.EventLost:
		kind = EventConnectionLost
	case transport.EventRecovered:
		kind = EventConnectionRecovered
	case transport.EventBlocked:
		kind = EventConnectionBlocked
	case transport.EventUnblocked:
		kind = EventConnectionUnblocked
	default:
		return
	}
	c.observer.Event(Event{Kind: kind, Conn: c, Address: e.Address, Reason: e.Reason, Err: e.Err})
}

// Transport is the driver underneath the Conn: the escape hatch to the SPI,
// for what must talk to the driver itself (a transport's conformance suite,
// a test that breaks the connection on purpose). What goes through it is not
// observed and does not use the confirmed-publish pipeline: a service uses
// the Conn's own methods (Publish, Get, Take, InspectQueue, PurgeQueue,
// DeleteQueue, State) instead.
func (c *Conn) Transport() transport.Transport { return c.transport }

// String names the broker address in use (after a failover, the node
// followed to), without the password.
func (c *Conn) String() string { return "acemq.Conn(" + c.address() + ")" }

// address is the transport's address in use, or the URL the Conn was made
// with when the transport does not say.
func (c *Conn) address() string { return cmp.Or(c.transport.State().Address, c.url) }

// Close closes the connection. Close consumers first, so that they can hand
// back what they hold. Closing again does nothing and returns nil.
func (c *Conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	err := c.transport.Close()
	c.observer.Event(Event{Kind: EventConnectionClosed, Conn: c})
	if err != nil {
		return fmt.Errorf("acemq: closing %s: %w", c.address(), err)
	}
	return nil
}
