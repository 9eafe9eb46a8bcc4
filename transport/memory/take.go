package memory

import (
	"context"
	"fmt"

	"github.com/acemq-go/acemq/transport"
)

// Take opens a channel for taking messages from queue one at a time, as
// transport/rabbitmq does: after checking that the queue exists (a passive
// declare), every Next is a basic.get on that one channel, which holds what
// it took until it is settled or the Taker closed. A missing queue is an
// error matching transport.ErrNotFound. The Taker stays on this connection:
// once a connection exception or the consumer timeout closes its channel,
// Next and the settlement of what it held fail with
// transport.ErrStaleDelivery, and what it held is back in the queue.
func (t *Transport) Take(ctx context.Context, queue string) (transport.Taker, error) {
	if err := shortstr(queue); err != nil {
		return nil, fmt.Errorf("memory: take from queue %s: %w", queue, err)
	}
	if err := t.begin(ctx); err != nil {
		return nil, err
	}
	defer t.b.mu.Unlock()
	q, err := t.b.queueFor(t.conn, queue)
	if err != nil {
		return nil, mapErr("take from queue "+queue, err)
	}
	t.b.used(q)
	ch := t.conn.newChannel(nil)
	ch.taking = true
	return &taker{t: t, queue: queue, ch: ch}, nil
}

// taker is a Taker: a channel with no consumer, which only Close (or the
// broker) closes.
type taker struct {
	t     *Transport
	queue string
	ch    *channel
}

// Next takes the head of the queue onto the Taker's channel. After Close, or
// once the channel is gone, it fails with an error matching
// transport.ErrStaleDelivery (and transport.ErrClosed after the Transport's
// Close). An error from the broker closes the channel, as RabbitMQ does,
// requeueing what it held: a channel exception (the queue deleted since:
// NOT_FOUND; a quorum queue with single active consumer: RESOURCE_LOCKED)
// is the error; a connection exception (a stream: NOT_IMPLEMENTED) closes
// the connection too, and is an error matching transport.ErrStaleDelivery
// as well.
func (k *taker) Next(ctx context.Context) (transport.Delivery, bool, error) {
	fail := func(err error) (transport.Delivery, bool, error) {
		return transport.Delivery{}, false, fmt.Errorf("memory: take from queue %s: %w", k.queue, err)
	}
	if err := ctx.Err(); err != nil {
		return fail(context.Cause(ctx))
	}
	b := k.t.b
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case k.t.closed:
		return fail(fmt.Errorf("%w: %w", transport.ErrClosed, transport.ErrStaleDelivery))
	case k.ch.closed:
		return fail(transport.ErrStaleDelivery)
	}
	d, ok, err := b.get(k.ch.conn, k.ch, k.queue)
	switch {
	case err != nil && err.connection:
		// The connection is gone, and what every channel on it held is
		// back in its queue: stale, and why.
		b.closeChannel(k.ch)
		if k.ch.conn == k.t.conn {
			defer k.t.events.flush() // after the unlock
			k.t.connectionError(err)
		}
		return fail(fmt.Errorf("%w: %w", transport.ErrStaleDelivery, classify(err)))
	case err != nil:
		b.closeChannel(k.ch)
		return fail(classify(err))
	}
	return d, ok, nil
}

// Close closes the Taker's channel: every delivery on it not settled is
// requeued in its place, redelivered. Closing it again, or after its
// channel or the Transport closed, does nothing.
func (k *taker) Close() error {
	b := k.t.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closeChannel(k.ch)
	return nil
}
