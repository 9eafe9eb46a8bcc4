package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/lenient"
	"github.com/acemq-go/acemq/transport"
)

// Failure is what a consumer does when a message fails.
type Failure uint8

const (
	// Stop ends the consumer at the message that failed, which stays in
	// the stream: Err says its offset, and a consumer started At it reads
	// it again. The default.
	Stop Failure = iota
	// Skip copies the message to S.dlq (a body that does not decode to
	// S.parked), its reason in x-acemq-error, and goes on with the next;
	// a copy that fails stops the consumer as Stop does.
	Skip
)

func (f Failure) String() string {
	if f == Skip {
		return "skip"
	}
	return "stop"
}

// Options shape a stream consumer.
type Options struct {
	// Offset is where it starts (the zero Offset is Next).
	Offset Offset
	// Prefetch is how many deliveries the broker sends ahead; 0 is
	// contract.DefaultStreamPrefetch (10). RabbitMQ refuses a stream
	// consumer without one.
	Prefetch int
	// OnFailure is Stop (the default) or Skip.
	OnFailure Failure
	// Codec decodes bodies; nil is acemq.JSON.
	Codec acemq.Codec
	// Tag names the consumer on the broker.
	Tag string
}

// Message is a message read from a stream.
type Message[T any] struct {
	Body     T
	Envelope acemq.Envelope
	// Offset is the message's place in the stream, from its delivery's
	// x-stream-offset header.
	Offset int64
	// Raw is the body as it was delivered.
	Raw        []byte
	Exchange   string
	RoutingKey string
}

// Handler handles one message and says what becomes of it, as an
// acemq.Handler does: acemq.Accept is done; any other decision is a
// failure (see Failure), and so is a panic. With Skip, Reject(err) copies
// the message to S.dlq and Park(err) to S.parked, err its reason; a stream
// has no retries, so Retry(err) goes to S.dlq at once (exhausted 1
// attempts: err). Requeue stops the consumer whatever Failure says: a
// stream cannot take a message back.
type Handler[T any] func(ctx context.Context, m Message[T]) acemq.Decision

// StoppedError is why a consumer stopped: the message at Offset failed.
type StoppedError struct {
	Stream string
	Offset int64
	Err    error
}

func (e *StoppedError) Error() string {
	return fmt.Sprintf("stream: %s stopped at offset %d: %v (consume from stream.At(%d) to read it again)", e.Stream, e.Offset, e.Err, e.Offset)
}

func (e *StoppedError) Unwrap() error { return e.Err }

// Consumer reads one stream until Close, or until a failure stops it. It is
// an acemq.Consumer underneath (acemq.WithAppendOnly): its deliveries are
// observed, counted and logged as any consumer's.
type Consumer struct {
	stream string
	cons   *acemq.Consumer
	done   chan struct{}
	once   sync.Once

	mu       sync.Mutex
	position int64 // the last offset handled (or skipped); -1 for none
	err      error
	failed   failure // the handler's last error, for the StoppedError
}

// failure is a handler's error at an offset.
type failure struct {
	offset int64
	err    error
}

// Consume reads stream with h from o.Offset. Each delivery is handled, then
// acknowledged, one at a time in the stream's order. After a lost
// connection it subscribes again from the offset after the last one
// handled (the first subscription's offset while none was). With Skip, it
// declares S.dlq and S.parked (and acemq.dlx) before subscribing.
func Consume[T any](ctx context.Context, c *acemq.Conn, stream string, h Handler[T], o Options) (*Consumer, error) {
	switch {
	case stream == "":
		return nil, errors.New("stream: consume: the stream has no name")
	case h == nil:
		return nil, fmt.Errorf("stream: consume %s: the handler is nil", stream)
	case o.Prefetch < 0:
		return nil, fmt.Errorf("stream: consume %s: the prefetch is %d; want at least 1 (0 for %d)", stream, o.Prefetch, contract.DefaultStreamPrefetch)
	case o.OnFailure != Stop && o.OnFailure != Skip:
		return nil, fmt.Errorf("stream: consume %s: unknown failure policy %d; want Stop or Skip", stream, o.OnFailure)
	}
	if err := o.Offset.validate(); err != nil {
		return nil, fmt.Errorf("stream: consume %s: %w", stream, err)
	}
	if o.Prefetch == 0 {
		o.Prefetch = contract.DefaultStreamPrefetch
	}
	if o.Codec == nil {
		o.Codec = acemq.JSON
	}
	cons := &Consumer{stream: stream, done: make(chan struct{}), position: -1}
	opts := []acemq.ConsumeOption{acemq.WithConcurrency(1), acemq.WithPrefetch(o.Prefetch), acemq.WithConsumerTag(o.Tag), acemq.WithCodec(o.Codec),
		acemq.WithAppendOnly(acemq.AppendOnly{
			Arguments: func() transport.Table {
				return transport.Table{contract.ArgStreamOffset: cons.resumeFrom(o.Offset).argument()}
			},
			SetAside: o.OnFailure == Skip,
			Settled:  cons.settled,
		})}
	inner, err := acemq.Consume(ctx, c, stream, handler(cons, h), opts...)
	if err != nil {
		return nil, fmt.Errorf("stream: consume %s: %w", stream, err)
	}
	cons.cons = inner
	return cons, nil
}

// handler is h as the consumer's, with the delivery's offset; it keeps a
// failure's error for the StoppedError. A delivery without its offset
// stops the consumer whatever OnFailure says (acemq's append-only
// consumer halts at a Requeue).
func handler[T any](c *Consumer, h Handler[T]) acemq.Handler[T] {
	return func(ctx context.Context, m acemq.Message[T]) acemq.Decision {
		offset, ok := lenient.Int(m.Envelope.Headers[contract.ArgStreamOffset])
		if !ok {
			return acemq.Requeue(fmt.Errorf("stream: %s: a delivery without a readable %s header (%v)",
				c.stream, contract.ArgStreamOffset, m.Envelope.Headers[contract.ArgStreamOffset]))
		}
		d := h(ctx, Message[T]{Body: m.Body, Envelope: m.Envelope, Offset: int64(offset), Raw: m.Raw,
			Exchange: m.Exchange, RoutingKey: m.RoutingKey})
		if err := d.Err(); err != nil {
			c.mu.Lock()
			c.failed = failure{offset: int64(offset), err: err}
			c.mu.Unlock()
		}
		return d
	}
}

// resumeFrom is where the next subscription starts: after the last offset
// handled, or from the first.
func (c *Consumer) resumeFrom(first Offset) Offset {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.position >= 0 {
		return At(c.position + 1)
	}
	return first
}

// settled follows the consumer's settlements: a message accepted or set
// aside moves the position; the first other failure is where it stopped.
func (c *Consumer) settled(d *acemq.DeliveryInfo, s acemq.SettleResult) {
	offset, ok := lenient.Int(d.Headers[contract.ArgStreamOffset])
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.err != nil || s.ReasonClass.IsUnhandled():
		return // sent ahead, acknowledged unhandled as the consumer closed or paused
	case s.Outcome != contract.Requeued, s.ReasonClass == contract.ReasonAckFailed:
		// Handled or set aside (a lost ack: the next subscription
		// starts after the position anyway).
		c.position = int64(offset)
		return
	}
	err := errors.New(s.Reason)
	if !ok {
		c.err = err
	} else {
		if c.failed.err != nil && c.failed.offset == int64(offset) && s.ReasonClass != contract.ReasonRepublishFailed {
			err = c.failed.err // the handler's own, for errors.Is
		}
		c.err = &StoppedError{Stream: c.stream, Offset: int64(offset), Err: err}
	}
	c.finish()
}

// finish closes Done, once.
func (c *Consumer) finish() { c.once.Do(func() { close(c.done) }) }

// Done is closed once the consumer has stopped: Close, or a failure (Err).
func (c *Consumer) Done() <-chan struct{} { return c.done }

// Err is why the consumer stopped on its own (a *StoppedError for a failed
// message), nil while it runs and after Close.
func (c *Consumer) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Position is the offset of the last message handled or skipped; ok is
// false before the first.
func (c *Consumer) Position() (offset int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.position, c.position >= 0
}

// Counts are how many messages were handled and how many skipped.
func (c *Consumer) Counts() (handled, skipped int64) {
	s := c.cons.Stats()
	return s.Accepted, s.DeadLettered + s.Parked
}

// Stats are the underlying acemq.Consumer's: a message stopped at, or
// acknowledged unhandled, is Requeued (it stays in the stream).
func (c *Consumer) Stats() acemq.Stats { return c.cons.Stats() }

// Close stops reading: the message being handled finishes, the others
// sent ahead are acknowledged unhandled (the stream keeps them; start again
// At(Position()+1)). It waits for that, or for ctx.
func (c *Consumer) Close(ctx context.Context) error {
	_, err := c.cons.Close(ctx)
	c.finish()
	if errors.Is(err, acemq.ErrClosed) { // the subscription ended at a stop, or closed before
		err = nil
	}
	if err == nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}
