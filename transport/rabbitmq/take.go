package rabbitmq

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/transport"
)

// Take opens a channel on the current connection for taking messages from
// queue with basic.get, after checking on it that the queue exists (a
// passive declare). Every Next gets on that one channel, so a Taker can hold
// any number of deliveries (Get opens a channel per message, and a
// connection has at most channel_max). Its deliveries are settled one by
// one: its channel never holds acks back into a multiple ack, which would
// settle the deliveries held back as well. The Taker stays on its
// connection: once that is lost, Next and the settlement of what it held
// fail with transport.ErrStaleDelivery, and the broker requeues what it
// held.
func (t *Transport) Take(ctx context.Context, queue string) (transport.Taker, error) {
	var cc *consumerChannel
	err := t.onConnection(ctx, func(conn *amqp.Connection) error {
		ch, err := onChannel(ctx, t, conn, func(ch *amqp.Channel) (*amqp.Channel, bool, error) {
			if _, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil); err != nil {
				return nil, false, err
			}
			return ch, true, nil
		})
		if ch != nil {
			cc = &consumerChannel{t: t, conn: conn, ch: ch, queue: queue, ackBatch: 1}
		}
		return err
	})
	if err != nil {
		return nil, mapErr("take from queue "+queue, err)
	}
	return &taker{cc: cc, turn: make(chan struct{}, 1)}, nil
}

// taker is a Taker on one consumerChannel, which is retired (and closed)
// only by Close.
type taker struct {
	cc *consumerChannel
	// turn is held by the basic.get in flight and by Close: amqp091 does
	// not pair concurrent calls on one channel with their replies.
	turn chan struct{}
}

// Next takes the next ready message with basic.get. When ctx ends before
// the broker answers, a message it then hands over is requeued at once, in
// its place, for the next Next. After Close, or once the channel is gone,
// Next fails with an error matching transport.ErrStaleDelivery (and
// transport.ErrClosed after the Transport's Close). The broker's exception
// in answer to its basic.get is the error: a channel exception's alone
// (NOT_FOUND, matching transport.ErrNotFound; a quorum queue with single
// active consumer's RESOURCE_LOCKED, matching none), a connection
// exception's (a stream's NOT_IMPLEMENTED) matching
// transport.ErrStaleDelivery too.
func (k *taker) Next(ctx context.Context) (transport.Delivery, bool, error) {
	cc := k.cc
	fail := func(err error) (transport.Delivery, bool, error) {
		return transport.Delivery{}, false, fmt.Errorf("rabbitmq: take from %s: %w", cc.queue, err)
	}
	if err := ctx.Err(); err != nil {
		return fail(context.Cause(ctx))
	}
	select {
	case k.turn <- struct{}{}:
	case <-ctx.Done():
		return fail(context.Cause(ctx))
	}
	if err := k.gone(); err != nil {
		<-k.turn
		return fail(err)
	}
	type got struct {
		d   amqp.Delivery
		ok  bool
		err error
	}
	g, err := await(ctx, cc.t, func() got {
		d, ok, err := cc.ch.Get(cc.queue, false)
		return got{d, ok, err}
	}, func(g got, taken bool) {
		if g.ok && !taken {
			_ = g.d.Nack(false, true) // a failure: the channel is gone, and the broker requeues it
		}
		<-k.turn
	})
	ae, exception := errors.AsType[*amqp.Error](g.err)
	switch {
	case errors.Is(err, transport.ErrClosed):
		return fail(cmp.Or(k.gone(), err))
	case err != nil:
		return fail(err)
	case exception && ae.Server && !ae.Recover:
		// A connection exception in answer to this basic.get (a stream:
		// NOT_IMPLEMENTED): stale, and why, whether or not the Transport
		// has seen the connection go yet.
		return fail(fmt.Errorf("%w: %w", transport.ErrStaleDelivery, classify(g.err)))
	case g.err != nil && (errors.Is(g.err, amqp.ErrClosed) || !cc.t.main.current(cc.conn)):
		return fail(cmp.Or(k.gone(), transport.ErrStaleDelivery))
	case g.err != nil:
		return fail(classify(g.err)) // a channel error, such as 404 once the queue is deleted
	case !g.ok:
		return transport.Delivery{}, false, nil
	}
	return cc.delivery(g.d), true, nil
}

// gone is Next's error once the Taker is closed or its channel gone.
func (k *taker) gone() error {
	if err := k.cc.gone(); err != nil {
		return err
	}
	k.cc.mu.Lock()
	defer k.cc.mu.Unlock()
	if k.cc.closed {
		return transport.ErrStaleDelivery
	}
	return nil
}

// Close closes the channel, once the basic.get in flight (if any) is
// answered; the broker requeues every delivery not settled, in its place.
// Settlements made before are sent first: none is held back. A channel
// already gone with its connection closes without an error.
func (k *taker) Close() error {
	k.turn <- struct{}{}
	defer func() { <-k.turn }()
	err := k.cc.closeNow()
	if errors.Is(err, amqp.ErrClosed) {
		err = nil // gone already, and what it held with it
	}
	return mapErr("close the taker of "+k.cc.queue, err)
}
