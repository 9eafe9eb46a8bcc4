package transport

import (
	"context"
	"errors"
	"iter"
	"strconv"
	"sync"
	"time"
)

// Transport is a connection to a broker: what the acemq package needs of
// RabbitMQ, and what the in-process memory:// broker offers too. A Transport
// recovers from a lost connection by itself; operations made while it is
// reconnecting wait for it (or for their context).
type Transport interface {
	Declarer

	// String names the broker for errors and logs, without a password.
	String() string

	// InspectQueue reports a queue's depth and consumers without changing
	// it; a missing queue is an error matching ErrNotFound.
	InspectQueue(ctx context.Context, queue string) (QueueState, error)
	// PurgeQueue removes every ready message of a queue and says how many.
	PurgeQueue(ctx context.Context, queue string) (int, error)
	// DeleteQueue deletes a queue and says how many messages it held.
	DeleteQueue(ctx context.Context, queue string) (int, error)

	// Publish sends p and returns once it is written, with a Confirmation
	// that resolves when the broker confirms it (nil), returns it as
	// unroutable (ErrUnroutable, mandatory publishes only), refuses it
	// (ErrRefused), has no such exchange (ErrNotFound: the message was not
	// routed, and the error does not match ErrNotConfirmed), or is lost
	// with the connection (ErrNotConfirmed). Many
	// publishes may be in flight at once. While the broker blocks
	// publishers, Publish waits until it unblocks, or fails with ErrBlocked
	// when ctx ends first.
	Publish(ctx context.Context, p Publishing) (*Confirmation, error)

	// Get takes one message from queue (basic.get, to be settled); ok is
	// false when the queue is empty. RabbitMQ refuses basic.get on a
	// quorum queue with single active consumer, empty or not (405
	// RESOURCE_LOCKED, an error matching none of this package's), and on a
	// stream (540 NOT_IMPLEMENTED, which closes the connection).
	Get(ctx context.Context, queue string) (d Delivery, ok bool, err error)

	// Take opens a channel for taking messages from queue one at a time
	// (basic.get), for going through a queue: what it takes stays with it,
	// unacknowledged, until settled or until the Taker is closed, when the
	// broker puts what is still unsettled back in its place in the queue.
	// A missing queue is an error matching ErrNotFound. A Taker does not
	// recover: after a lost connection, Next fails with ErrStaleDelivery
	// and the broker has requeued what it held. Where Get is refused, Take
	// succeeds and its first Next fails as Get does, ending the Taker.
	Take(ctx context.Context, queue string) (Taker, error)

	// Consume subscribes to queue. Before every subscription, the first and
	// each one after a lost connection, it runs opts.Setup, so that what the
	// consumer needs is declared again. The Subscription's Deliveries go on
	// until it is cancelled or the Transport closed.
	Consume(ctx context.Context, queue string, opts ConsumeOptions) (Subscription, error)

	// Ping makes a round trip to the broker (a channel opened and closed):
	// nil once the broker has answered. While reconnecting it waits, as
	// every operation does, for the connection or for ctx.
	Ping(ctx context.Context) error

	// State reports the connection as it stands: open or reconnecting,
	// blocked by a broker alarm, and the last failure.
	State() State

	// Notify has f called with each connection Event from now on, in the
	// order they happen and one at a time, never while the Transport holds
	// a lock of its own: f must return quickly and must not call back into
	// the Transport. Each call replaces the f before it; nil stops the
	// calls.
	Notify(f func(Event))

	// Close closes the connection; nothing recovers after it.
	Close() error
}

// State is what a Transport knows of its connection.
type State struct {
	// Connected: a connection is open. False while reconnecting and after
	// Close.
	Connected bool
	// Closed: Close was called; nothing reconnects.
	Closed bool
	// Blocked: the broker blocks this connection's publishes (a memory or
	// disk alarm), for BlockedReason. RabbitMQ says so to a connection only
	// once it publishes during the alarm.
	Blocked       bool
	BlockedReason string
	// Connects counts the connections opened, the first included; above 1
	// the Transport has recovered from a loss.
	Connects int
	// ServerVersion is the version the broker reported when the current
	// connection opened (its server properties), such as "4.0.5"; while
	// reconnecting, the last connection's. memory:// reports the RabbitMQ
	// version it emulates.
	ServerVersion string
	// LastError is the last connection failure (a lost connection or a
	// failed reconnect), at LastErrorAt; nil when there has been none.
	LastError   error
	LastErrorAt time.Time
	// Address is the broker address in use (or, while reconnecting, last
	// used), without its password: after a failover, the node followed to.
	Address string
}

// Event is a change in a Transport's connection.
type Event struct {
	Kind EventKind
	// Address is the broker address involved (no password), when known.
	Address string
	// Reason is why the broker blocks publishing (EventBlocked).
	Reason string
	// Err is why the connection was lost (EventLost).
	Err error
}

// EventKind is what happened to the connection.
type EventKind uint8

const (
	// EventLost: the connection broke; the Transport reconnects.
	EventLost EventKind = iota + 1
	// EventRecovered: a new connection is open after a loss.
	EventRecovered
	// EventBlocked: the broker blocks publishing (a resource alarm).
	EventBlocked
	// EventUnblocked: publishing may go on. A blocked connection that is
	// lost reports it too, after EventLost: a new connection starts
	// unblocked.
	EventUnblocked
)

// String is "lost", "recovered", "blocked" or "unblocked".
func (k EventKind) String() string {
	switch k {
	case EventLost:
		return "lost"
	case EventRecovered:
		return "recovered"
	case EventBlocked:
		return "blocked"
	case EventUnblocked:
		return "unblocked"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Publishing is one message to publish.
type Publishing struct {
	Exchange   string
	RoutingKey string
	// Mandatory asks the broker to return the message when no queue takes it.
	Mandatory bool
	Message   Message
	// More says that the caller publishes again at once (the next
	// message of its batch): the transport may hold this one's bytes back
	// briefly, to send a run of publishes in one write. transport/rabbitmq
	// sends them with the next write that is not held back, when the
	// Confirmation of a publish is waited on, or a millisecond later at the
	// latest; the broker answers each publish as it would otherwise.
	More bool
}

// QueueState is what InspectQueue reports.
type QueueState struct {
	Name      string
	Messages  int // ready for delivery
	Consumers int
}

// ConsumeOptions shape a subscription.
type ConsumeOptions struct {
	// Tag is the consumer tag; empty lets the transport choose one.
	Tag string
	// Prefetch bounds the deliveries not yet settled (basic.qos); 0 is
	// unlimited.
	Prefetch int
	// Setup runs before each subscription, on the first and after every
	// recovery, with a Declarer on the new connection.
	Setup func(ctx context.Context, d Declarer) error
	// Arguments, when set, gives the basic.consume arguments of each
	// subscription, asked again after every recovery, after Setup (so
	// that a stream consumer resumes after the last offset it handled
	// rather than where it first started). nil or an empty table sends
	// none.
	Arguments func() Table
}

// ConsumeArguments is opts' arguments for the next subscription: nil when
// it has none.
func (opts ConsumeOptions) ConsumeArguments() Table {
	if opts.Arguments == nil {
		return nil
	}
	if args := opts.Arguments(); len(args) > 0 {
		return args
	}
	return nil
}

// Taker takes messages from one queue on a channel of its own. Its
// deliveries are settled one by one, never together with another (no
// multiple ack), so that holding some back while settling others is safe.
type Taker interface {
	// Next takes the next ready message; ok is false when there is none.
	// After Close, or once the channel is gone (a lost connection, the
	// broker closing it), Next fails with an error matching
	// ErrStaleDelivery; after the Transport's Close, matching ErrClosed
	// too. The Next the broker answers with an exception fails with it,
	// and the channel is gone: a channel exception alone (ErrNotFound for
	// a queue deleted since), a connection exception matching
	// ErrStaleDelivery too.
	Next(ctx context.Context) (d Delivery, ok bool, err error)
	// Close closes the channel: the broker requeues every delivery not
	// yet settled, in its original place in a classic queue (at the front
	// of a quorum queue, in order). Settlements made before Close are sent
	// first. Closing twice is a no-op.
	Close() error
}

// Subscription is a consumer on a queue.
type Subscription interface {
	// Deliveries yields the deliveries in the ranging goroutine, with no
	// goroutine between it and the client library's (a hand-over costs a
	// wake-up per message). It ends once the subscription is cancelled, or
	// the transport closed, and every delivery received before has been
	// yielded; across a recovery it goes on. One range at a time; range
	// again after a break to go on. Keep ranging after a Cancel until it
	// ends: what is not taken holds the channel open.
	Deliveries() iter.Seq[Delivery]
	// Cancel stops new deliveries (basic.cancel). Deliveries already
	// received can still be settled.
	Cancel(ctx context.Context) error
}

// FromChan yields what ch carries until it closes: the Deliveries of a
// Subscription fed by a goroutine of its own.
func FromChan(ch <-chan Delivery) iter.Seq[Delivery] {
	return func(yield func(Delivery) bool) {
		for d := range ch {
			if !yield(d) {
				return
			}
		}
	}
}

// Delivery is a message delivered to a consumer or taken with Get.
type Delivery struct {
	Message
	Exchange    string
	RoutingKey  string
	Redelivered bool
	// Settler settles the delivery on the channel it came from; after that
	// channel is lost, settling fails with ErrStaleDelivery and the broker
	// delivers the message again.
	Settler Settler
}

// Settler acknowledges one delivery.
type Settler interface {
	// Ack acknowledges the delivery. A transport may send it a moment later
	// together with others (transport/rabbitmq holds acks back into one
	// multiple ack), but before its channel or connection closes cleanly;
	// an ack lost with a broken connection means a redelivery, as always.
	Ack() error
	// Nack with requeue true puts the message back on its queue; false
	// dead-letters it through the queue's x-dead-letter-exchange, or drops it.
	Nack(requeue bool) error
	Reject(requeue bool) error
}

func (d Delivery) Ack() error                { return d.Settler.Ack() }
func (d Delivery) Nack(requeue bool) error   { return d.Settler.Nack(requeue) }
func (d Delivery) Reject(requeue bool) error { return d.Settler.Reject(requeue) }

// Errors every Transport reports the same way; match them with errors.Is.
var (
	// ErrNotFound: the queue or exchange does not exist (AMQP NOT_FOUND).
	// A publish to a missing exchange fails with it: certainly not routed.
	ErrNotFound = errors.New("not found")
	// ErrPreconditionFailed: a redeclaration differs from what exists
	// (AMQP PRECONDITION_FAILED).
	ErrPreconditionFailed = errors.New("precondition failed")
	// ErrUnroutable: a mandatory publish reached no queue and came back.
	ErrUnroutable = errors.New("unroutable: no queue is bound for this exchange and routing key")
	// ErrRefused: the broker refused the publish (a negative confirm).
	ErrRefused = errors.New("refused by the broker")
	// ErrBlocked: the broker blocks publishers (a resource alarm).
	ErrBlocked = errors.New("blocked by the broker")
	// ErrStaleDelivery: the delivery's channel is gone; the broker will
	// deliver the message again.
	ErrStaleDelivery = errors.New("the delivery's channel is closed; the broker will redeliver it")
	// ErrClosed: the transport was closed.
	ErrClosed = errors.New("transport closed")
	// ErrNotConfirmed: the connection went away before the broker confirmed
	// the publish; the message may or may not have reached a queue.
	ErrNotConfirmed = errors.New("not confirmed: the connection closed first; the message may or may not have been routed")
)

// Confirmation is the broker's answer to one publish.
type Confirmation struct {
	done <-chan struct{}
	once sync.Once
	err  error
	// answer, when set, reads the answer once done has closed (Defer).
	answer Answerer
}

// NewConfirmation makes a pending confirmation and the function that
// resolves it; only the first call of resolve counts.
func NewConfirmation() (*Confirmation, func(error)) {
	done := make(chan struct{})
	c := &Confirmation{done: done}
	return c, func(err error) {
		c.once.Do(func() {
			c.err = err
			close(done)
		})
	}
}

// Answerer reads the answer of a deferred confirmation.
type Answerer interface {
	// Answer is called once, after done has closed, by the first Err or
	// Wait that sees it closed.
	Answer() error
	// Release sends at once whatever the transport still holds back
	// (Publishing.More); Wait calls it before it blocks.
	Release()
}

// Defer makes c, a zero Confirmation, one that is answered when done
// closes, by a's Answer: for a client library that signals each confirm
// by closing a channel of its own. A transport can embed the Confirmation
// in its record of the publish, so that answering costs no allocation and
// no goroutine.
func (c *Confirmation) Defer(done <-chan struct{}, a Answerer) {
	c.done, c.answer = done, a
}

// Done is closed when the broker has answered.
func (c *Confirmation) Done() <-chan struct{} { return c.done }

// Err is the answer once Done is closed: nil when confirmed.
func (c *Confirmation) Err() error {
	select {
	case <-c.done:
		return c.result()
	default:
		return errors.New("not confirmed yet")
	}
}

// result is the answer; done has closed.
func (c *Confirmation) result() error {
	if c.answer != nil {
		c.once.Do(func() { c.err = c.answer.Answer() })
	}
	return c.err
}

// Wait waits for the answer or for ctx, whichever comes first.
func (c *Confirmation) Wait(ctx context.Context) error {
	select {
	case <-c.done:
		return c.result()
	default:
	}
	if c.answer != nil {
		c.answer.Release() // nothing held back while the caller waits
	}
	select {
	case <-c.done:
		return c.result()
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
