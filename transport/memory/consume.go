package memory

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

var consumerSeq atomic.Uint64

// Consume subscribes to queue, as transport/rabbitmq does: opts.Setup runs
// first (with a Declarer on this connection), then basic.consume with
// opts.Prefetch as the consumer's limit of unsettled deliveries (0:
// unlimited). A missing queue, another connection's exclusive queue or a
// failing Setup is Consume's error. When the broker cancels the consumer
// (its queue was deleted) or closes its channel (the consumer timeout), the
// subscription runs Setup and subscribes again, with backoff on the broker's
// clock while that fails; Deliveries goes on throughout.
func (t *Transport) Consume(ctx context.Context, queue string, opts transport.ConsumeOptions) (transport.Subscription, error) {
	if opts.Tag == "" {
		opts.Tag = "acemq-" + strconv.FormatUint(consumerSeq.Add(1), 10)
	}
	for _, s := range []string{queue, opts.Tag} {
		if err := shortstr(s); err != nil {
			return nil, fmt.Errorf("memory: consume from %s: %w", queue, err)
		}
	}
	s := &subscription{
		t:     t,
		queue: queue,
		opts:  opts,
		// basic.qos carries a 16-bit count, and amqp091 converts.
		prefetch: int(uint16(opts.Prefetch)),
		out:      make(chan transport.Delivery),
		wake:     make(chan struct{}, 1),
	}
	s.ctx, s.stop = context.WithCancel(t.ctx)
	if err := s.subscribe(ctx); err != nil {
		s.stop()
		return nil, err
	}
	b := t.b
	b.mu.Lock()
	if t.closed {
		b.mu.Unlock()
		s.stop()
		return nil, transport.ErrClosed
	}
	t.wg.Add(1)
	b.mu.Unlock()
	go s.run()
	return s, nil
}

// subscription is one Consume: a consumer on the broker (again after the
// broker cancelled the last one) and the goroutine that hands its
// deliveries over.
type subscription struct {
	t        *Transport
	queue    string
	opts     transport.ConsumeOptions
	prefetch int
	out      chan transport.Delivery
	wake     chan struct{} // a signal: something changed

	ctx  context.Context // ended by Cancel or the Transport's Close
	stop context.CancelFunc

	// guarded by the broker's mutex
	cur       *consumer
	pending   []transport.Delivery // delivered by the broker, not yet handed over
	cancelled bool
}

// Deliveries yields what the subscription's goroutine hands over: the
// broker's delivering is that goroutine here.
func (s *subscription) Deliveries() iter.Seq[transport.Delivery] { return transport.FromChan(s.out) }

// Cancel stops new deliveries (basic.cancel). What the broker delivered
// before is still yielded by Deliveries, which ends after the last of
// it; every delivery handed over can still be settled. Cancelling twice just
// ends the subscription; after the Transport's Close it is
// transport.ErrClosed.
func (s *subscription) Cancel(context.Context) error {
	b := s.t.b
	b.mu.Lock()
	closed := s.t.closed
	if !closed && !s.cancelled {
		s.cancelled = true
		if c := s.cur; c != nil {
			b.removeConsumer(c)
			b.maybeRetire(c.ch)
		}
	}
	s.signal()
	b.mu.Unlock()
	s.stop()
	if closed {
		return transport.ErrClosed
	}
	return nil
}

func (s *subscription) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// subscribe runs Setup, then starts a consumer on a channel of its own.
func (s *subscription) subscribe(ctx context.Context) error {
	t, b := s.t, s.t.b
	b.mu.Lock()
	closed := t.closed
	b.mu.Unlock()
	if closed {
		return transport.ErrClosed
	}
	if s.opts.Setup != nil {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		if err := s.opts.Setup(ctx, declarer{t}); err != nil {
			return fmt.Errorf("memory: setup before consuming from %s: %w", s.queue, err)
		}
	}
	defer t.events.flush() // after the unlock: the events of a connection error
	if err := t.begin(ctx); err != nil {
		return err
	}
	defer b.mu.Unlock()
	if s.cancelled {
		return errCancelled
	}
	q, err := b.queueFor(t.conn, s.queue)
	if err != nil {
		return mapErr("consume from "+s.queue, err)
	}
	next, argErr := b.consumeArguments(q, s.prefetch, s.opts.ConsumeArguments())
	if argErr != nil {
		if ae, ok := errors.AsType[*amqpError](argErr); ok {
			t.connectionError(ae)
		}
		return mapErr("consume from "+s.queue, argErr)
	}
	if old := s.cur; old != nil {
		b.maybeRetire(old.ch)
	}
	c := &consumer{q: q, ch: t.conn.newChannel(s), sub: s, prefetch: s.prefetch, next: next}
	q.consumers = append(q.consumers, c)
	s.cur = c
	b.used(q)
	b.dispatch(q)
	return nil
}

// consumeArguments checks a basic.consume on q, with its prefetch and
// arguments, as RabbitMQ does, and says where a stream consumer starts. A
// stream consumer needs a prefetch and takes x-stream-offset; a classic or
// quorum queue refuses x-stream-offset; any other argument (x-priority, say)
// is refused as one memory:// does not apply, rather than consume as if it
// did, except on a stream, which refuses it as RabbitMQ does.
func (b *Broker) consumeArguments(q *queue, prefetch int, args transport.Table) (next int, err error) {
	invalid := func(k string) error {
		return preconditionFailed("invalid arg '%s' for queue '%s' in vhost '/' of queue type %s", k, q.name, typeModule[q.typ])
	}
	if q.typ == transport.Stream && prefetch == 0 {
		if b.em.v4 {
			return 0, preconditionFailed("consumer prefetch count is not set for stream queue '%s' in vhost '/'", q.name)
		}
		return 0, preconditionFailed("consumer prefetch count is not set for 'queue '%s' in vhost '/''", q.name)
	}
	offset := any(contract.StreamOffsetNext)
	for _, k := range sortedNames(args) {
		switch {
		case k == contract.ArgStreamOffset && q.typ == transport.Stream:
			offset = args[k]
		case k == contract.ArgStreamOffset, q.typ == transport.Stream && k == "x-priority":
			return 0, invalid(k)
		default:
			return 0, fmt.Errorf("the consumer argument %q is not supported on memory:// (test it against RabbitMQ): %w", k, errors.ErrUnsupported)
		}
	}
	if q.typ != transport.Stream {
		return 0, nil
	}
	return b.streamStart(q, offset)
}

// streamInterval is an x-stream-offset interval: a whole number of years,
// months, days, hours, minutes or seconds back from now.
var streamInterval = regexp.MustCompile(`^([0-9]+)([YMDhms])$`)

var intervalUnits = map[string]time.Duration{
	"Y": 365 * 24 * time.Hour, "M": 30 * 24 * time.Hour, "D": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second,
}

// streamStart is the offset a consumer of the stream q starts at for
// x-stream-offset v. RabbitMQ 3.10 and 4.0 refuse a string starting with a
// digit that is no interval with PRECONDITION_FAILED, and fail any other
// string, a float or a bool with INTERNAL_ERROR, which closes the
// connection. An offset past the end waits for the stream to reach it; a
// negative one is the first.
func (b *Broker) streamStart(q *queue, v any) (int, error) {
	since := func(t time.Time) int {
		for i, e := range q.log {
			if !e.at.Before(t) {
				return i
			}
		}
		return len(q.log)
	}
	switch v := v.(type) {
	case string:
		switch v {
		case contract.StreamOffsetFirst:
			return 0, nil
		case contract.StreamOffsetLast:
			return max(len(q.log)-1, 0), nil
		case contract.StreamOffsetNext:
			return len(q.log), nil
		}
		if m := streamInterval.FindStringSubmatch(v); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			return since(b.clock.Now().Add(-time.Duration(n) * intervalUnits[m[2]])), nil
		}
		if v != "" && '0' <= v[0] && v[0] <= '9' {
			return 0, preconditionFailed("invalid arg '%s' for queue '%s' in vhost '/': {invalid_stream_offset_arg,{longstr,<<\"%s\">>}}",
				contract.ArgStreamOffset, q.name, v)
		}
	case time.Time:
		return since(time.Unix(v.Unix(), 0)), nil // an AMQP timestamp: whole seconds
	default:
		if n, ok := asInt(v); ok {
			return int(min(max(n, 0), math.MaxInt32)), nil
		}
	}
	return 0, internalError()
}

var errCancelled = errors.New("the subscription was cancelled")

type action int

const (
	actWait action = iota
	actDeliver
	actResubscribe
	actExit
)

// run hands deliveries over until Cancel or Close, subscribing again when
// the broker ended the consumer.
func (s *subscription) run() {
	defer s.t.wg.Done()
	defer close(s.out)
	for {
		d, act := s.next()
		switch act {
		case actDeliver:
			select {
			case s.out <- d:
			case <-s.t.done:
				return
			}
		case actWait:
			select {
			case <-s.wake:
			case <-s.t.done:
				return
			}
		case actResubscribe:
			if !s.resubscribe() {
				return
			}
		case actExit:
			return
		}
	}
}

func (s *subscription) next() (transport.Delivery, action) {
	b := s.t.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.t.closed {
		return transport.Delivery{}, actExit
	}
	for len(s.pending) > 0 {
		d := s.pending[0]
		s.pending[0] = transport.Delivery{}
		s.pending = s.pending[1:]
		if d.Settler.(*settler).u.ch.closed {
			continue // requeued by the broker when its channel closed
		}
		return d, actDeliver
	}
	switch c := s.cur; {
	case s.cancelled:
		return transport.Delivery{}, actExit
	case c == nil || c.cancelled:
		return transport.Delivery{}, actResubscribe
	}
	return transport.Delivery{}, actWait
}

// resubscribe subscribes again (Setup first), waiting 100ms, then twice as
// long each time up to 5s, on the broker's clock while that fails; false
// when the subscription ends first.
func (s *subscription) resubscribe() bool {
	delay := 100 * time.Millisecond
	for {
		err := s.subscribe(s.ctx)
		if err == nil {
			return true
		}
		if s.ctx.Err() != nil || errors.Is(err, transport.ErrClosed) || errors.Is(err, errCancelled) {
			return false
		}
		fired := make(chan struct{})
		stop := s.t.b.clock.AfterFunc(delay, func() { close(fired) })
		select {
		case <-fired:
		case <-s.ctx.Done():
			stop()
			return false
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// maybeRetire forgets a channel with nothing left on it: no delivery to
// settle, no consumer (a basic.get's, or a consumer's once cancelled), and
// no open Taker.
func (b *Broker) maybeRetire(ch *channel) {
	if ch.closed || ch.taking || len(ch.unacked) > 0 {
		return
	}
	if s := ch.sub; s != nil && s.cur != nil && s.cur.ch == ch && !s.cur.cancelled {
		return
	}
	b.retire(ch)
}

// declarer is what Setup declares with: this connection.
type declarer struct{ t *Transport }

func (d declarer) DeclareExchange(ctx context.Context, e transport.Exchange) error {
	return d.t.DeclareExchange(ctx, e)
}

func (d declarer) DeclareQueue(ctx context.Context, q transport.Queue) error {
	return d.t.DeclareQueue(ctx, q)
}

func (d declarer) Bind(ctx context.Context, bd transport.Binding) error { return d.t.Bind(ctx, bd) }

// settler settles one delivery on the channel it came from, and only there.
type settler struct{ u *unacked }

const (
	settleAck = iota
	settleRequeue
	settleDrop
)

func (s *settler) Ack() error { return s.settle("ack", settleAck, false) }

// A nack is no failed delivery, a reject is (see emulation.v43).
func (s *settler) Nack(requeue bool) error {
	if requeue {
		return s.settle("nack", settleRequeue, false)
	}
	return s.settle("nack", settleDrop, false)
}

func (s *settler) Reject(requeue bool) error {
	if requeue {
		return s.settle("reject", settleRequeue, true)
	}
	return s.settle("reject", settleDrop, true)
}

// settle acks, requeues or rejects (dead-letters, reason rejected) the
// delivery. After the channel closed it fails with
// transport.ErrStaleDelivery (and transport.ErrClosed after the
// Transport's Close): the broker has requeued the message. A second
// settlement fails and changes nothing.
func (s *settler) settle(what string, how int, failed bool) error {
	u := s.u
	ch := u.ch
	t := ch.conn.t
	b := t.b
	defer t.events.flush() // after the unlock: the events of a connection error
	b.mu.Lock()
	defer b.mu.Unlock()
	fail := func(err error) error {
		return fmt.Errorf("memory: %s delivery %d from %s: %w", what, u.tag, u.q.name, err)
	}
	switch {
	case t.closed:
		return fail(fmt.Errorf("%w: %w", transport.ErrClosed, transport.ErrStaleDelivery))
	case ch.closed:
		return fail(transport.ErrStaleDelivery)
	case u.done:
		return fail(errAlreadySettled)
	}
	if u.q.typ == transport.Stream && how != settleAck && !b.em.v4 {
		// RabbitMQ 3.10 closes the connection; 4.0 takes it as an ack.
		t.connectionError(notImplemented("basic.nack and basic.reject not supported by stream queues queue '%s' in vhost '/'", u.q.name))
		return nil
	}
	u.done = true
	ch.remove(u)
	b.release(u)
	c := u.consumer
	if q := u.q; !q.deleted && q.typ != transport.Stream {
		switch how {
		case settleRequeue:
			b.requeue(q, u.m, false, failed)
		case settleDrop:
			if failed {
				u.m.failures++
			}
			b.deadLetter(q, u.m, contract.DeathReasonRejected)
		}
	}
	b.armTimeout(ch)
	b.maybeRetire(ch)
	if c != nil && !c.cancelled {
		b.dispatch(c.q)
	}
	return nil
}
