package stream

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"sync"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/lenient"
	"github.com/acemq-go/acemq/internal/retry"
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

// Handler handles one message: nil is done, an error a failure (see
// Failure). A panic is a failure too.
type Handler[T any] func(ctx context.Context, m Message[T]) error

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

// Consumer reads one stream until Close, or until a failure stops it.
type Consumer struct {
	conn   *acemq.Conn
	stream string
	sub    transport.Subscription
	done   chan struct{}

	mu       sync.Mutex
	position int64 // the last offset handled (or skipped); -1 for none
	err      error
	handled  int64
	skipped  int64
	closing  bool
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
	cons := &Consumer{conn: c, stream: stream, done: make(chan struct{}), position: -1}
	opts := transport.ConsumeOptions{Tag: o.Tag, Prefetch: o.Prefetch, Arguments: func() transport.Table {
		return transport.Table{contract.ArgStreamOffset: cons.resumeFrom(o.Offset).argument()}
	}}
	if o.OnFailure == Skip {
		opts.Setup = func(ctx context.Context, d transport.Declarer) error {
			return transport.DeclareAll(ctx, d, retry.DeadLetterDeclarations(stream, contract.DeadLetterExchange))
		}
	}
	sub, err := c.Transport().Consume(ctx, stream, opts)
	if err != nil {
		return nil, fmt.Errorf("stream: consume %s: %w", stream, err)
	}
	cons.sub = sub
	go cons.run(o, func(ctx context.Context, d transport.Delivery, offset int64) (undecodable bool, err error) {
		return handle(ctx, o.Codec, h, d, offset)
	})
	return cons, nil
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

// handle decodes d and runs h, a panic counting as a failure.
func handle[T any](ctx context.Context, codec acemq.Codec, h Handler[T], d transport.Delivery, offset int64) (undecodable bool, err error) {
	m := Message[T]{Envelope: acemq.ReadEnvelope(d.Message), Offset: offset, Raw: d.Body, Exchange: d.Exchange, RoutingKey: d.RoutingKey}
	if !codec.Reads(d.ContentType) {
		return true, fmt.Errorf("the content type %q is not one the codec (%s) reads", d.ContentType, codec.ContentType())
	}
	if err := codec.Unmarshal(d.ContentType, d.Body, &m.Body); err != nil {
		return true, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s%v\n%s", contract.ReasonTextPanicked, r, debug.Stack())
		}
	}()
	return false, h(ctx, m)
}

func (c *Consumer) run(o Options, handle func(context.Context, transport.Delivery, int64) (bool, error)) {
	defer close(c.done)
	ctx := context.Background()
	for d := range c.sub.Deliveries() {
		c.mu.Lock()
		over := c.closing || c.err != nil
		c.mu.Unlock()
		if over {
			_ = d.Ack() // never handled; the stream keeps it, and the position says where to resume
			continue
		}
		offset, ok := lenient.Int(d.Headers[contract.ArgStreamOffset])
		if !ok {
			c.stop(fmt.Errorf("stream: %s: a delivery without a readable %s header (%v)", c.stream, contract.ArgStreamOffset, d.Headers[contract.ArgStreamOffset]))
			_ = d.Ack()
			continue
		}
		undecodable, err := handle(ctx, d, int64(offset))
		if err != nil && o.OnFailure == Skip {
			if err = c.setAside(ctx, d, undecodable, err); err == nil {
				c.mu.Lock()
				c.skipped++
				c.mu.Unlock()
			}
		} else if err == nil {
			c.mu.Lock()
			c.handled++
			c.mu.Unlock()
		}
		if err != nil {
			c.stop(&StoppedError{Stream: c.stream, Offset: int64(offset), Err: err})
			_ = d.Ack()
			continue
		}
		c.mu.Lock()
		c.position = int64(offset)
		c.mu.Unlock()
		_ = d.Ack() // a lost ack: the next subscription starts after the position anyway
	}
}

// setAside copies d to S.dlq, or S.parked when it did not decode, with the
// reason; confirmed.
func (c *Consumer) setAside(ctx context.Context, d transport.Delivery, undecodable bool, cause error) error {
	target, reason := contract.DeadLetterQueue(c.stream), cause.Error()
	if undecodable {
		target, reason = contract.ParkedQueue(c.stream), contract.ReasonTextUndecodable+cause.Error()
	}
	m := d.Message
	m.Headers = maps.Clone(m.Headers)
	if m.Headers == nil {
		m.Headers = transport.Table{}
	}
	delete(m.Headers, contract.ArgStreamOffset) // the broker's, of this stream
	m.Headers[contract.HeaderError] = reason
	ctx, cancel := context.WithTimeout(ctx, acemq.DefaultConfirmTimeout)
	defer cancel()
	p, err := c.conn.Republish(ctx, target, m)
	if err == nil {
		err = p.Wait(ctx)
	}
	if err != nil {
		return fmt.Errorf("copying the failed message to %s: %w (the failure: %w)", target, err, cause)
	}
	return nil
}

// stop ends the subscription for err; the deliveries already sent are
// acknowledged unhandled.
func (c *Consumer) stop(err error) {
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	_ = c.sub.Cancel(context.Background())
}

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
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handled, c.skipped
}

// Close stops reading: the message being handled finishes, the others
// sent ahead are acknowledged unhandled (the stream keeps them; start again
// At(Position()+1)). It waits for that, or for ctx.
func (c *Consumer) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	err := c.sub.Cancel(ctx)
	select {
	case <-c.done:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	if errors.Is(err, transport.ErrClosed) {
		err = nil
	}
	return err
}
