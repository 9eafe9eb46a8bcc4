// Package rabbitmq is the transport.Transport over RabbitMQ, through
// github.com/rabbitmq/amqp091-go.
//
// amqp091-go's own (experimental) recovery is left off: it reopens a lost
// channel in place, so an ack of a delivery from before the loss would go out
// on the new channel with a delivery tag the broker never issued there, which
// closes that channel. Here a lost connection is redialled and every channel
// opened afresh, and a delivery can only ever be settled on the channel it
// came from.
package rabbitmq

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/devcert"
	"github.com/acemq-go/acemq/transport"
)

var _ transport.Transport = (*Transport)(nil)

// Options configure a Transport. The zero value connects with the URL's
// credentials and the system's TLS roots.
type Options struct {
	// TLS configures amqps:// connections; nil uses the system roots.
	TLS *tls.Config
	// Credentials, when set, is asked for the user name and password on every
	// connect and reconnect (rotating secrets); nil uses the URL's.
	Credentials func(ctx context.Context) (username, password string, err error)
	// Logger gets one line per connection event (lost, recovered, blocked,
	// unblocked, failed reconnect); nil discards them. No line holds a password.
	Logger *slog.Logger
	// ReconnectDelay is the first wait before redialling a lost connection
	// (default 100ms); it doubles after each failure up to MaxReconnectDelay
	// (default 5s).
	ReconnectDelay, MaxReconnectDelay time.Duration
	// ConnectionName is shown by the broker (management UI, rabbitmqctl)
	// for the main connection; the publishing connection shows it with
	// PublishingSuffix appended.
	ConnectionName string
	// Addresses are further broker URLs (amqp:// or amqps://), the nodes of
	// a cluster, tried in order after the URL given to Dial. The first
	// connect and every reconnect try the addresses in turn, starting with
	// the one after the last that worked (so a node just lost is tried
	// last); the backoff above applies only after a whole round failed.
	// TLS, Credentials and ConnectionName apply to each address; each of
	// the two connections goes round the addresses by itself.
	Addresses []string
	// AllowDevelopmentCertificates accepts a broker certificate marked as
	// made for local work (contract.DevelopmentCertificateMarker, as
	// `acemq certs` makes them). Without it an amqps:// connection refuses
	// one with ErrDevelopmentCertificate, even when TLS.InsecureSkipVerify
	// turns verification off.
	AllowDevelopmentCertificates bool
}

// Transport is a connection to RabbitMQ that redials itself when lost: in
// fact two, once it publishes. Publishes go on a publishing connection of
// their own, dialled by the first publish and named ConnectionName with
// PublishingSuffix appended; everything else (declarations, consumers and
// their Setup, Get, Take, the queue operations, Ping) goes on the main
// connection, dialled by Dial. RabbitMQ stops reading a connection that
// publishes during a resource alarm, its acknowledgements included, so a
// consumer on a connection of its own keeps running through an alarm (as
// RabbitMQ's alarms guide advises). Each connection recovers by itself.
type Transport struct {
	urls     []string // the URL given to Dial, then Options.Addresses
	redacted []string // urls without their passwords
	opts     Options

	ctx    context.Context // ended by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the Transport starts

	mu         sync.Mutex // guards the links' state too
	closed     bool
	main       *link
	publishing *link
	lastErr    error // the last connection failure (of either link), at lastErrAt
	lastErrAt  time.Time

	pubMu sync.Mutex // serialises opening the publishing channel
	pub   *publisher

	consumers map[*consumerChannel]struct{} // open, so Close can send their held acks; under mu

	notify atomic.Pointer[func(transport.Event)] // Notify's handler; nil for none
	emitMu sync.Mutex                            // one call of it at a time: each link's goroutine emits
}

// PublishingSuffix is appended to Options.ConnectionName to name the
// publishing connection (Spring AMQP's convention): a Transport named
// "orders" shows the broker "orders" and, once it publishes,
// "orders.publisher".
const PublishingSuffix = ".publisher"

// PublishingConnectionName is the name the broker shows for the publishing
// connection of a Transport whose Options.ConnectionName is name: "" when
// name is "" (neither connection is named then).
func PublishingConnectionName(name string) string {
	if name == "" {
		return ""
	}
	return name + PublishingSuffix
}

// Dial connects to url (amqp:// or amqps://), or failing that to one of
// opts.Addresses, and returns a Transport that keeps a connection up until
// Close. The publishing connection is dialled by the first Publish.
func Dial(ctx context.Context, url string, opts Options) (*Transport, error) {
	urls := append([]string{url}, opts.Addresses...)
	for _, u := range urls {
		if _, err := amqp.ParseURI(u); err != nil {
			return nil, fmt.Errorf("rabbitmq: invalid URL %s: %s", RedactURL(u), uriProblem(err))
		}
	}
	opts.Addresses = urls[1:]
	if opts.ReconnectDelay <= 0 {
		opts.ReconnectDelay = 100 * time.Millisecond
	}
	if opts.MaxReconnectDelay < opts.ReconnectDelay {
		opts.MaxReconnectDelay = max(5*time.Second, opts.ReconnectDelay)
	}
	t := &Transport{urls: urls, opts: opts}
	base := opts.Logger
	if base == nil {
		base = slog.New(slog.DiscardHandler)
	}
	for _, u := range urls {
		t.redacted = append(t.redacted, RedactURL(u))
	}
	t.main = newLink(t, base, "connection", opts.ConnectionName, false)
	t.publishing = newLink(t, base, "publishing connection", PublishingConnectionName(opts.ConnectionName), true)
	conn, sock, cur, err := t.dialRound(ctx, 0, opts.ConnectionName)
	if err != nil {
		return nil, err
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	w := t.main.listen(conn)
	t.main.opened(conn, sock, cur)
	t.main.started = true
	t.wg.Add(1)
	go t.main.supervise(w)
	return t, nil
}

// String names the broker address in use (or last used) by the main
// connection, without its password.
func (t *Transport) String() string { return "rabbitmq " + t.main.address() }

// RedactURL returns url with its password replaced by "xxxxx". A URL whose
// password holds unescaped reserved characters ('/', '?', '#', '@') loses
// everything up to its last '@' instead: net/url would read part of such a
// password as the host, path or query.
func RedactURL(rawURL string) string {
	start := 0
	if i := strings.Index(rawURL, "://"); i >= 0 {
		start = i + 3
	}
	at := strings.LastIndex(rawURL, "@")
	if at < start {
		return rawURL // no user information
	}
	if !strings.ContainsAny(rawURL[start:at], "/?#") {
		if u, err := url.Parse(rawURL); err == nil && u.User != nil {
			return u.Redacted()
		}
	}
	user, _, _ := strings.Cut(rawURL[start:at], ":")
	if strings.ContainsAny(user, "/?#@") {
		user = ""
	}
	return rawURL[:start] + user + ":xxxxx" + rawURL[at:]
}

// uriProblem says what is wrong with a URL without quoting it: net/url's
// errors quote the URL, password included.
func uriProblem(err error) string {
	if _, ok := errors.AsType[*url.Error](err); ok {
		return "it cannot be parsed (percent-encode reserved characters in the user name and password)"
	}
	return err.Error()
}

// dialRound tries each address once, from urls[start] on and round to the
// one before it, and returns the first connection made with its address's
// index. When every address fails, the error names each with its error.
func (t *Transport) dialRound(ctx context.Context, start int, name string) (*amqp.Connection, *socket, int, error) {
	var errs []error
	for i := range t.urls {
		k := (start + i) % len(t.urls)
		conn, sock, err := t.dial(ctx, t.urls[k], name)
		if err == nil {
			return conn, sock, k, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 1 {
		return nil, nil, 0, errs[0]
	}
	return nil, nil, 0, roundError(errs)
}

// roundError is the failure of a whole round of addresses: each error names
// its (redacted) address.
type roundError []error

func (e roundError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rabbitmq: no address answered (%d tried): ", len(e))
	for i, err := range e {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

func (e roundError) Unwrap() []error { return e }

// dial opens one connection to url, named name, asking for credentials
// first, on a socket of its own.
func (t *Transport) dial(ctx context.Context, url, name string) (*amqp.Connection, *socket, error) {
	// Recovery stays nil: the Transport alone redials (supervise), and
	// amqp091's recovery would swallow the close it watches for and reopen
	// channels in place, where old delivery tags mean other messages.
	cfg := amqp.Config{Properties: amqp.NewConnectionProperties()}
	if name != "" {
		cfg.Properties.SetClientConnectionName(name)
	}
	if strings.HasPrefix(url, "amqps://") {
		tlsConfig, err := t.tlsConfig(url)
		if err != nil {
			return nil, nil, fmt.Errorf("rabbitmq: connect to %s: %w", RedactURL(url), err)
		}
		cfg.TLSClientConfig = tlsConfig // amqp091 fills in ServerName
	}
	if t.opts.Credentials != nil {
		user, pass, err := t.opts.Credentials(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("rabbitmq: credentials for %s: %w", RedactURL(url), err)
		}
		cfg.SASL = []amqp.Authentication{&amqp.PlainAuth{Username: user, Password: pass}}
	}
	// amqp091 takes no context: the socket deadline bounds the TLS and AMQP
	// handshakes (amqp091 clears it once open) and ctx moves it to now.
	var (
		stop func() bool
		sock *socket
	)
	cfg.Dial = func(network, addr string) (net.Conn, error) {
		// The timeout moves a round past a node that does not answer.
		c, err := (&net.Dialer{Timeout: 30 * time.Second}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		deadline := time.Now().Add(30 * time.Second)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		_ = c.SetDeadline(deadline)
		stop = context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
		sock = newSocket(c, heldFor)
		return sock, nil
	}
	conn, err := amqp.DialConfig(url, cfg)
	if stop != nil && !stop() {
		if conn != nil {
			_ = conn.Close()
		}
		return nil, nil, fmt.Errorf("rabbitmq: connect to %s: %w", RedactURL(url), context.Cause(ctx))
	}
	if err != nil {
		if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
			return nil, nil, fmt.Errorf("rabbitmq: connect to %s: the server's TLS certificate is not trusted (is its CA in Options.TLS.RootCAs?): %w", RedactURL(url), err)
		}
		return nil, nil, fmt.Errorf("rabbitmq: connect to %s: %w", RedactURL(url), err)
	}
	return conn, sock, nil
}

// ErrDevelopmentCertificate is matched (errors.Is) by the error of a
// connect refused because the broker presented a development certificate
// and Options.AllowDevelopmentCertificates is not set.
var ErrDevelopmentCertificate = errors.New("the broker's TLS certificate is a development certificate")

// tlsConfig is the TLS configuration of a connection to the amqps:// url:
// Options.TLS, or when nil the one amqp091 makes from the URL (the system
// roots, or the query's cacertfile, certfile, keyfile and
// server_name_indication), with the development-certificate check
// before any VerifyConnection of its own. VerifyConnection runs on every
// handshake, InsecureSkipVerify or not.
func (t *Transport) tlsConfig(url string) (*tls.Config, error) {
	cfg := t.opts.TLS.Clone()
	if cfg == nil {
		var err error
		if cfg, err = tlsConfigFromURL(url); err != nil {
			return nil, err
		}
	}
	if t.opts.AllowDevelopmentCertificates {
		return cfg, nil
	}
	theirs := cfg.VerifyConnection
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if err := refuseDevelopmentCertificates(cs); err != nil {
			return err
		}
		if theirs != nil {
			return theirs(cs)
		}
		return nil
	}
	return cfg, nil
}

// tlsConfigFromURL is the configuration amqp091 makes for an amqps:// URL
// given no tls.Config, which it does not export.
func tlsConfigFromURL(url string) (*tls.Config, error) {
	uri, err := amqp.ParseURI(url)
	if err != nil {
		return nil, errors.New(uriProblem(err))
	}
	cfg := &tls.Config{ServerName: uri.ServerName, MinVersion: tls.VersionTLS12}
	if uri.CACertFile != "" {
		pem, err := os.ReadFile(uri.CACertFile)
		if err != nil {
			return nil, fmt.Errorf("reading the URL's cacertfile: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		cfg.RootCAs.AppendCertsFromPEM(pem)
	}
	if uri.CertFile != "" && uri.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(uri.CertFile, uri.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("loading the URL's certfile and keyfile: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// refuseDevelopmentCertificates fails when a certificate the broker
// presented, or one of the chains it was verified by, is marked as a
// development certificate (devcert.Marked).
func refuseDevelopmentCertificates(cs tls.ConnectionState) error {
	certs := slices.Clone(cs.PeerCertificates)
	for _, chain := range cs.VerifiedChains {
		certs = append(certs, chain...)
	}
	for i, c := range certs {
		if !devcert.Marked(c) {
			continue
		}
		what := fmt.Sprintf("its subject %q (issuer %q)", c.Subject, c.Issuer)
		if i > 0 {
			what = fmt.Sprintf("the certificate %q of its chain", c.Subject)
		}
		return fmt.Errorf("%w, refused: %s carries the marker %q; "+
			"to connect to a development broker, allow development certificates with acemq.WithDevelopmentCertificates() "+
			"(rabbitmq.Options.AllowDevelopmentCertificates), never in production",
			ErrDevelopmentCertificate, what, contract.DevelopmentCertificateMarker)
	}
	return nil
}

// Notify has f called with each connection event from now on (see
// transport.Transport), of either connection, each with the address of its
// connection: a loss (EventLost, then EventUnblocked if it was blocked),
// the recovery (EventRecovered), the broker's connection.blocked and
// connection.unblocked (of the publishing connection: the main one never
// publishes). The publishing connection's first connect, and a failed
// reconnect, are no event (State's LastError has a failure). f is called
// from the Transport's own goroutines, one call at a time, which Close
// waits for: no call comes after Close returns.
func (t *Transport) Notify(f func(transport.Event)) {
	if f == nil {
		t.notify.Store(nil)
		return
	}
	t.notify.Store(&f)
}

// emit calls Notify's handler with e; only the links' supervising
// goroutines call it, holding no lock but emitMu, which serialises them.
func (t *Transport) emit(e transport.Event) {
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	if f := t.notify.Load(); f != nil {
		(*f)(e)
	}
}

// serverVersion is the version a broker reports in its server properties
// ("3.10.8"), or "" when it reports none.
func serverVersion(conn *amqp.Connection) string {
	v, _ := conn.Properties["version"].(string)
	return v
}

func (t *Transport) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// goOwned runs f in a goroutine that Close waits for; false once closed.
func (t *Transport) goOwned(f func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		f()
	}()
	return true
}

// failed records err as the last connection failure, for State.
func (t *Transport) failed(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastErr, t.lastErrAt = err, time.Now()
}

// track and untrack keep the set of open consumer channels.
func (t *Transport) track(cc *consumerChannel) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.consumers == nil {
		t.consumers = map[*consumerChannel]struct{}{}
	}
	t.consumers[cc] = struct{}{}
}

func (t *Transport) untrack(cc *consumerChannel) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.consumers, cc)
}

// State reports the connections as they stand:
//   - Connected: the main connection is open, and so is the publishing one
//     once the Transport has published (it is redialled when lost, as the
//     main one is);
//   - Blocked, BlockedReason: the publishing connection's, the only one the
//     broker blocks (it blocks a connection once it publishes during an
//     alarm);
//   - Connects: the main connection's connects, the first included, plus
//     the publishing connection's reconnects (its first connect is no
//     recovery), so that Connects-1 counts the recoveries of both;
//   - ServerVersion and Address: the main connection's (the node the
//     consumers are on; the publishing connection starts on the same
//     address, and after a loss each follows the addresses by itself).
func (t *Transport) State() transport.State {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, p := t.main, t.publishing
	return transport.State{
		Connected: m.up() && (!p.started || p.up()),
		Closed:    t.closed,
		Blocked:   p.blocked, BlockedReason: p.reason,
		Connects:      m.connects + max(p.connects-1, 0),
		ServerVersion: m.version,
		LastError:     t.lastErr, LastErrorAt: t.lastErrAt,
		Address: t.redacted[m.cur],
	}
}

// Close closes both connections and waits for every goroutine of the
// Transport. Publishes not yet confirmed resolve with an error matching
// transport.ErrClosed; subscriptions' Deliveries end. Nothing
// reconnects afterwards and every method returns transport.ErrClosed.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	links := []*link{t.main, t.publishing}
	conns := []*amqp.Connection{t.main.take(), t.publishing.take()}
	addrs := []string{t.redacted[t.main.cur], t.redacted[t.publishing.cur]}
	t.cancel()
	consumers := slices.Collect(maps.Keys(t.consumers))
	t.mu.Unlock()
	for _, cc := range consumers {
		cc.flush() // acks held back go out before the connection closes
	}
	// Both at once: each may wait out its deadline.
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, conn := range conns {
		if conn == nil {
			continue
		}
		wg.Go(func() {
			// A deadline: a blocked connection is not read by the broker.
			err := conn.CloseDeadline(time.Now().Add(5 * time.Second))
			if err != nil && !errors.Is(err, amqp.ErrClosed) { // ErrClosed: lost just before
				errs[i] = fmt.Errorf("rabbitmq: close the %s to %s: %w", links[i].what, addrs[i], err)
			}
		})
	}
	wg.Wait()
	t.wg.Wait()
	return errors.Join(errs...)
}

// mapErr makes an AMQP error matchable with the transport's errors, keeping
// the broker's text ("inequivalent arg 'x-message-ttl' for queue ...").
func mapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("rabbitmq: %s: %w", what, classify(err))
}

func classify(err error) error {
	if ae, ok := errors.AsType[*amqp.Error](err); ok {
		switch ae.Code {
		case amqp.PreconditionFailed:
			return fmt.Errorf("%w: %w", transport.ErrPreconditionFailed, err)
		case amqp.NotFound:
			return fmt.Errorf("%w: %w", transport.ErrNotFound, err)
		}
	}
	return err
}
