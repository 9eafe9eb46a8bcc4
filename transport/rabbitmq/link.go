package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/transport"
)

// link is one of the Transport's AMQP connections, which redials itself
// when lost: the main one, dialled by Dial, and the publishing one, dialled
// by the first publish. RabbitMQ stops reading a connection it blocks
// during a resource alarm, acknowledgements included, once that connection
// publishes; publishing on a connection of its own keeps the consumers on
// the main one running (RabbitMQ's advice in its alarms guide).
//
// Each link recovers by itself, with the Options' backoff, round the
// Options' addresses.
type link struct {
	t *Transport
	// what names the connection in log lines: "connection" or
	// "publishing connection".
	what string
	// name is the client-provided connection name the broker shows; "" for
	// none.
	name string
	// publishes: the link carries the publishes and so is the one the
	// broker blocks; it alone follows connection.blocked.
	publishes bool
	// logs holds a logger per address, its broker attribute set; inUse is
	// the one of the address in use (or last used), so that a line names
	// the node of its time without formatting an attribute per line.
	logs  []*slog.Logger
	inUse atomic.Pointer[slog.Logger]

	// under t.mu
	started   bool             // its supervisor runs (the publishing link: since the first publish)
	cur       int              // index in t.urls of the last address that worked
	conn      *amqp.Connection // nil while (re)connecting
	sock      *socket          // conn's
	ready     chan struct{}    // closed once conn is set; replaced when it is lost
	connects  int              // successful connects, the first included
	version   string           // the broker's, from the last connection's server properties
	blocked   bool
	reason    string
	unblocked chan struct{} // closed when the broker unblocks it (or the connection goes)
}

func newLink(t *Transport, base *slog.Logger, what, name string, publishes bool) *link {
	l := &link{t: t, what: what, name: name, publishes: publishes,
		ready: make(chan struct{}), unblocked: make(chan struct{})}
	for _, r := range t.redacted {
		l.logs = append(l.logs, base.With("broker", r))
	}
	l.inUse.Store(l.logs[0])
	return l
}

// use makes t.urls[cur] the address in use, its logger the one log lines
// go to; under t.mu (or before the Transport is shared).
func (l *link) use(cur int) {
	l.cur = cur
	l.inUse.Store(l.logs[cur])
}

// log is the logger of the address in use: every line names that address
// as its broker.
func (l *link) log() *slog.Logger { return l.inUse.Load() }

// address is the redacted URL of the address in use, or last used.
func (l *link) address() string {
	l.t.mu.Lock()
	defer l.t.mu.Unlock()
	return l.t.redacted[l.cur]
}

// opened makes conn the link's connection; under t.mu.
func (l *link) opened(conn *amqp.Connection, sock *socket, cur int) {
	l.conn, l.sock, l.version = conn, sock, serverVersion(conn)
	l.use(cur)
	l.connects++
	close(l.ready)
}

// up says the link's connection is open; under t.mu.
func (l *link) up() bool { return l.conn != nil && !l.conn.IsClosed() }

// watched is a connection with its notifications, registered before
// anything uses it: amqp091 drops a connection.blocked nobody listens for.
type watched struct {
	conn   *amqp.Connection
	closes chan *amqp.Error
	blocks chan amqp.Blocking // nil on a link that does not publish
}

func (l *link) listen(conn *amqp.Connection) *watched {
	w := &watched{conn: conn, closes: conn.NotifyClose(make(chan *amqp.Error, 1))}
	if l.publishes {
		w.blocks = conn.NotifyBlocked(make(chan amqp.Blocking, 4))
	}
	return w
}

// supervise watches the connection and redials it when lost, until Close;
// with w nil it dials first (the publishing link's first connection).
func (l *link) supervise(w *watched) {
	defer l.t.wg.Done()
	if w == nil {
		w = l.reconnect(false)
	}
	for w != nil {
		err := l.watch(w)
		if err == nil {
			return
		}
		l.t.failed(err)
		addr := l.address()
		l.log().Warn("rabbitmq: "+l.what+" lost", "error", err.Error())
		l.t.emit(transport.Event{Kind: transport.EventLost, Address: addr, Err: err})
		l.setBlocked(false, "") // the next connection starts unblocked
		w = l.reconnect(true)
	}
}

// watch follows the connection's blocked state until it closes (its error)
// or the Transport does (nil).
func (l *link) watch(w *watched) error {
	blocks := w.blocks
	for {
		select {
		case <-l.t.ctx.Done():
			return nil
		case b, ok := <-blocks:
			if !ok {
				blocks = nil
				continue
			}
			l.setBlocked(b.Active, b.Reason)
		case e := <-w.closes:
			if l.t.ctx.Err() != nil {
				return nil
			}
			l.lose(w.conn)
			if e == nil {
				return errors.New("connection closed")
			}
			return e
		}
	}
}

// setBlocked records whether the broker blocks the connection, logging and
// reporting a change. Only supervise's goroutine calls it.
func (l *link) setBlocked(blocked bool, reason string) {
	l.t.mu.Lock()
	was := l.blocked
	l.blocked, l.reason = blocked, reason
	if was && !blocked {
		close(l.unblocked)
	} else if !was && blocked {
		l.unblocked = make(chan struct{})
	}
	addr := l.t.redacted[l.cur]
	l.t.mu.Unlock()
	switch {
	case blocked && !was:
		l.log().Warn("rabbitmq: "+l.what+" blocked by the broker", "reason", reason)
		l.t.emit(transport.Event{Kind: transport.EventBlocked, Address: addr, Reason: reason})
	case !blocked && was:
		l.log().Info("rabbitmq: " + l.what + " unblocked")
		l.t.emit(transport.Event{Kind: transport.EventUnblocked, Address: addr})
	}
}

// reconnect dials with backoff until it succeeds (the new connection) or
// the Transport closes (nil). Each attempt is a round of the addresses:
// after a loss, it waits ReconnectDelay first and starts with the address
// after the one just lost; for a link's first connection it starts at
// once, with the main link's address.
func (l *link) reconnect(lost bool) *watched {
	t := l.t
	delay, wait := t.opts.ReconnectDelay, t.opts.ReconnectDelay
	t.mu.Lock()
	next := (l.cur + 1) % len(t.urls)
	if !lost {
		next, wait = t.main.cur, 0
	}
	t.mu.Unlock()
	for {
		timer := time.NewTimer(wait)
		select {
		case <-t.ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		wait = delay
		conn, sock, cur, err := t.dialRound(t.ctx, next, l.name)
		if err != nil {
			if t.ctx.Err() != nil {
				return nil
			}
			t.failed(err)
			l.log().Warn("rabbitmq: "+l.what+" failed to connect", "error", err.Error(), "retry_in", delay)
			delay = min(2*delay, t.opts.MaxReconnectDelay)
			continue
		}
		w := l.listen(conn)
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			_ = conn.Close()
			return nil
		}
		l.opened(conn, sock, cur)
		t.mu.Unlock()
		if !lost {
			l.log().Info("rabbitmq: " + l.what + " opened")
			return w
		}
		l.log().Info("rabbitmq: " + l.what + " recovered")
		t.emit(transport.Event{Kind: transport.EventRecovered, Address: t.redacted[cur]})
		return w
	}
}

// connection returns the open connection, waiting while it is being
// established; the publishing link's first call starts it.
func (l *link) connection(ctx context.Context) (*amqp.Connection, error) {
	t := l.t
	for {
		t.mu.Lock()
		if !l.started && !t.closed {
			l.started = true
			t.wg.Add(1)
			go l.supervise(nil)
		}
		closed, conn, ready := t.closed, l.conn, l.ready
		t.mu.Unlock()
		switch {
		case closed:
			return nil, transport.ErrClosed
		case conn != nil && !conn.IsClosed():
			return conn, nil
		case conn != nil:
			l.lose(conn) // closed, and supervise has not noticed yet
			continue
		}
		select {
		case <-ready:
		case <-t.ctx.Done():
		case <-ctx.Done():
			return nil, fmt.Errorf("rabbitmq: waiting for the %s to %s: %w", l.what, l.address(), context.Cause(ctx))
		}
	}
}

// socketOf is conn's socket, or nil when conn is no longer the link's
// connection.
func (l *link) socketOf(conn *amqp.Connection) *socket {
	l.t.mu.Lock()
	defer l.t.mu.Unlock()
	if l.conn != conn {
		return nil
	}
	return l.sock
}

// lose marks conn as gone, once: operations wait for the next connection.
func (l *link) lose(conn *amqp.Connection) {
	l.t.mu.Lock()
	defer l.t.mu.Unlock()
	if l.conn == conn && !l.t.closed {
		l.conn, l.sock, l.ready = nil, nil, make(chan struct{})
	}
}

// current reports whether conn is still the link's connection.
func (l *link) current(conn *amqp.Connection) bool {
	l.t.mu.Lock()
	defer l.t.mu.Unlock()
	return l.conn == conn && !conn.IsClosed()
}

// take hands the connection over to Close, which closes it; under t.mu,
// once t.closed is set.
func (l *link) take() *amqp.Connection {
	conn := l.conn
	l.conn, l.sock = nil, nil
	return conn
}
