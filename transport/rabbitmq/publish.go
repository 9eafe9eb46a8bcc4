package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"

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
// channel or connection was lost first. While the connection is being re-established
// Publish waits for it; while the broker blocks publishers it waits for the
// unblock, and fails with transport.ErrBlocked when ctx ends first.
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
		blocked, reason, unblocked := t.blocked, t.reason, t.unblocked
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

// publisher returns the publishing channel, opening one on the current
// connection when there is none or it closed.
func (t *Transport) publisher(ctx context.Context) (*publisher, error) {
	conn, err := t.connection(ctx)
	if err != nil {
		return nil, err
	}
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	if p := t.pub; p != nil && p.conn == conn && p.usable() && !p.ch.IsClosed() {
		return p, nil
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
		t:        t,
		conn:     conn,
		ch:       ch,
		confirms: ch.NotifyPublish(make(chan amqp.Confirmation, 256)),
		returns:  ch.NotifyReturn(make(chan amqp.Return, 64)),
		closes:   ch.NotifyClose(make(chan *amqp.Error, 1)),
	}
	if !t.goOwned(p.run) {
		_ = ch.Close()
		return nil, transport.ErrClosed
	}
	t.pub = p
	return p, nil
}

// publisher is one confirm-mode channel and the publishes in flight on it.
type publisher struct {
	t        *Transport
	conn     *amqp.Connection
	ch       *amqp.Channel
	confirms chan amqp.Confirmation
	returns  chan amqp.Return
	closes   chan *amqp.Error

	sendMu sync.Mutex // one basic.publish at a time, so delivery tags follow inflight's order

	mu       sync.Mutex
	dead     bool
	retiring bool       // refused a publish: takes no more, closes once inflight is empty
	inflight []*pending // in delivery-tag order
}

type pending struct {
	tag                  uint64
	exchange, key, msgID string
	mandatory            bool
	returned             bool
	resolve              func(error)
}

// usable reports whether the publisher takes new publishes.
func (p *publisher) usable() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.dead && !p.retiring
}

func (p *publisher) publish(pb transport.Publishing, msg amqp.Publishing) (*transport.Confirmation, error) {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	c, resolve := transport.NewConfirmation()
	pe := &pending{
		tag:       p.ch.GetNextPublishSeqNo(),
		exchange:  pb.Exchange,
		key:       pb.RoutingKey,
		msgID:     msg.MessageId,
		mandatory: pb.Mandatory,
		resolve:   resolve,
	}
	// In flight before it is sent: its return and confirm may come back
	// before Publish returns.
	p.mu.Lock()
	if p.dead || p.retiring {
		p.mu.Unlock()
		return nil, errRetry
	}
	p.inflight = append(p.inflight, pe)
	p.mu.Unlock()
	if err := p.ch.Publish(pb.Exchange, pb.RoutingKey, pb.Mandatory, false, msg); err != nil {
		p.mu.Lock()
		for i, q := range p.inflight {
			if q == pe {
				p.inflight = append(p.inflight[:i], p.inflight[i+1:]...)
				break
			}
		}
		p.mu.Unlock()
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
	return c, nil
}

// lostSocket says whether err is the connection's socket failing (reset,
// closed under a write, timed out), not a refusal of the publish.
func lostSocket(err error) bool {
	_, isNet := errors.AsType[net.Error](err)
	return isNet || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// run resolves the publishes in flight as confirms come back, until the
// channel closes.
//
// amqp091 reads frames in one goroutine and hands a basic.return to the
// returns channel before it goes on to the basic.ack that RabbitMQ sends
// after it, but the two Go channels lose that order. So before each confirm,
// every return already handed over is applied first.
func (p *publisher) run() {
	for {
		select {
		case r, ok := <-p.returns:
			if !ok {
				p.returns = nil
				continue
			}
			p.returned(r)
		case c, ok := <-p.confirms:
			if !ok {
				p.fail()
				return
			}
			p.drainReturns()
			p.confirmed(c)
		}
	}
}

func (p *publisher) drainReturns() {
	for {
		select {
		case r, ok := <-p.returns:
			if !ok {
				p.returns = nil
				return
			}
			p.returned(r)
		default:
			return
		}
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
	p.mu.Lock()
	defer p.mu.Unlock()
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

// confirmed resolves the publish with the confirm's delivery tag. amqp091
// hands confirms to NotifyPublish listeners in tag order, one per tag (it
// splits multiple acks and re-sequences), so it is the oldest in flight.
//
// A refusal retires the channel: later publishes go on a new one, and this
// one closes once its last confirm is in. RabbitMQ 3.10.8 refuses every
// publish, for good, on a channel that first published to a quorum queue
// while the queue's leader was being replaced, where a new channel is
// accepted at once (measured on a three-node cluster). A refusal for a good
// reason (a full queue with x-overflow reject-publish) costs only a channel.
//
// amqp091 gives up handing a confirm to a listener that has not taken it
// within 5 s (notifyAll's timeout): the publishes in flight before this
// confirm's tag lost theirs, and end as not confirmed (the broker may have
// routed them), rather than leave every later confirm unmatched.
func (p *publisher) confirmed(c amqp.Confirmation) {
	p.mu.Lock()
	var lost []*pending
	for len(p.inflight) > 0 && p.inflight[0].tag < c.DeliveryTag {
		lost = append(lost, p.inflight[0])
		p.inflight[0] = nil
		p.inflight = p.inflight[1:]
	}
	var pe *pending
	if len(p.inflight) > 0 && p.inflight[0].tag == c.DeliveryTag {
		pe = p.inflight[0]
		p.inflight[0] = nil
		p.inflight = p.inflight[1:]
	}
	retire := !c.Ack && !p.retiring
	p.retiring = p.retiring || !c.Ack
	closeNow := p.retiring && len(p.inflight) == 0 && !p.dead
	p.mu.Unlock()
	for _, l := range lost {
		l.resolve(fmt.Errorf("rabbitmq: publish to exchange %q with routing key %q: %w: amqp091 dropped its confirm (delivery tag %d)",
			l.exchange, l.key, ErrNotConfirmed, l.tag))
	}
	if retire {
		p.t.log.Info("rabbitmq: the broker refused a publish; publishing on a new channel", "delivery_tag", c.DeliveryTag)
	}
	if closeNow {
		p.t.goOwned(func() { _ = p.ch.Close() }) // run sees the channel close and ends
	}
	if pe == nil {
		p.t.log.Error("rabbitmq: a publisher confirm matches no publish in flight", "delivery_tag", c.DeliveryTag)
		return
	}
	switch {
	case !c.Ack:
		pe.resolve(fmt.Errorf("rabbitmq: publish to exchange %q with routing key %q: %w", pe.exchange, pe.key, transport.ErrRefused))
	case pe.returned:
		pe.resolve(fmt.Errorf("rabbitmq: publish to exchange %q with routing key %q: %w", pe.exchange, pe.key, transport.ErrUnroutable))
	default:
		pe.resolve(nil)
	}
}

// fail resolves everything still in flight once the channel has closed: the
// broker may have routed those messages or not, and will never say. Except
// when it closed the channel because a publish's exchange does not exist
// (404 NOT_FOUND "no exchange 'X' in vhost '/'"): that publish, the first in
// flight to X, was certainly not routed, nor any to X after it (RabbitMQ
// drops what follows on a closing channel), and they fail with
// transport.ErrNotFound rather than ErrNotConfirmed. The others in flight
// are not confirmed, and do not match ErrNotFound: their exchange may exist.
// (An X deleted while publishes to it were in flight is the one case this
// misjudges: the earliest of them may have been routed.)
func (p *publisher) fail() {
	// amqp091 sends the close reason, if any, and closes p.closes before it
	// closes the confirm listeners.
	var cause error = errors.New("channel closed")
	select {
	case e := <-p.closes:
		if e != nil {
			cause = e
		}
	default:
	}
	p.mu.Lock()
	p.dead = true
	inflight := p.inflight
	p.inflight = nil
	p.mu.Unlock()
	closed := p.t.isClosed()
	missing, hasMissing := "", false
	if ae, ok := errors.AsType[*amqp.Error](cause); ok && ae.Code == amqp.NotFound {
		for _, pe := range inflight {
			if noExchange(ae.Reason, pe.exchange) {
				missing, hasMissing = pe.exchange, true
				break
			}
		}
	}
	for _, pe := range inflight {
		what := fmt.Sprintf("rabbitmq: publish to exchange %q with routing key %q", pe.exchange, pe.key)
		switch {
		case closed:
			pe.resolve(fmt.Errorf("%s: %w: %w", what, ErrNotConfirmed, transport.ErrClosed))
		case hasMissing && pe.exchange == missing:
			pe.resolve(fmt.Errorf("%s: the message was not routed: %w", what, classify(cause)))
		case hasMissing:
			pe.resolve(fmt.Errorf("%s: %w: the channel closed: %w", what, ErrNotConfirmed, cause))
		default:
			pe.resolve(fmt.Errorf("%s: %w: %w", what, ErrNotConfirmed, classify(cause)))
		}
	}
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
