package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/transport"
)

var consumerSeq atomic.Uint64

// Consume subscribes to queue on a channel of its own with basic.qos
// (opts.Prefetch). The first subscription happens before Consume returns,
// so a missing queue or a failing Setup is Consume's error. After a lost
// connection, or when the broker cancels the consumer (its queue was
// deleted), the subscription is made again at once — opts.Setup first, on
// the new connection — with backoff while that fails, and Deliveries goes
// on. Deliveries of the lost channel not yielded yet are dropped here and
// requeued by the broker; those yielded can no longer be settled
// (transport.ErrStaleDelivery) and come again, redelivered.
func (t *Transport) Consume(ctx context.Context, queue string, opts transport.ConsumeOptions) (transport.Subscription, error) {
	if opts.Tag == "" {
		opts.Tag = "acemq-" + strconv.FormatUint(consumerSeq.Add(1), 10)
	}
	s := &subscription{t: t, queue: queue, opts: opts, cancelled: make(chan struct{})}
	s.ctx, s.stop = context.WithCancel(t.ctx)
	cur, err := s.subscribe(ctx)
	if err != nil {
		s.stop()
		return nil, err
	}
	s.cur = cur
	if !t.goOwned(s.watch) {
		s.stop()
		cur.cc.retire()
		return nil, transport.ErrClosed
	}
	return s, nil
}

type subscription struct {
	t     *Transport
	queue string
	opts  transport.ConsumeOptions

	ctx  context.Context // ended by Cancel or the Transport's Close
	stop context.CancelFunc

	mu  sync.Mutex
	cur *consumption // nil once the subscription has ended

	sendCancel sync.Once // basic.cancel, sent once
	cancelOnce sync.Once
	cancelled  chan struct{} // closed when no consumer is left on the broker
	cancelErr  error
}

// consumption is the consumer on one channel.
type consumption struct {
	cc   *consumerChannel
	dels <-chan amqp.Delivery
	// lost and brokerCancel tell that the consumer ended other than by
	// Cancel: its channel closed (or its connection), or the broker
	// cancelled it.
	lost         <-chan *amqp.Error
	brokerCancel <-chan string
	replaced     chan struct{} // closed once the next one is s.cur, or s.cur is nil
}

// Deliveries yields what the current consumer delivers, in the ranging
// goroutine: amqp091-go's delivery channel is read there, with nothing
// between.
func (s *subscription) Deliveries() iter.Seq[transport.Delivery] {
	return func(yield func(transport.Delivery) bool) {
		for {
			d, ok := s.next()
			if !ok || !yield(d) {
				return
			}
		}
	}
}

// next is the next delivery, once one comes; false once the subscription
// has ended and every delivery received before has been yielded.
func (s *subscription) next() (transport.Delivery, bool) {
	for {
		s.mu.Lock()
		cur := s.cur
		s.mu.Unlock()
		if cur == nil {
			return transport.Delivery{}, false
		}
		select {
		case d, ok := <-cur.dels:
			if ok {
				return cur.cc.delivery(d), true
			}
		case <-s.t.ctx.Done(): // Close: the connection is closing
			return transport.Delivery{}, false
		}
		// amqp091 closes dels once the consumer has ended and every
		// delivery received before has been handed to it.
		cur.cc.retire()
		select {
		case <-cur.replaced: // watch subscribed again
		case <-s.ctx.Done(): // Cancel, or Close
			return transport.Delivery{}, false
		}
	}
}

// watch subscribes again whenever the consumer ends other than by Cancel,
// until Cancel or Close.
func (s *subscription) watch() {
	delay := s.t.opts.ReconnectDelay
	for {
		s.mu.Lock()
		cur := s.cur
		s.mu.Unlock()
		select {
		case <-cur.lost:
		case <-cur.brokerCancel:
		case <-s.ctx.Done():
		}
		if s.ctx.Err() != nil { // its channel closes after a Cancel too
			return // next ends once the deliveries received before are yielded
		}
		s.t.main.log().Info("rabbitmq: consumer ended; subscribing again", "queue", s.queue)
		for {
			next, err := s.subscribe(s.ctx)
			if err == nil {
				delay = s.t.opts.ReconnectDelay
				if !s.replace(cur, next) {
					return
				}
				break
			}
			if s.ctx.Err() != nil {
				s.replace(cur, nil)
				return
			}
			s.t.main.log().Warn("rabbitmq: subscribing again failed", "queue", s.queue, "error", err.Error(), "retry_in", delay)
			timer := time.NewTimer(delay)
			select {
			case <-s.ctx.Done():
				timer.Stop()
				s.replace(cur, nil)
				return
			case <-timer.C:
			}
			delay = min(2*delay, s.t.opts.MaxReconnectDelay)
		}
	}
}

// replace puts next in cur's place, or nothing (next nil, or the
// subscription cancelled meanwhile: Cancel saw no consumer to cancel, and
// next's channel is let go of). It says whether next took the place.
func (s *subscription) replace(cur, next *consumption) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer close(cur.replaced)
	if next != nil && s.ctx.Err() != nil {
		next.cc.retire()
		next = nil
	}
	s.cur = next
	return next != nil
}

// Cancel sends basic.cancel and returns once the broker has confirmed it.
// The deliveries the broker sent before its confirm are still yielded by
// Deliveries, which ends after the last of them; keep ranging until it
// ends. Every delivery yielded can still be settled: the channel stays open
// until the last one is, and a delivery never yielded (Close came first) is
// requeued by the broker when the channel closes. Cancelling while the
// connection is down, or twice, just ends the subscription. ctx bounds only
// the wait: the cancel goes on after it ends.
func (s *subscription) Cancel(ctx context.Context) error {
	s.sendCancel.Do(func() {
		s.mu.Lock()
		s.stop() // under mu: watch puts no consumer in place after it
		cur := s.cur
		s.mu.Unlock()
		if cur == nil || s.t.isClosed() {
			s.markCancelled(nil)
			return
		}
		go func() {
			err := cur.cc.ch.Cancel(s.opts.Tag, false)
			if errors.Is(err, amqp.ErrClosed) {
				err = nil // the channel is gone, and its consumer with it
			}
			s.markCancelled(mapErr("cancel the consumer on "+s.queue, err))
		}()
	})
	select {
	case <-s.cancelled:
		if s.cancelErr == nil && s.t.isClosed() {
			return transport.ErrClosed
		}
		return s.cancelErr
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (s *subscription) markCancelled(err error) {
	s.cancelOnce.Do(func() {
		s.cancelErr = err
		close(s.cancelled)
	})
}

// subscribe runs Setup on the current connection, then opens a channel and
// starts the consumer on it.
func (s *subscription) subscribe(ctx context.Context) (cur *consumption, err error) {
	err = s.t.onConnection(ctx, func(conn *amqp.Connection) (err error) {
		cur, err = s.subscribeOn(ctx, conn)
		return err
	})
	return cur, err
}

func (s *subscription) subscribeOn(ctx context.Context, conn *amqp.Connection) (*consumption, error) {
	if s.opts.Setup != nil {
		if err := s.opts.Setup(ctx, declarer{s.t, conn}); err != nil {
			return nil, fmt.Errorf("rabbitmq: setup before consuming from %s: %w", s.queue, err)
		}
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, mapErr("consume from "+s.queue, fmt.Errorf("%w: %w", errNoChannel, err))
	}
	cc := &consumerChannel{t: s.t, conn: conn, ch: ch, queue: s.queue, ackBatch: ackBatch(s.opts.Prefetch)}
	s.t.track(cc)
	if err := ch.Qos(s.opts.Prefetch, 0, false); err != nil {
		cc.retire()
		return nil, mapErr("set the prefetch of "+s.queue, err)
	}
	// Buffered: amqp091 waits for a listener that is not ready.
	cur := &consumption{cc: cc, replaced: make(chan struct{}),
		lost: ch.NotifyClose(make(chan *amqp.Error, 1)), brokerCancel: ch.NotifyCancel(make(chan string, 1))}
	cur.dels, err = ch.Consume(s.queue, s.opts.Tag, false, false, false, false, toAMQPTable(s.opts.ConsumeArguments()))
	if err != nil {
		cc.retire()
		return nil, mapErr("consume from "+s.queue, err)
	}
	return cur, nil
}

// consumerChannel is the channel deliveries came from. It closes once it is
// retired (its consumer ended, or it served a basic.get) and every delivery
// handed over from it has been settled; a Taker's closes when the Taker
// does, whatever is still open on it.
//
// A consumer's channel holds back acks and sends them together (ackBatch
// of them, or after ackDelay, or before the channel or the Transport
// closes): those below every delivery still open as one multiple ack, one
// frame and one settlement for the broker instead of many, since a multiple
// ack must cover only deliveries already settled; those behind an open one
// (held in a consumer wait, say, or still in another handler) one by one.
// With several handlers, deliveries finish out of order, and most acks
// behind an open one are below every open one a moment later. Nacks and
// rejects are sent at once, and nothing is held back longer than ackDelay,
// so held acks never hold up the prefetch.
type consumerChannel struct {
	t        *Transport
	conn     *amqp.Connection
	ch       *amqp.Channel
	queue    string
	ackBatch int // 1: every ack at once

	sendMu sync.Mutex // orders the frames settlements send

	mu      sync.Mutex
	open    []uint64 // delivery tags handed over and not settled, ascending
	retired bool
	closed  bool
	held    []uint64 // tags of the acks held back
	flushAt *time.Timer
}

// ackDelay bounds how long an ack is held back.
const ackDelay = 5 * time.Millisecond

// ackBatch is how many acks a consumer with this prefetch holds back at
// most: a quarter of the prefetch, so that held acks never starve it, and
// at most 32 (also when the prefetch is unlimited).
func ackBatch(prefetch int) int {
	if prefetch <= 0 {
		return 32
	}
	return min(max(prefetch/4, 1), 32)
}

func (c *consumerChannel) delivery(d amqp.Delivery) transport.Delivery {
	c.mu.Lock()
	c.open = append(c.open, d.DeliveryTag)
	c.mu.Unlock()
	td := fromDelivery(d)
	td.Settler = &settler{c: c, d: d}
	return td
}

func (c *consumerChannel) retire() {
	c.mu.Lock()
	c.retired = true
	c.mu.Unlock()
	c.closeIfIdle()
}

// settle records tag as settled: an ack is held back; anything else is
// sent now by send.
func (c *consumerChannel) settle(tag uint64, ack bool, send func() error) error {
	c.sendMu.Lock()
	c.mu.Lock()
	if i := slices.Index(c.open, tag); i >= 0 {
		c.open = slices.Delete(c.open, i, i+1)
	}
	hold := ack && c.ackBatch > 1
	if hold {
		c.held = append(c.held, tag)
		if len(c.held) < c.ackBatch && c.flushAt == nil {
			c.flushAt = time.AfterFunc(ackDelay, c.flush)
		}
	}
	full := len(c.held) >= c.ackBatch
	c.mu.Unlock()
	var err error
	switch {
	case full:
		err = c.sendHeld()
	case !hold:
		err = send()
	}
	c.sendMu.Unlock()
	c.closeIfIdle()
	return err
}

// flush sends the acks held back.
func (c *consumerChannel) flush() {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	_ = c.sendHeld() // a failure: the channel is gone, and the broker redelivers
}

// sendHeld sends the held acks: those below every open delivery as one
// multiple ack, the others one by one; sendMu is held, so no settlement
// comes between, and a delivery handed over later has a higher tag.
func (c *consumerChannel) sendHeld() error {
	c.mu.Lock()
	held := c.held
	c.held = nil
	lowestOpen := uint64(math.MaxUint64)
	if len(c.open) > 0 {
		lowestOpen = c.open[0]
	}
	if c.flushAt != nil {
		c.flushAt.Stop()
		c.flushAt = nil
	}
	c.mu.Unlock()
	var upTo uint64
	var behind []uint64
	for _, tag := range held {
		if tag < lowestOpen {
			upTo = max(upTo, tag)
		} else {
			behind = append(behind, tag)
		}
	}
	if upTo > 0 {
		if err := c.ch.Ack(upTo, true); err != nil {
			return err
		}
	}
	for _, tag := range behind {
		if err := c.ch.Ack(tag, false); err != nil {
			return err
		}
	}
	return nil
}

// closeIfIdle closes a retired channel once nothing handed over from it is
// open.
func (c *consumerChannel) closeIfIdle() {
	c.mu.Lock()
	idle := c.retired && len(c.open) == 0
	c.mu.Unlock()
	if idle {
		_ = c.closeNow()
	}
}

// closeNow closes the channel, after sending the acks it held back, whatever
// is still open on it: the broker requeues that. Closing twice is a no-op.
func (c *consumerChannel) closeNow() error {
	c.mu.Lock()
	was := c.closed
	c.retired, c.closed = true, true
	c.mu.Unlock()
	if was {
		return nil
	}
	c.flush()
	c.t.untrack(c)
	return c.ch.Close()
}

// gone is the error of settling on the channel, or getting from it, once it
// is gone (nil while it is open): also once the Transport has seen its
// connection go, even if amqp091 has not closed the channel yet, so that
// nothing is sent into a dead socket. The broker redelivers what it held.
func (c *consumerChannel) gone() error {
	switch {
	case c.t.isClosed():
		return fmt.Errorf("%w: %w", transport.ErrClosed, transport.ErrStaleDelivery)
	case c.ch.IsClosed() || !c.t.main.current(c.conn):
		return transport.ErrStaleDelivery
	}
	return nil
}

// settler settles one delivery on the channel it came from, and only there:
// amqp091's Delivery.Acknowledger is that *Channel, which this package never
// reopens.
type settler struct {
	c    *consumerChannel
	d    amqp.Delivery
	done atomic.Bool
}

// Ack acknowledges the delivery, possibly a moment later together with
// others (see consumerChannel): a nil error means it is sent or on its way.
func (s *settler) Ack() error { return s.settle("ack", true, func() error { return s.d.Ack(false) }) }

func (s *settler) Nack(requeue bool) error {
	return s.settle("nack", false, func() error { return s.d.Nack(false, requeue) })
}

func (s *settler) Reject(requeue bool) error {
	return s.settle("reject", false, func() error { return s.d.Reject(requeue) })
}

func (s *settler) settle(what string, ack bool, send func() error) error {
	c := s.c
	fail := func(err error) error {
		return fmt.Errorf("rabbitmq: %s delivery %d from %s: %w", what, s.d.DeliveryTag, c.queue, err)
	}
	// The broker redelivers what a gone channel held: it counts as settled
	// here, so that the channel is let go of.
	stale := func(err error) error {
		_ = c.settle(s.d.DeliveryTag, false, func() error { return nil })
		return fail(err)
	}
	if err := c.gone(); err != nil {
		return stale(err)
	}
	// A second settlement of one tag would close the channel (406 unknown
	// delivery tag) and make every other delivery on it stale.
	if !s.done.CompareAndSwap(false, true) {
		return fail(errors.New("already settled"))
	}
	err := c.settle(s.d.DeliveryTag, ack, send)
	if errors.Is(err, amqp.ErrClosed) || err != nil && c.ch.IsClosed() {
		return fail(transport.ErrStaleDelivery)
	}
	if err != nil {
		return fail(err)
	}
	return nil
}
