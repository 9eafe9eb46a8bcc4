package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/transport"
)

// onChannel runs fn on a channel of its own on conn, so that a channel error
// (a 406 on a redeclaration, a 404) closes nothing anyone else uses. The
// channel is closed afterwards unless fn asks to keep it (a delivery from
// basic.get must be settled on it) and the caller took the result.
func onChannel[T any](ctx context.Context, t *Transport, conn *amqp.Connection, fn func(*amqp.Channel) (T, bool, error)) (T, error) {
	type result struct {
		v    T
		ch   *amqp.Channel
		keep bool
		err  error
	}
	r, err := await(ctx, t, func() (r result) {
		ch, err := conn.Channel()
		if err != nil {
			r.err = fmt.Errorf("%w: %w", errNoChannel, err)
			return r
		}
		r.ch = ch
		r.v, r.keep, r.err = fn(ch)
		return r
	}, func(r result, taken bool) {
		if r.ch != nil && !(r.keep && taken) {
			_ = r.ch.Close() // a no-op when an error closed it; requeues an abandoned get
		}
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return r.v, r.err
}

// await runs fn in a goroutine the Transport owns, since amqp091's calls take
// no context, and returns its result, or ctx's error once ctx ends first.
// Then done runs, once, with the result and whether the caller took it: in
// fn's goroutine, or with the zero value at once when the Transport is
// closed (await's error is then transport.ErrClosed) or ctx has already
// ended (fn does not run: an ended context sends nothing, as on memory://).
func await[T any](ctx context.Context, t *Transport, fn func() T, done func(v T, taken bool)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		done(zero, false)
		return zero, context.Cause(ctx)
	}
	var (
		mu        sync.Mutex
		abandoned bool
		res       = make(chan T, 1)
	)
	started := t.goOwned(func() {
		v := fn()
		mu.Lock()
		taken := !abandoned
		if taken {
			res <- v
		}
		mu.Unlock()
		done(v, taken)
	})
	if !started {
		done(zero, false)
		return zero, transport.ErrClosed
	}
	select {
	case v := <-res:
		return v, nil
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		select {
		case v := <-res: // finished just now: keep the result
			return v, nil
		default:
			abandoned = true
			return zero, context.Cause(ctx)
		}
	}
}

// errNoChannel: no channel could be opened, so nothing was sent.
var errNoChannel = errors.New("cannot open a channel")

// onConnection runs fn with the current connection, and again with the next
// one when the connection was lost before fn could send anything.
func (t *Transport) onConnection(ctx context.Context, fn func(*amqp.Connection) error) error {
	for {
		conn, err := t.main.connection(ctx)
		if err != nil {
			return err
		}
		err = fn(conn)
		if errors.Is(err, errNoChannel) && conn.IsClosed() {
			continue
		}
		return err
	}
}

// do runs fn on a fresh channel of the current connection.
func (t *Transport) do(ctx context.Context, what string, fn func(*amqp.Channel) error) error {
	return t.onConnection(ctx, func(conn *amqp.Connection) error {
		return declarer{t, conn}.do(ctx, what, fn)
	})
}

// doValue runs fn on a fresh channel of the current connection and returns
// its value, which travels with fn's result: fn goes on in a goroutine of
// its own after ctx ends, so it must not write to a variable of a caller
// that has returned (the race detector caught InspectQueue doing so).
func doValue[T any](ctx context.Context, t *Transport, what string, fn func(*amqp.Channel) (T, error)) (T, error) {
	var v T
	err := t.onConnection(ctx, func(conn *amqp.Connection) (err error) {
		v, err = onChannel(ctx, t, conn, func(ch *amqp.Channel) (T, bool, error) {
			x, err := fn(ch)
			return x, false, err
		})
		return mapErr(what, err)
	})
	return v, err
}

// declarer declares on one connection: the current one for the Transport's
// own methods, the new one in a subscription's Setup.
type declarer struct {
	t    *Transport
	conn *amqp.Connection
}

func (d declarer) do(ctx context.Context, what string, fn func(*amqp.Channel) error) error {
	_, err := onChannel(ctx, d.t, d.conn, func(ch *amqp.Channel) (struct{}, bool, error) {
		return struct{}{}, false, fn(ch)
	})
	return mapErr(what, err)
}

func (d declarer) DeclareExchange(ctx context.Context, e transport.Exchange) error {
	return d.do(ctx, "declare "+e.String(), func(ch *amqp.Channel) error {
		return ch.ExchangeDeclare(e.Name, string(e.Type), e.Durable, false, false, false, nil)
	})
}

func (d declarer) DeclareQueue(ctx context.Context, q transport.Queue) error {
	return d.do(ctx, "declare "+q.String(), func(ch *amqp.Channel) error {
		_, err := ch.QueueDeclare(q.Name, q.Durable, q.AutoDelete, q.Exclusive, false, toAMQPTable(q.WireArguments()))
		return err
	})
}

func (d declarer) Bind(ctx context.Context, b transport.Binding) error {
	return d.do(ctx, "declare "+b.String(), func(ch *amqp.Channel) error {
		return ch.QueueBind(b.Queue, b.RoutingKey, b.Exchange, false, nil)
	})
}

// DeclareExchange declares e; a different existing exchange of that name is
// an error matching transport.ErrPreconditionFailed.
func (t *Transport) DeclareExchange(ctx context.Context, e transport.Exchange) error {
	return t.onConnection(ctx, func(conn *amqp.Connection) error {
		return declarer{t, conn}.DeclareExchange(ctx, e)
	})
}

// DeclareQueue declares q; an existing queue with other arguments is an error
// matching transport.ErrPreconditionFailed that names the argument.
func (t *Transport) DeclareQueue(ctx context.Context, q transport.Queue) error {
	return t.onConnection(ctx, func(conn *amqp.Connection) error {
		return declarer{t, conn}.DeclareQueue(ctx, q)
	})
}

// Bind binds a queue to an exchange; either missing is transport.ErrNotFound.
func (t *Transport) Bind(ctx context.Context, b transport.Binding) error {
	return t.onConnection(ctx, func(conn *amqp.Connection) error {
		return declarer{t, conn}.Bind(ctx, b)
	})
}

// InspectQueue reports a queue's ready messages and consumers (a passive
// declare).
func (t *Transport) InspectQueue(ctx context.Context, queue string) (transport.QueueState, error) {
	return doValue(ctx, t, fmt.Sprintf("inspect queue %s", queue), func(ch *amqp.Channel) (transport.QueueState, error) {
		q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
		return transport.QueueState{Name: q.Name, Messages: q.Messages, Consumers: q.Consumers}, err
	})
}

// Ping opens and closes a channel: two round trips to the broker.
func (t *Transport) Ping(ctx context.Context) error {
	return t.do(ctx, "ping the broker", func(*amqp.Channel) error { return nil })
}

// PurgeQueue removes a queue's ready messages and says how many.
func (t *Transport) PurgeQueue(ctx context.Context, queue string) (int, error) {
	return doValue(ctx, t, fmt.Sprintf("purge queue %s", queue), func(ch *amqp.Channel) (int, error) {
		return ch.QueuePurge(queue, false)
	})
}

// DeleteQueue deletes a queue and says how many messages it held; deleting a
// queue that does not exist succeeds with 0.
func (t *Transport) DeleteQueue(ctx context.Context, queue string) (int, error) {
	return doValue(ctx, t, fmt.Sprintf("delete queue %s", queue), func(ch *amqp.Channel) (int, error) {
		return ch.QueueDelete(queue, false, false, false)
	})
}

// Get takes one message with basic.get. Its channel stays open until the
// delivery is settled, then closes.
func (t *Transport) Get(ctx context.Context, queue string) (transport.Delivery, bool, error) {
	type got struct {
		d  amqp.Delivery
		ch *amqp.Channel
	}
	var (
		g  got
		cc *consumerChannel
	)
	err := t.onConnection(ctx, func(conn *amqp.Connection) (err error) {
		g, err = onChannel(ctx, t, conn, func(ch *amqp.Channel) (got, bool, error) {
			d, ok, err := ch.Get(queue, false)
			if !ok || err != nil {
				return got{}, false, err
			}
			return got{d, ch}, true, nil
		})
		if g.ch != nil {
			cc = &consumerChannel{t: t, conn: conn, ch: g.ch, queue: queue, ackBatch: 1, retired: true}
		}
		return err
	})
	if err != nil {
		return transport.Delivery{}, false, mapErr("get from queue "+queue, err)
	}
	if cc == nil {
		return transport.Delivery{}, false, nil
	}
	return cc.delivery(g.d), true, nil
}
