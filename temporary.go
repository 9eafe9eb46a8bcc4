package acemq

import (
	"context"
	"errors"
	"iter"

	"github.com/acemq-go/acemq/transport"
)

// TemporaryConsumer consumes a queue of its connection's own: classic,
// exclusive and auto-delete, so that it goes with the connection, and
// declared again on each new one. A request client's reply queue is one.
// Its deliveries come raw and unsettled; it declares no ladder and no
// dead-letter queues, and the Observer is not told of them (package request
// tells the round trip instead).
type TemporaryConsumer struct {
	queue string
	sub   transport.Subscription
}

// ConsumeTemporary declares queue as a temporary queue and consumes it.
// ctx bounds the start; the consumer runs until Close or the Conn's Close.
func (c *Conn) ConsumeTemporary(ctx context.Context, queue string) (*TemporaryConsumer, error) {
	q := transport.Queue{Name: queue, Type: transport.Classic, Exclusive: true, AutoDelete: true}
	sub, err := c.transport.Consume(ctx, queue, transport.ConsumeOptions{
		Setup: func(ctx context.Context, d transport.Declarer) error { return d.DeclareQueue(ctx, q) },
	})
	if err != nil {
		return nil, err
	}
	return &TemporaryConsumer{queue: queue, sub: sub}, nil
}

// Queue is the consumer's queue.
func (t *TemporaryConsumer) Queue() string { return t.queue }

// Deliveries yields the deliveries in the ranging goroutine, until the
// consumer is closed, or its Conn, and every delivery received before has
// been yielded; across a recovery it goes on. One range at a time; keep
// ranging after Close until it ends.
func (t *TemporaryConsumer) Deliveries() iter.Seq[RawDelivery] { return t.sub.Deliveries() }

// Close stops the deliveries; those already received can still be
// settled. Once the Conn is closed there is nothing to stop, and Close
// returns nil.
func (t *TemporaryConsumer) Close(ctx context.Context) error {
	if err := t.sub.Cancel(ctx); err != nil && !errors.Is(err, ErrClosed) {
		return err
	}
	return nil
}
