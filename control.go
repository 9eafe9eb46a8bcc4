package acemq

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/acemq-go/acemq/internal/breaker"
	"github.com/acemq-go/acemq/internal/option"
)

// ConsumerState is whether a consumer takes deliveries.
type ConsumerState string

const (
	ConsumerRunning ConsumerState = "running"
	ConsumerPaused  ConsumerState = "paused"
	// ConsumerHalted: an append-only consumer stopped at a failed message
	// (AppendOnly); it does not resume.
	ConsumerHalted ConsumerState = "halted"
	ConsumerClosed ConsumerState = "closed"
)

// PauseCause says who paused a consumer. It runs again once no cause
// holds it.
type PauseCause string

const (
	// PausedByOperator: Consumer.Pause, which Consumer.Resume undoes.
	PausedByOperator PauseCause = "operator"
	// PausedByBreaker: its circuit breaker is open.
	PausedByBreaker PauseCause = "circuit breaker"
)

// BreakerState is the state of a consumer's circuit breaker.
type BreakerState string

// The states are the state machine's (internal/breaker), so that they are
// spelt once.
const (
	BreakerClosed   = BreakerState(breaker.Closed)   // handling as usual
	BreakerOpen     = BreakerState(breaker.Open)     // paused for a cool-down
	BreakerHalfOpen = BreakerState(breaker.HalfOpen) // probing with one message at a time
)

// Scale is how many handlers a consumer runs at once (Concurrency) and how
// many unsettled deliveries the broker sends it ahead (Prefetch,
// basic.qos). In Rescale a zero field keeps the current value.
type Scale struct {
	Concurrency int `json:"concurrency"`
	Prefetch    int `json:"prefetch"`
}

// maxConcurrency bounds a consumer's handlers at once.
const maxConcurrency = math.MaxUint16

// probeScale is a half-open breaker's: one message at a time.
var probeScale = Scale{Concurrency: 1, Prefetch: 1}

// ConsumerStatus is a consumer's state, for an admin endpoint.
type ConsumerStatus struct {
	ID    string
	Queue string
	State ConsumerState
	// PausedBy says who holds a paused consumer; empty otherwise.
	PausedBy []PauseCause
	// Scale is as asked (a half-open breaker probes at one message at a
	// time meanwhile).
	Scale Scale
	// Running counts the handlers running now.
	Running int
	// Breaker is "" for a consumer without a circuit breaker.
	Breaker BreakerState
	Stats   Stats
}

// WithConsumerID names the consumer for run-time control (Conn.Consumer,
// the actuator's consumer endpoints). By default it is the queue's name,
// or queue-2, queue-3… when the Conn already has a consumer of that id; an
// id given here that the Conn already has is Consume's error.
func WithConsumerID(id string) ConsumeOption {
	return consumeOption(option.Named("WithConsumerID", func(o *options) error {
		if id == "" {
			return invalid("the consumer id is empty")
		}
		o.cons.id = id
		return nil
	}))
}

// ID is the consumer's id (WithConsumerID).
func (c *Consumer) ID() string { return c.id }

// Queue is the queue the consumer consumes.
func (c *Consumer) Queue() string { return c.queue }

// Consumers are the Conn's consumers started and not yet closed, by ID.
func (c *Conn) Consumers() []*Consumer {
	cs := c.consumers.list()
	slices.SortFunc(cs, func(a, b *Consumer) int { return cmp.Compare(a.id, b.id) })
	return cs
}

// Consumer is the open consumer of that id, or nil.
func (c *Conn) Consumer(id string) *Consumer { return c.consumers.byID(id) }

// Status says what the consumer is doing now.
func (c *Consumer) Status() ConsumerStatus {
	shown := c.shown.Load()
	s := ConsumerStatus{ID: c.id, Queue: c.queue, State: ConsumerRunning, PausedBy: slices.Clone(shown.pausedBy),
		Scale: shown.scale}
	switch {
	case c.stopping.Load():
		s.State = ConsumerClosed
	case c.halted.Load():
		s.State = ConsumerHalted
	case len(shown.pausedBy) > 0:
		s.State = ConsumerPaused
	}
	s.Breaker = c.circuit.state()
	s.Running = int(c.running.Load())
	s.Stats = c.Stats()
	return s
}

// paused says whether a cause holds the consumer.
func (c *Consumer) paused() bool { return len(c.shown.Load().pausedBy) > 0 }

// controlled is what run-time control has made of a consumer, as Status
// shows it: a copy, so that Status never waits for a pause or a rescale
// under way (a subscription waits for a connection).
type controlled struct {
	scale    Scale
	pausedBy []PauseCause
}

// show publishes the consumer's control state for Status; ctl is held.
func (c *Consumer) show() {
	c.shown.Store(&controlled{scale: c.scale, pausedBy: slices.Clone(c.pausedBy)})
}

// Pause stops taking deliveries until Resume: the subscription is
// cancelled (basic.cancel); deliveries prefetched and not started go back
// to the queue unhandled, their attempt not spent (a nack with requeue,
// reason class contract.ReasonPaused); handlers already running finish and
// are settled as usual; waits held in the consumer go on, and republish to
// the queue when due, where the message waits for the consumer to resume.
//
// Pause returns once nothing is being handled, or when ctx ends: the
// consumer stays paused and the error says how many handlers still run.
// Pausing a paused consumer waits the same way and changes nothing else.
// A handler that pauses its own consumer waits for itself: it should pause
// from another goroutine.
// A paused consumer counts in Health.PausedConsumers and never makes the
// Conn unready.
//
// The deliveries handed back go to the head of a classic queue. A quorum
// queue before RabbitMQ 4.3 counts each towards its delivery limit, as it
// counts any requeue.
func (c *Consumer) Pause(ctx context.Context) error {
	if err := c.pauseFor(ctx, PausedByOperator); err != nil {
		return err
	}
	// Every delivery taken from a feed is counted busy before the next is
	// taken: once the feeds have ended, busy counts all there is.
	c.ctl.Lock()
	live := slices.Collect(maps.Keys(c.live))
	c.ctl.Unlock()
	for _, f := range live {
		select {
		case <-f.done:
		case <-ctx.Done():
			return fmt.Errorf("acemq: pausing the consumer %s: paused, but its subscription has not ended: %w", c.id, context.Cause(ctx))
		}
	}
	select {
	case <-c.busy.idle():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("acemq: pausing the consumer %s: paused, but %d deliveries are still being handled: %w", c.id, c.busy.count(), context.Cause(ctx))
	}
}

// Resume undoes Pause: the consumer subscribes again, at its Scale. A
// consumer its circuit breaker holds stays paused until the breaker lets
// it go. Resuming a running consumer does nothing; an append-only one that
// halted at a failure (AppendOnly) is not resumed: that is an error.
func (c *Consumer) Resume(ctx context.Context) error { return c.resumeFor(ctx, PausedByOperator) }

// Rescale changes how many handlers run at once and how many deliveries
// the broker sends ahead, while the consumer runs or is paused. A new
// concurrency applies at once: more handlers start, or as many as are too
// many stop once their handler returns. A new prefetch needs a new
// subscription: the consumer subscribes again with it and cancels the
// old one, whose deliveries are still handled (nothing is handed back). A
// prefetch of 0 keeps the current one: an unlimited prefetch is chosen only
// at start (WithPrefetch(0)).
func (c *Consumer) Rescale(ctx context.Context, s Scale) error {
	switch {
	case s.Concurrency < 0:
		return fmt.Errorf("acemq: rescaling the consumer %s: the concurrency is %d but must be at least 1 (0 keeps it): %w", c.id, s.Concurrency, ErrInvalidOption)
	case s.Prefetch < 0 || s.Prefetch > math.MaxUint16:
		return fmt.Errorf("acemq: rescaling the consumer %s: the prefetch is %d but must be from 1 to %d (0 keeps it): %w", c.id, s.Prefetch, math.MaxUint16, ErrInvalidOption)
	}
	return c.control("rescaling", func() error {
		if s.Concurrency == 0 {
			s.Concurrency = c.scale.Concurrency
		}
		if s.Prefetch == 0 {
			s.Prefetch = c.scale.Prefetch
		}
		was := c.scale
		c.scale = s
		if err := c.apply(ctx); err != nil {
			c.scale = was
			return err
		}
		if s != was {
			c.logger.Info("acemq: consumer rescaled", "consumer", c.id, "concurrency", s.Concurrency, "prefetch", s.Prefetch)
			c.observer.Event(Event{Kind: EventConsumerRescaled, Conn: c.conn, Queue: c.queue, Consumer: c.id, Scale: s})
		}
		return nil
	})
}

// control makes a change with ctl held, unless the consumer is closed,
// then shows the consumer's control state to Status; an error says what
// it was doing.
func (c *Consumer) control(doing string, change func() error) error {
	c.ctl.Lock()
	defer c.ctl.Unlock()
	defer c.show()
	err := ErrClosed
	if !c.stopping.Load() {
		err = change()
	}
	if err != nil {
		return fmt.Errorf("acemq: %s the consumer %s: %w", doing, c.id, err)
	}
	return nil
}

// effectiveScale is the scale the consumer runs at: its own, or a probing
// breaker's.
func (c *Consumer) effectiveScale() Scale {
	if c.probe {
		return probeScale
	}
	return c.scale
}

// apply brings the workers and the subscription to effectiveScale; ctl is
// held.
func (c *Consumer) apply(ctx context.Context) error {
	want := c.effectiveScale()
	if c.current != nil && c.current.prefetch != want.Prefetch {
		if err := c.resubscribe(ctx, want.Prefetch); err != nil {
			return err
		}
	}
	c.resize(want.Concurrency)
	return nil
}

// resize starts workers, or tells as many as are too many to stop once
// idle; ctl is held.
func (c *Consumer) resize(n int) {
	for ; c.workerN < n; c.workerN++ {
		c.workers.add()
		go c.work()
	}
	for ; c.workerN > n; c.workerN-- {
		c.shrink <- struct{}{} // buffered for every worker there can be
	}
}

// pauseFor holds the consumer paused for cause: the subscription is
// cancelled and what it still delivers handed back. It does not wait for
// running handlers, so that a handler's settlement (a breaker) can call
// it.
func (c *Consumer) pauseFor(ctx context.Context, cause PauseCause) error {
	return c.control("pausing", func() error {
		if !slices.Contains(c.pausedBy, cause) {
			c.pausedBy = append(c.pausedBy, cause)
		}
		cur := c.current
		if cur == nil {
			return nil
		}
		c.current = nil
		c.logger.Info("acemq: consumer paused", "consumer", c.id, "by", string(cause))
		c.observer.Event(Event{Kind: EventConsumerPaused, Conn: c.conn, Queue: c.queue, Consumer: c.id, Reason: string(cause)})
		// A subscription replaced by a rescale may still be delivering too.
		for f := range c.live {
			f.stopFeeding()
		}
		c.retire(cur)
		if err := cur.sub.Cancel(ctx); err != nil && !errors.Is(err, ErrClosed) {
			return err
		}
		return nil
	})
}

// resumeFor lets go of the consumer for cause; it subscribes again once
// no cause holds it.
func (c *Consumer) resumeFor(ctx context.Context, cause PauseCause) error {
	return c.control("resuming", func() error {
		c.pausedBy = slices.DeleteFunc(c.pausedBy, func(p PauseCause) bool { return p == cause })
		switch {
		case len(c.pausedBy) > 0 || c.current != nil:
			return nil
		case c.halted.Load():
			return errors.New("it halted at a failed message of its append-only queue; close it and consume again")
		}
		if err := c.subscribe(ctx, c.effectiveScale().Prefetch); err != nil {
			c.pausedBy = append(c.pausedBy, cause)
			return err
		}
		c.logger.Info("acemq: consumer resumed", "consumer", c.id, "by", string(cause))
		c.observer.Event(Event{Kind: EventConsumerResumed, Conn: c.conn, Queue: c.queue, Consumer: c.id, Reason: string(cause)})
		return nil
	})
}

// setProbe makes the consumer take one message at a time (a half-open
// breaker's probe), or its own Scale again.
func (c *Consumer) setProbe(ctx context.Context, on bool) error {
	return c.control("probing with", func() error {
		was := c.probe
		c.probe = on
		if err := c.apply(ctx); err != nil {
			c.probe = was
			return err
		}
		return nil
	})
}

// cancelCurrent cancels the subscription for good (a halted append-only
// consumer).
func (c *Consumer) cancelCurrent(ctx context.Context) error {
	c.ctl.Lock()
	cur := c.current
	c.current = nil
	if cur != nil {
		c.retire(cur)
	}
	c.ctl.Unlock()
	if cur == nil {
		return nil
	}
	return cur.sub.Cancel(ctx)
}

// defaultID is queue, or queue-N for the first N from 2 that taken does not
// know.
func defaultID(queue string, taken func(string) bool) string {
	id := queue
	for n := 2; taken(id); n++ {
		id = queue + "-" + strconv.Itoa(n)
	}
	return id
}
