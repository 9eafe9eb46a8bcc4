package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/transport"
)

// ErrNotConfirmed is transport.ErrNotConfirmed: the channel or connection
// went away before the broker confirmed the publish.
var ErrNotConfirmed = transport.ErrNotConfirmed

// errRetry: nothing was sent because the publishing channel had just
// closed; publish again on a new one.
var errRetry = errors.New("publishing channel closed")

// Publish sends p on the publishing channel (in confirm mode) and returns a
// Confirmation that resolves with nil once the broker confirms it,
// transport.ErrUnroutable when a mandatory publish came back,
// transport.ErrRefused on a nack, transport.ErrNotFound when the exchange
// does not exist (the message was not routed), and ErrNotConfirmed when the
// channel or connection was lost first (a refusal that came just before the
// broker closed the channel may be taken for that). The channel is on the
// publishing connection, which the first Publish dials; while it is being
// established Publish waits for it; while the broker blocks it (a resource
// alarm) Publish waits for the unblock, and fails with transport.ErrBlocked
// when ctx ends first.
func (t *Transport) Publish(ctx context.Context, p transport.Publishing) (*transport.Confirmation, error) {
	msg := toPublishing(p.Message)
	for {
		if err := t.waitUnblocked(ctx, p); err != nil {
			return nil, err
		}
		pub, err := t.publisher(ctx)
		if errors.Is(err, errRetry) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
		c, err := pub.publish(p, msg)
		if errors.Is(err, errRetry) {
			continue
		}
		return c, err
	}
}

func (t *Transport) waitUnblocked(ctx context.Context, p transport.Publishing) error {
	for {
		t.mu.Lock()
		blocked, reason, unblocked := t.publishing.blocked, t.publishing.reason, t.publishing.unblocked
		t.mu.Unlock()
		if !blocked {
			return nil
		}
		select {
		case <-unblocked:
		case <-t.ctx.Done():
			return transport.ErrClosed
		case <-ctx.Done():
			return fmt.Errorf("rabbitmq: publish to exchange %q with routing key %q: %w: %s (%w)",
				p.Exchange, p.RoutingKey, transport.ErrBlocked, reason, context.Cause(ctx))
		}
	}
}

// publisher returns the publishing channel, opening one on the publishing
// connection (dialling it, the first time) when there is none or it closed.
func (t *Transport) publisher(ctx context.Context) (*publisher, error) {
	conn, err := t.publishing.connection(ctx)
	if err != nil {
		return nil, err
	}
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	if p := t.pub; p != nil && p.conn == conn && p.usable() && !p.ch.IsClosed() {
		return p, nil
	}
	sock := t.publishing.socketOf(conn)
	if sock == nil {
		return nil, errRetry // conn has just been replaced
	}
	ch, err := conn.Channel()
	if err == nil {
		if err = ch.Confirm(false); err != nil {
			_ = ch.Close()
		}
	}
	if err != nil {
		if errors.Is(err, amqp.ErrClosed) {
			return nil, errRetry // the connection has just gone: wait for the next
		}
		return nil, mapErr("open the publishing channel", err)
	}
	p := &publisher{
		t:       t,
		conn:    conn,
		sock:    sock,
		ch:      ch,
		returns: ch.NotifyReturn(make(chan amqp.Return, returnsBuffer)),
		closes:  ch.NotifyClose(make(chan *amqp.Error, 1)),
	}
	if !t.goOwned(p.run) {
		_ = ch.Close()
		return nil, transport.ErrClosed
	}
	t.pub = p
	return p, nil
}

// amqp091 hands a basic.return to a listener that has not taken it within
// 5 s (notifyAll's timeout) to no one, and the publish it was about would
// then look confirmed. The publisher takes returns at every publish and
// answer, and every returnsPoll besides, into a buffer of returnsBuffer.
const (
	returnsBuffer = 256
	returnsPoll   = 100 * time.Millisecond
)

// publisher is one confirm-mode channel and the publishes in flight on it.
//
// Its confirms are amqp091's deferred confirmations: each publish's
// Confirmation is answered when amqp091 closes its done channel, without a
// listener goroutine in between. amqp091 reads frames in one goroutine and
// hands a basic.return to the returns channel before it goes on to the
// basic.ack that RabbitMQ sends after it, and it sends the channel's close
// reason to closes, and closes both, before it fails the deferred
// confirmations of a closed channel. So a publish's answer, read after its
// done channel closed, finds its return and the close reason already in
// those channels, provided nothing took them from there without recording
// them: every receive from returns and closes is made holding mu.
type publisher struct {
	t       *Transport
	conn    *amqp.Connection
	sock    *socket // conn's
	ch      *amqp.Channel
	returns chan amqp.Return
	closes  chan *amqp.Error

	sendMu sync.Mutex   // one basic.publish at a time, so delivery tags follow inflight's order
	queued atomic.Int32 // publishes waiting for sendMu

	mu       sync.Mutex
	dead     bool  // the channel closed
	cause    error // why, once dead: the broker's close, or errChannelClosed
	retiring bool  // refused a publish: takes no more, closes once inflight is empty
	closing  bool
	inflight []*pending // in delivery-tag order; the oldest leave once answered
}

var errChannelClosed = errors.New("channel closed")

// pending is one publish in flight and, embedded, its Confirmation.
type pending struct {
	transport.Confirmation
	p                    *publisher
	dc                   *amqp.DeferredConfirmation // nil until sent
	exchange, key, msgID string
	mandatory            bool
	returned             bool // a basic.return came back for it
	refused              bool // nacked while the channel was open
}

// usable reports whether the publisher takes new publishes.
func (p *publisher) usable() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.dead && !p.retiring
}

func (p *publisher) publish(pb transport.Publishing, msg amqp.Publishing) (*transport.Confirmation, error) {
	p.queued.Add(1)
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	p.queued.Add(-1)
	pe := &pending{p: p, exchange: pb.Exchange, key: pb.RoutingKey, msgID: msg.MessageId, mandatory: pb.Mandatory}
	// In flight before it is sent: its return may come back before Publish
	// returns.
	p.mu.Lock()
	p.takeLocked()
	if p.dead || p.retiring {
		p.mu.Unlock()
		return nil, errRetry
	}
	p.inflight = append(p.inflight, pe)
	p.mu.Unlock()
	// Held back for the next publish when the caller says one follows, or
	// another caller's is already waiting to be written.
	hold := pb.More || p.queued.Load() > 0
	if hold {
		p.sock.hold(true)
	}
	dc, err := p.ch.PublishWithDeferredConfirm(pb.Exchange, pb.RoutingKey, pb.Mandatory, false, msg)
	if hold {
		p.sock.hold(false)
	}
	p.mu.Lock()
	if err == nil {
		pe.dc = dc
	} else {
		p.inflight = slices.DeleteFunc(p.inflight, func(q *pending) bool { return q == pe })
	}
	p.mu.Unlock()
	if err != nil {
		if errors.Is(err, amqp.ErrClosed) { // nothing went out
			return nil, errRetry
		}
		if lostSocket(err) {
			// The connection failed under the write: some of the frames may
			// have gone out, so the broker may have routed the message or
			// not, as for a publish in flight when a connection is lost.
			return nil, fmt.Errorf("rabbitmq: publish to exchange %q with routing key %q: %w: the connection failed during the send; the message may or may not have been routed: %w",
				pb.Exchange, pb.RoutingKey, ErrNotConfirmed, err)
		}
		return nil, fmt.Errorf("rabbitmq: publish to exchange %q with routing key %q: %w", pb.Exchange, pb.RoutingKey, err)
	}
	pe.Defer(dc.Done(), pe)
	return &pe.Confirmation, nil
}

// lostSocket says whether err is the connection's socket failing (reset,
// closed under a write, timed out), not a refusal of the publish.
func lostSocket(err error) bool {
	_, isNet := errors.AsType[net.Error](err)
	return isNet || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// run takes returns and notes the channel's close while nothing else
// does, until the channel or the transport closes.
func (p *publisher) run() {
	tick := time.NewTicker(returnsPoll)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-p.t.ctx.Done():
			return
		}
		p.mu.Lock()
		p.takeLocked()
		dead := p.dead
		p.mu.Unlock()
		if dead {
			return
		}
	}
}

// takeLocked records the returns and the close amqp091 has handed over,
// lets the answered publishes at the head of inflight go, and closes a
// retiring channel once nothing is in flight on it.
func (p *publisher) takeLocked() {
	p.takeReturnsLocked()
	for p.closes != nil {
		select {
		case e, ok := <-p.closes:
			p.dead = true
			if !ok {
				p.closes = nil
				if p.cause == nil {
					p.cause = errChannelClosed
				}
				continue
			}
			if e != nil {
				p.cause = e
			}
			continue
		default:
		}
		break
	}
	for len(p.inflight) > 0 && p.inflight[0].dc != nil && isClosed(p.inflight[0].dc.Done()) {
		p.takeReturnsLocked() // its return, if any, came before its answer
		p.noteRefusalLocked(p.inflight[0])
		p.inflight[0] = nil
		p.inflight = p.inflight[1:]
	}
	if p.retiring && !p.closing && len(p.inflight) == 0 && !p.dead {
		p.closing = true
		p.t.goOwned(func() { _ = p.ch.Close() }) // run sees the channel close and ends
	}
}

func (p *publisher) takeReturnsLocked() {
	for p.returns != nil {
		select {
		case r, ok := <-p.returns:
			if !ok {
				p.returns = nil
				continue
			}
			p.returned(r)
			continue
		default:
		}
		return
	}
}

// noteRefusalLocked marks pe, answered, refused when it was nacked: its
// deferred confirmation failed while the channel was open (amqp091 marks
// the channel closed before it fails the confirmations in flight on it).
//
// A refusal retires the channel: later publishes go on a new one, and this
// one closes once its last publish is answered. RabbitMQ 3.10.8 refuses
// every publish, for good, on a channel that first published to a quorum
// queue while the queue's leader was being replaced, where a new channel is
// accepted at once (measured on a three-node cluster). A refusal for a good
// reason (a full queue with x-overflow reject-publish) costs only a channel.
// As nothing is closed while a publish is in flight and unanswered, a nack
// on a channel closed here is always seen as one; on a channel the broker
// or the connection closed, a nack that came just before the close may be
// taken for the close (not confirmed, the safe side).
func (p *publisher) noteRefusalLocked(pe *pending) {
	if pe.refused || pe.dc.Acked() || p.ch.IsClosed() {
		return
	}
	pe.refused = true
	if !p.retiring {
		p.retiring = true
		p.t.publishing.log().Info("rabbitmq: the broker refused a publish; publishing on a new channel", "delivery_tag", pe.dc.DeliveryTag)
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// returned marks the in-flight publish the return is about. A return names
// no delivery tag, only the exchange, routing key and message properties; it
// is matched on (exchange, routing key, message id). RabbitMQ sends it before
// that publish's ack, so its publish is still in flight. When several
// publishes in flight share those three values, the return cannot be
// attributed: all of them are marked, so each reports ErrUnroutable — a
// spurious failure the caller can retry — rather than one of them reporting
// a confirm for a message that reached no queue.
func (p *publisher) returned(r amqp.Return) {
	var match []*pending
	for _, pe := range p.inflight {
		if pe.mandatory && !pe.returned && pe.exchange == r.Exchange && pe.key == r.RoutingKey && pe.msgID == r.MessageId {
			match = append(match, pe)
		}
	}
	for _, pe := range match {
		pe.returned = true
	}
}

// Release sends what the socket holds back, this publish among it.
func (pe *pending) Release() { pe.p.sock.Release() }

// Answer is the publish's answer, once amqp091 has closed its deferred
// confirmation: confirmed, returned (ErrUnroutable), refused (ErrRefused), or
// failed with the channel. For a channel that closed, everything in flight
// is not confirmed (the broker may have routed those messages or not, and
// will never say), except when the broker closed it because a publish's
// exchange does not exist (404 NOT_FOUND "no exchange 'X' in vhost '/'"):
// the publishes to X were certainly not routed (RabbitMQ drops what follows
// on a closing channel), and fail with transport.ErrNotFound; the others do
// not match ErrNotFound, as their exchange may exist. (An X deleted while
// publishes to it were in flight is the one case this misjudges: the
// earliest of them may have been routed.)
func (pe *pending) Answer() error {
	p := pe.p
	p.mu.Lock()
	p.takeLocked()
	p.noteRefusalLocked(pe)
	returned, refused, cause := pe.returned, pe.refused, p.cause
	p.mu.Unlock()
	if pe.dc.Acked() && !returned {
		return nil
	}
	what := fmt.Sprintf("rabbitmq: publish to exchange %q with routing key %q", pe.exchange, pe.key)
	switch {
	case pe.dc.Acked():
		return fmt.Errorf("%s: %w", what, transport.ErrUnroutable)
	case refused:
		return fmt.Errorf("%s: %w", what, transport.ErrRefused)
	case p.t.isClosed():
		return fmt.Errorf("%s: %w: %w", what, ErrNotConfirmed, transport.ErrClosed)
	}
	if ae, ok := errors.AsType[*amqp.Error](cause); ok && ae.Code == amqp.NotFound {
		if noExchange(ae.Reason, pe.exchange) {
			return fmt.Errorf("%s: the message was not routed: %w", what, classify(cause))
		}
		return fmt.Errorf("%s: %w: the channel closed: %w", what, ErrNotConfirmed, cause)
	}
	if cause == nil {
		cause = errChannelClosed
	}
	return fmt.Errorf("%s: %w: %w", what, ErrNotConfirmed, classify(cause))
}

// noExchange reports whether reason is RabbitMQ's 404 for a publish to
// exchange: "NOT_FOUND - no exchange 'X' in vhost 'V'", which RabbitMQ cuts
// to 252 bytes and "..." when longer than 255.
func noExchange(reason, exchange string) bool {
	want := "NOT_FOUND - no exchange '" + exchange + "' in vhost '"
	if cut, ok := strings.CutSuffix(reason, "..."); ok && len(reason) == 255 {
		return strings.HasPrefix(want, cut) || strings.HasPrefix(cut, want)
	}
	return strings.HasPrefix(reason, want)
}
