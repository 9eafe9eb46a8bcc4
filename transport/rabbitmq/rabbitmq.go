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
	// ConnectionName is shown by the broker (management UI, rabbitmqctl).
	ConnectionName string
	// Addresses are further broker URLs (amqp:// or amqps://), the nodes of
	// a cluster, tried in order after the URL given to Dial. The first
	// connect and every reconnect try the addresses in turn, starting with
	// the one after the last that worked (so a node just lost is tried
	// last); the backoff above applies only after a whole round failed.
	// TLS, Credentials and ConnectionName apply to each address.
	Addresses []string
	// AllowDevelopmentCertificates accepts a broker certificate marked as
	// made for local work (contract.DevelopmentCertificateMarker, as
	// `acemq certs` makes them). Without it an amqps:// connection refuses
	// one with ErrDevelopmentCertificate, even when TLS.InsecureSkipVerify
	// turns verification off.
	AllowDevelopmentCertificates bool
}

// Transport is a connection to RabbitMQ that redials itself when lost.
type Transport struct {
	urls     []string // the URL given to Dial, then Options.Addresses
	redacted []string // urls without their passwords
	opts     Options
	// logs holds a logger per address, its broker attribute set; inUse is
	// the one of the address in use (or last used), so that a line names
	// the node of its time without formatting an attribute per line.
	logs  []*slog.Logger
	inUse atomic.Pointer[slog.Logger]

	ctx    context.Context // ended by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the Transport starts

	mu        sync.Mutex
	closed    bool
	cur       int              // index in urls of the last address that worked
	conn      *amqp.Connection // nil while reconnecting
	sock      *socket          // conn's
	ready     chan struct{}    // closed once conn is set; replaced when it is lost
	connects  int              // successful connects, the first included
	version   string           // the broker's, from the last connection's server properties
	blocked   bool
	reason    string
	lastErr   error // the last connection failure, at lastErrAt
	lastErrAt time.Time
	unblocked chan struct{} // closed when the broker unblocks us (or the connection goes)

	pubMu sync.Mutex // serialises opening the publishing channel
	pub   *publisher

	consumers map[*consumerChannel]struct{} // open, so Close can send their held acks; under mu

	notify atomic.Pointer[func(transport.Event)] // Notify's handler; nil for none
}

// Dial connects to url (amqp:// or amqps://), or failing that to one of
// opts.Addresses, and returns a Transport that keeps a connection up until
// Close.
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
	t := &Transport{urls: urls, opts: opts, unblocked: make(chan struct{})}
	base := opts.Logger
	if base == nil {
		base = slog.New(slog.DiscardHandler)
	}
	for _, u := range urls {
		t.redacted = append(t.redacted, RedactURL(u))
		t.logs = append(t.logs, base.With("broker", t.redacted[len(t.redacted)-1]))
	}
	t.inUse.Store(t.logs[0])
	conn, sock, cur, err := t.dialRound(ctx, 0)
	if err != nil {
		return nil, err
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	w := listen(conn)
	t.conn, t.sock, t.ready, t.connects, t.version = conn, sock, make(chan struct{}), 1, serverVersion(conn)
	t.use(cur)
	close(t.ready)
	t.wg.Add(1)
	go t.supervise(w)
	return t, nil
}

// String names the broker address in use (or last used), without its
// password.
func (t *Transport) String() string { return "rabbitmq " + t.address() }

// address is the redacted URL of the address in use, or last used.
func (t *Transport) address() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.redacted[t.cur]
}

// use makes urls[cur] the address in use, its logger the one log lines
// go to; under mu (or before the Transport is shared).
func (t *Transport) use(cur int) {
	t.cur = cur
	t.inUse.Store(t.logs[cur])
}

// log is the logger of the address in use: every line names that address
// as its broker.
func (t *Transport) log() *slog.Logger { return t.inUse.Load() }

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
func (t *Transport) dialRound(ctx context.Context, start int) (*amqp.Connection, *socket, int, error) {
	var errs []error
	for i := range t.urls {
		k := (start + i) % len(t.urls)
		conn, sock, err := t.dial(ctx, t.urls[k])
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

// dial opens one connection to url, asking for credentials first, on a
// socket of its own.
func (t *Transport) dial(ctx context.Context, url string) (*amqp.Connection, *socket, error) {
	// Recovery stays nil: the Transport alone redials (supervise), and
	// amqp091's recovery would swallow the close it watches for and reopen
	// channels in place, where old delivery tags mean other messages.
	cfg := amqp.Config{Properties: amqp.NewConnectionProperties()}
	if t.opts.ConnectionName != "" {
		cfg.Properties.SetClientConnectionName(t.opts.ConnectionName)
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

// watched is a connection with its notifications, registered before
// anything uses it: amqp091 drops a connection.blocked nobody listens for.
type watched struct {
	conn   *amqp.Connection
	closes chan *amqp.Error
	blocks chan amqp.Blocking
}

func listen(conn *amqp.Connection) *watched {
	return &watched{
		conn:   conn,
		closes: conn.NotifyClose(make(chan *amqp.Error, 1)),
		blocks: conn.NotifyBlocked(make(chan amqp.Blocking, 4)),
	}
}

// supervise watches the connection and redials it when lost, until Close.
func (t *Transport) supervise(w *watched) {
	defer t.wg.Done()
	for w != nil {
		err := t.watch(w)
		if err == nil {
			return
		}
		t.failed(err)
		addr := t.address()
		t.log().Warn("rabbitmq: connection lost", "error", err.Error())
		t.emit(transport.Event{Kind: transport.EventLost, Address: addr, Err: err})
		t.setBlocked(false, "") // the next connection starts unblocked
		w = t.reconnect()
	}
}

// watch follows the connection's blocked state until it closes (its error)
// or the Transport does (nil).
func (t *Transport) watch(w *watched) error {
	blocks := w.blocks
	for {
		select {
		case <-t.ctx.Done():
			return nil
		case b, ok := <-blocks:
			if !ok {
				blocks = nil
				continue
			}
			t.setBlocked(b.Active, b.Reason)
		case e := <-w.closes:
			if t.ctx.Err() != nil {
				return nil
			}
			t.lose(w.conn)
			if e == nil {
				return errors.New("connection closed")
			}
			return e
		}
	}
}

// setBlocked records whether the broker blocks the connection, logging and
// reporting a change. Only supervise's goroutine calls it.
func (t *Transport) setBlocked(blocked bool, reason string) {
	t.mu.Lock()
	was := t.blocked
	t.blocked, t.reason = blocked, reason
	if was && !blocked {
		close(t.unblocked)
	} else if !was && blocked {
		t.unblocked = make(chan struct{})
	}
	addr := t.redacted[t.cur]
	t.mu.Unlock()
	switch {
	case blocked && !was:
		t.log().Warn("rabbitmq: connection blocked by the broker", "reason", reason)
		t.emit(transport.Event{Kind: transport.EventBlocked, Address: addr, Reason: reason})
	case !blocked && was:
		t.log().Info("rabbitmq: connection unblocked")
		t.emit(transport.Event{Kind: transport.EventUnblocked, Address: addr})
	}
}

// Notify has f called with each connection event from now on (see
// transport.Transport): a loss (EventLost, then EventUnblocked if it was
// blocked), the recovery (EventRecovered), the broker's connection.blocked
// and connection.unblocked. A failed reconnect is no event (State's
// LastError has it). f is called from the Transport's own goroutine, which
// Close waits for: no call comes after Close returns.
func (t *Transport) Notify(f func(transport.Event)) {
	if f == nil {
		t.notify.Store(nil)
		return
	}
	t.notify.Store(&f)
}

// emit calls Notify's handler with e; only supervise's goroutine calls it,
// holding no lock.
func (t *Transport) emit(e transport.Event) {
	if f := t.notify.Load(); f != nil {
		(*f)(e)
	}
}

// reconnect redials with backoff until it succeeds (the new connection) or
// the Transport closes (nil). Each attempt is a round of the addresses,
// starting with the one after the address just lost.
func (t *Transport) reconnect() *watched {
	delay := t.opts.ReconnectDelay
	t.mu.Lock()
	next := (t.cur + 1) % len(t.urls)
	t.mu.Unlock()
	for {
		timer := time.NewTimer(delay)
		select {
		case <-t.ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		conn, sock, cur, err := t.dialRound(t.ctx, next)
		if err != nil {
			if t.ctx.Err() != nil {
				return nil
			}
			t.failed(err)
			t.log().Warn("rabbitmq: reconnect failed", "error", err.Error(), "retry_in", delay)
			delay = min(2*delay, t.opts.MaxReconnectDelay)
			continue
		}
		w := listen(conn)
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			_ = conn.Close()
			return nil
		}
		t.conn, t.sock, t.version = conn, sock, serverVersion(conn)
		t.use(cur)
		t.connects++
		close(t.ready)
		t.mu.Unlock()
		addr := t.redacted[cur]
		t.log().Info("rabbitmq: connection recovered")
		t.emit(transport.Event{Kind: transport.EventRecovered, Address: addr})
		return w
	}
}

// serverVersion is the version a broker reports in its server properties
// ("3.10.8"), or "" when it reports none.
func serverVersion(conn *amqp.Connection) string {
	v, _ := conn.Properties["version"].(string)
	return v
}

// connection returns the open connection, waiting while it is being
// re-established.
func (t *Transport) connection(ctx context.Context) (*amqp.Connection, error) {
	for {
		t.mu.Lock()
		closed, conn, ready := t.closed, t.conn, t.ready
		t.mu.Unlock()
		switch {
		case closed:
			return nil, transport.ErrClosed
		case conn != nil && !conn.IsClosed():
			return conn, nil
		case conn != nil:
			t.lose(conn) // closed, and supervise has not noticed yet
			continue
		}
		select {
		case <-ready:
		case <-t.ctx.Done():
		case <-ctx.Done():
			return nil, t.waitErr(ctx)
		}
	}
}

// socketOf is conn's socket, or nil when conn is no longer the current
// connection.
func (t *Transport) socketOf(conn *amqp.Connection) *socket {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn != conn {
		return nil
	}
	return t.sock
}

// lose marks conn as gone, once: operations wait for the next connection.
func (t *Transport) lose(conn *amqp.Connection) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn == conn && !t.closed {
		t.conn, t.sock, t.ready = nil, nil, make(chan struct{})
	}
}

func (t *Transport) waitErr(ctx context.Context) error {
	return fmt.Errorf("rabbitmq: waiting for the connection to %s: %w", t.address(), context.Cause(ctx))
}

// current reports whether conn is still the Transport's connection.
func (t *Transport) current(conn *amqp.Connection) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.conn == conn && !conn.IsClosed()
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

// State reports the connection as it stands.
func (t *Transport) State() transport.State {
	t.mu.Lock()
	defer t.mu.Unlock()
	return transport.State{
		Connected: t.conn != nil && !t.conn.IsClosed(),
		Closed:    t.closed,
		Blocked:   t.blocked, BlockedReason: t.reason,
		Connects:      t.connects,
		ServerVersion: t.version,
		LastError:     t.lastErr, LastErrorAt: t.lastErrAt,
		Address: t.redacted[t.cur],
	}
}

// Close closes the connection and waits for every goroutine of the
// Transport. Publishes not yet confirmed resolve with an error matching
// transport.ErrClosed; subscriptions' Deliveries channels close. Nothing
// reconnects afterwards and every method returns transport.ErrClosed.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	conn := t.conn
	t.conn, t.sock = nil, nil
	addr := t.redacted[t.cur]
	t.cancel()
	consumers := slices.Collect(maps.Keys(t.consumers))
	t.mu.Unlock()
	for _, cc := range consumers {
		cc.flush() // acks held back go out before the connection closes
	}
	var err error
	if conn != nil {
		// A deadline: a blocked connection is not read by the broker.
		err = conn.CloseDeadline(time.Now().Add(5 * time.Second))
		if errors.Is(err, amqp.ErrClosed) {
			err = nil // lost just before
		}
	}
	t.wg.Wait()
	if err != nil {
		return fmt.Errorf("rabbitmq: close %s: %w", addr, err)
	}
	return nil
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
