package acemq

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/option"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/rabbitmq"
)

type options struct {
	conn connectOptions
	pub  publisherOptions
	cons consumeOptions
}

type connectOptions struct {
	tls         *tls.Config
	caFile      string
	certFile    string
	keyFile     string
	serverName  string
	devCerts    bool // WithDevelopmentCertificates
	credentials Credentials
	logger      *slog.Logger
	name        string
	clock       transport.Clock
	fallbacks   []string
	observer    Observer
	// The interceptors of every publish and delivery of the Conn.
	publishChain, consumeChain []Interceptor
}

type publisherOptions struct {
	codec   Codec
	timeout time.Duration
	window  int
	origin  string
	chain   []Interceptor
}

type consumeOptions struct {
	policy       RetryPolicy
	rungs        contract.RungKind // "" when WithRungs chose none: the default
	prefetch     int
	concurrency  int
	tag          string
	id           string // WithConsumerID
	drainTimeout time.Duration
	codec        Codec
	random       func() float64
	backoff      time.Duration
	chain        []Interceptor
	appendOnly   *AppendOnly    // WithAppendOnly
	inPlace      bool           // WithRetryInPlace
	breaker      *breakerConfig // WithCircuitBreaker
	// handlerTimeout is WithHandlerTimeout's; 0: none.
	handlerTimeout time.Duration
}

// ErrInvalidOption is matched (errors.Is) by every option whose value is out
// of range.
var ErrInvalidOption = errors.New("invalid option")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
}

// The options of a Conn.

// WithTLS sets the whole TLS configuration of an amqps:// connection.
// WithCA, WithClientCertificate and WithServerName adjust it.
func WithTLS(cfg *tls.Config) ConnectOption {
	return connectOption(option.Named("WithTLS", func(o *options) error {
		if cfg == nil {
			return invalid("the TLS configuration is nil")
		}
		o.conn.tls = cfg.Clone()
		return nil
	}))
}

// WithCA trusts only the certificates in pemFile for the broker's
// certificate: the CA replaces the system pool.
func WithCA(pemFile string) ConnectOption {
	return connectOption(option.Named("WithCA", func(o *options) error {
		if pemFile == "" {
			return invalid("the CA file name is empty")
		}
		o.conn.caFile = pemFile
		return nil
	}))
}

// WithClientCertificate presents a client certificate (PEM files).
func WithClientCertificate(certFile, keyFile string) ConnectOption {
	return connectOption(option.Named("WithClientCertificate", func(o *options) error {
		if certFile == "" || keyFile == "" {
			return invalid("the certificate file %q and the key file %q must both be named", certFile, keyFile)
		}
		o.conn.certFile, o.conn.keyFile = certFile, keyFile
		return nil
	}))
}

// WithServerName checks the broker's certificate against name rather than
// the URL's host.
func WithServerName(name string) ConnectOption {
	return connectOption(option.Named("WithServerName", func(o *options) error {
		if name == "" {
			return invalid("the server name is empty")
		}
		o.conn.serverName = name
		return nil
	}))
}

// WithDevelopmentCertificates accepts a broker certificate marked as made
// for local work (contract.DevelopmentCertificateMarker in its subject or
// its issuer, as `acemq certs` makes them), which Connect otherwise
// refuses, even with verification off (InsecureSkipVerify), so that a
// development certificate never serves a real deployment unnoticed. It
// only lifts that refusal: the certificate is still verified as the TLS
// options say (trust the development CA with WithCA). For local work only.
func WithDevelopmentCertificates() ConnectOption {
	return connectOption(option.Named("WithDevelopmentCertificates", func(o *options) error {
		o.conn.devCerts = true
		return nil
	}))
}

// WithCredentials takes the username and password from c on every connect,
// instead of from the URL.
func WithCredentials(c Credentials) ConnectOption {
	return connectOption(option.Named("WithCredentials", func(o *options) error {
		if c == nil {
			return invalid("the credentials are nil")
		}
		o.conn.credentials = c
		return nil
	}))
}

// WithConnectionName names the connection in the broker's management UI.
func WithConnectionName(name string) ConnectOption {
	return connectOption(option.Named("WithConnectionName", func(o *options) error {
		o.conn.name = name
		return nil
	}))
}

// WithFallbackURLs gives further broker URLs (amqp:// or amqps://), the
// other nodes of a cluster: the first connect and every reconnect try the
// Connect URL and these in turn, starting after the address that last
// worked, and back off only after all of them failed. TLS, credentials and
// the connection name apply to each.
func WithFallbackURLs(urls ...string) ConnectOption {
	return connectOption(option.Named("WithFallbackURLs", func(o *options) error {
		for _, u := range urls {
			if !strings.HasPrefix(u, "amqp://") && !strings.HasPrefix(u, "amqps://") {
				return invalid("%s is not an amqp:// or amqps:// URL", rabbitmq.RedactURL(u))
			}
		}
		o.conn.fallbacks = append(o.conn.fallbacks, urls...)
		return nil
	}))
}

// WithLogger logs connection events (lost, recovered, blocked) and every
// message set aside to l. Nothing is logged per successful message.
func WithLogger(l *slog.Logger) ConnOption {
	return connOption(option.Named("WithLogger", func(o *options) error {
		if l == nil {
			return invalid("the logger is nil")
		}
		o.conn.logger = l
		return nil
	}))
}

// WithClock sets the time source of the connection's publishers
// (first-seen) and consumers (waits, ages, the drain timeout). Tests on
// memory:// pass the broker's manual clock (acemqtest does), so that
// consumer waits and rung expiries move together.
func WithClock(c Clock) ConnOption {
	return connOption(option.Named("WithClock", func(o *options) error {
		if c == nil {
			return invalid("the clock is nil")
		}
		o.conn.clock = c
		return nil
	}))
}

// WithObserver has o told what the Conn, its publishers and its consumers
// do (see Observer). Several are combined with Observers.
func WithObserver(obs Observer) ConnOption {
	return connOption(option.Named("WithObserver", func(o *options) error {
		if obs == nil {
			return invalid("the observer is nil")
		}
		o.conn.observer = obs
		return nil
	}))
}

// The options of a Publisher and a consumer.

// WithCodec encodes a Publisher's bodies, or decodes a consumer's, with c
// instead of the default: Bytes for []byte, Text for string, JSON for
// everything else.
func WithCodec(c Codec) CodecOption {
	return CodecOption{option.Named("WithCodec", func(o *options) error {
		if c == nil {
			return invalid("the codec is nil")
		}
		o.pub.codec, o.cons.codec = c, c
		return nil
	})}
}

// WithConfirmTimeout bounds each publish whose context has no deadline
// (default DefaultConfirmTimeout).
func WithConfirmTimeout(d time.Duration) PublisherOption {
	return publisherOption(option.Named("WithConfirmTimeout", func(o *options) error {
		if d <= 0 {
			return invalid("the confirm timeout is %s but must be above 0", d)
		}
		o.pub.timeout = d
		return nil
	}))
}

// WithBatchWindow sets how many publishes of a PublishBatch are in flight at
// once (default DefaultBatchWindow).
func WithBatchWindow(n int) PublisherOption {
	return publisherOption(option.Named("WithBatchWindow", func(o *options) error {
		if n < 1 {
			return invalid("the batch window is %d but must be at least 1", n)
		}
		o.pub.window = n
		return nil
	}))
}

// WithOrigin names the publishing service: x-acemq-origin becomes
// "service@host".
func WithOrigin(service string) PublisherOption {
	return publisherOption(option.Named("WithOrigin", func(o *options) error {
		if strings.TrimSpace(service) == "" || strings.Contains(service, "@") {
			return invalid("the service name %q is empty or holds an @", service)
		}
		o.pub.origin = service + "@" + hostname()
		return nil
	}))
}

// hostname is the host part of an origin.
func hostname() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "unknown"
	}
	return host
}

// WithPolicy sets the retry policy (default NoRetry: give up on the first
// failure).
func WithPolicy(p RetryPolicy) ConsumeOption {
	return consumeOption(option.Named("WithPolicy", func(o *options) error {
		if err := p.Validate(); err != nil {
			return err
		}
		o.cons.policy = p
		return nil
	}))
}

// WithRungs chooses the kind of the retry ladder's rungs. The default,
// contract.AtLeastOnceRungs (contract.DefaultRungKind), loses nothing when
// the broker restarts or a quorum leader fails over; contract.ContractRungs
// are the family's classic rungs, for a queue whose ladder must be the one
// other AceMQ libraries declare (docs/retries.md says when). It must match
// what the queue's topology declares, if it declares the ladder: without
// WithRungs, Consume refuses to start when the broker has the queue's rungs
// of the other kind; with it, the consumer says so once and goes on.
func WithRungs(kind contract.RungKind) ConsumeOption {
	return consumeOption(option.Named("WithRungs", func(o *options) error {
		if _, err := contract.ParseRungKind(string(kind)); err != nil {
			return invalid("%v", err)
		}
		o.cons.rungs = kind // "" stays "": no kind chosen
		return nil
	}))
}

// WithPrefetch bounds the deliveries the consumer holds unsettled, in-process
// waits included (default DefaultPrefetch; 0 is no bound). It is at most
// 65535: basic.qos carries it in 16 bits.
func WithPrefetch(n int) ConsumeOption {
	return consumeOption(option.Named("WithPrefetch", func(o *options) error {
		if n < 0 || n > math.MaxUint16 {
			return invalid("the prefetch is %d but must be from 0 to %d", n, math.MaxUint16)
		}
		o.cons.prefetch = n
		return nil
	}))
}

// WithConcurrency sets how many handlers run at once (default 1).
func WithConcurrency(n int) ConsumeOption {
	return consumeOption(option.Named("WithConcurrency", func(o *options) error {
		if n < 1 || n > maxConcurrency {
			return invalid("the concurrency is %d but must be from 1 to %d", n, maxConcurrency)
		}
		o.cons.concurrency = n
		return nil
	}))
}

// WithConsumerTag names the consumer on the broker.
func WithConsumerTag(tag string) ConsumeOption {
	return consumeOption(option.Named("WithConsumerTag", func(o *options) error {
		o.cons.tag = tag
		return nil
	}))
}

// WithDrainTimeout bounds how long Close waits for running handlers and the
// settlements under way; then it cancels the handlers' context and returns
// (default DefaultDrainTimeout). It is measured on the Conn's clock.
func WithDrainTimeout(d time.Duration) ConsumeOption {
	return consumeOption(option.Named("WithDrainTimeout", func(o *options) error {
		if d < 0 {
			return invalid("the drain timeout is %s but must be at least 0", d)
		}
		o.cons.drainTimeout = d
		return nil
	}))
}
