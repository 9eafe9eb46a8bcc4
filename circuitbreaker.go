package acemq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/breaker"
	"github.com/acemq-go/acemq/internal/option"
)

// CircuitBreaker stops a consumer while its dependency is failing, so that
// an outage does not turn every message into retries and then dead letters
// (WithCircuitBreaker). Closed, it counts the dependency's failures: a
// Retry (RetryAfter too), a handler timeout, and a retry policy running out
// (exhausted, too old); a success is an accepted message. What is the
// message's own fault (Fatal, Reject, Park, a panic, an undecodable body,
// no decision) and Requeue count neither way. When failures reach
// FailureRatio of the calls of Window (once there were MinCalls), or
// ConsecutiveFailures in a row, it opens: the consumer pauses (see
// Consumer.Pause). After CoolDown it is half-open: the consumer takes one
// message at a time; the first success closes it (the consumer runs at its
// Scale again), a failure opens it for another CoolDown.
//
// A message is never retried or dead-lettered because of the outage: a
// counted failure that settles while the breaker is open (a handler that was
// running when it opened, or a failed probe) goes back to its queue as it
// came, its attempt unchanged (as Requeue does, at once), and is handled
// again once the breaker closes.
//
// A zero field takes its default (DefaultCircuitBreaker()); a negative
// FailureRatio or ConsecutiveFailures turns that trigger off.
type CircuitBreaker struct {
	FailureRatio        float64
	Window              time.Duration
	MinCalls            int
	ConsecutiveFailures int
	CoolDown            time.Duration
}

// DefaultCircuitBreaker is what a zero field of a CircuitBreaker takes.
// Half the calls of a minute, at least 20 of them, because a breaker that
// trips on ordinary flakiness stops a healthy service (resilience4j's
// ratio; MassTransit's 15% suits its retries, which are immediate); or 10
// failures in a row, which trips within seconds of a full outage even after
// a minute of successes (the ratio alone would wait for as many failures).
// A cool-down of 30s: an outage shorter than that costs one probe, a longer
// one a probe each 30s.
func DefaultCircuitBreaker() CircuitBreaker {
	return CircuitBreaker{FailureRatio: 0.5, Window: time.Minute, MinCalls: 20, ConsecutiveFailures: 10, CoolDown: 30 * time.Second}
}

// WithCircuitBreaker gives the consumer a circuit breaker (CircuitBreaker
// says how it works). Not with WithAppendOnly: a message put back would be
// appended to the log again.
func WithCircuitBreaker(b CircuitBreaker) ConsumeOption {
	return consumeOption(option.Named("WithCircuitBreaker", func(o *options) error {
		cfg, coolDown, err := b.config()
		if err != nil {
			return invalid("the circuit breaker: %v", err)
		}
		o.cons.breaker = &breakerConfig{cfg, coolDown}
		return nil
	}))
}

// breakerConfig is a CircuitBreaker with its defaults filled in.
type breakerConfig struct {
	breaker.Config
	coolDown time.Duration
}

func (b CircuitBreaker) config() (breaker.Config, time.Duration, error) {
	d := DefaultCircuitBreaker()
	pick := func(v, def int) int {
		switch {
		case v < 0:
			return 0
		case v == 0:
			return def
		}
		return v
	}
	ratio := b.FailureRatio
	switch {
	case ratio < 0:
		ratio = 0
	case ratio == 0:
		ratio = d.FailureRatio
	}
	cfg := breaker.Config{FailureRatio: ratio, Window: durationOr(b.Window, d.Window), MinCalls: pick(b.MinCalls, d.MinCalls),
		ConsecutiveFailures: pick(b.ConsecutiveFailures, d.ConsecutiveFailures)}
	coolDown := durationOr(b.CoolDown, d.CoolDown)
	if b.Window < 0 || b.CoolDown < 0 {
		return cfg, 0, fmt.Errorf("the window %v and the cool-down %v must not be negative", b.Window, b.CoolDown)
	}
	return cfg, coolDown, cfg.Validate()
}

// durationOr is v, or def for 0.
func durationOr(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

// circuit is a consumer's breaker at run time. Its transitions pause and
// resume the consumer one at a time and in order, each carried out at once
// by the goroutine that caused it (the worker whose delivery tripped it,
// the cool-down's timer), unless another is carrying one out, which then
// carries this one out too. The worker that trips it so stops taking
// deliveries until the consumer is paused: were the pause left to a
// goroutine of its own, a loaded machine would go on handling what the
// subscription still delivers meanwhile (a put-back storm, then accepts
// the breaker ignores while open).
type circuit struct {
	c        *Consumer
	coolDown time.Duration
	ctx      context.Context // ended by stop
	cancel   context.CancelFunc

	// shown is the breaker's state for Status, which must not wait for
	// mu: an observer told of a transition under mu may ask for it.
	shown atomic.Value // a BreakerState

	mu        sync.Mutex
	b         *breaker.Breaker
	applied   breaker.State // what the consumer was last made to do
	applying  bool          // a goroutine applies the breaker's state
	stopTimer func() bool   // the cool-down's, while open
	stopped   bool
	work      tasks // the application under way, and the cool-down's callback
}

// newCircuit is the breaker of c as o asks for it, or nil.
func newCircuit(c *Consumer, o consumeOptions) (*circuit, error) {
	cfg := o.breaker
	switch {
	case cfg == nil:
		return nil, nil
	case o.appendOnly != nil:
		return nil, invalid("a circuit breaker puts messages back on their queue, which an append-only consumer cannot")
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &circuit{c: c, coolDown: cfg.coolDown, ctx: ctx, cancel: cancel, b: breaker.New(cfg.Config), applied: breaker.Closed}
	k.shown.Store(BreakerClosed)
	return k, nil
}

// carryOut carries out a handled delivery's settlement s, counted by the
// circuit breaker if there is one, which puts the delivery back instead of
// spending its attempt while it is open.
func (c *Consumer) carryOut(h inHand, in delivered, s settlement) {
	if c.circuit.settled(s) {
		c.putBack(h, contract.ReasonCircuitOpen)
		return
	}
	c.execute(h, in, s)
}

// counts says whether the breaker counts s, and as a failure or a success:
// only what the dependency's failure explains.
func counts(s settlement) (counted, failed bool) {
	switch s.Class {
	case contract.ReasonRetry, contract.ReasonTimeout, contract.ReasonExhausted, contract.ReasonTooOld:
		return true, true
	}
	return s.Outcome == contract.Accepted, false
}

// settled counts s and says whether the delivery goes back to its queue
// instead (putBack): a counted failure while the breaker is open.
func (k *circuit) settled(s settlement) (putBack bool) {
	if k == nil {
		return false
	}
	counted, failed := counts(s)
	if !counted {
		return false
	}
	k.mu.Lock()
	tr, moved := k.b.Record(k.c.clock.Now(), failed)
	open := k.b.State() == breaker.Open
	apply := moved && k.moved(tr)
	k.mu.Unlock()
	if apply {
		k.apply()
	}
	return failed && open
}

// moved tells of a transition; k.mu is held. It says whether the caller
// is to apply it (k.apply, once k.mu is let go of): nobody else is
// applying one.
func (k *circuit) moved(tr breaker.Transition) (apply bool) {
	c := k.c
	k.shown.Store(BreakerState(tr.To))
	if k.stopped {
		return false
	}
	log := c.logger.Info
	if tr.To == breaker.Open {
		log = c.logger.Warn
		k.work.add()
		k.stopTimer = c.clock.AfterFunc(k.coolDown, k.coolDownOver)
	}
	log("acemq: circuit breaker "+string(tr.To), "consumer", c.id, "from", string(tr.From), "reason", tr.Reason)
	c.observer.Event(Event{Kind: EventBreakerChanged, Conn: c.conn, Queue: c.queue, Consumer: c.id, Breaker: BreakerState(tr.To), Reason: tr.Reason})
	if k.applying {
		return false
	}
	k.applying = true
	k.work.add()
	return true
}

func (k *circuit) coolDownOver() {
	defer k.work.done()
	k.mu.Lock()
	k.stopTimer = nil
	tr, ok := k.b.CoolDownOver()
	apply := ok && k.moved(tr)
	k.mu.Unlock()
	if apply {
		k.apply()
	}
}

// apply makes the consumer do what the breaker's state says, until it
// does: open pauses it, half-open takes one message at a time, closed runs
// it at its Scale.
func (k *circuit) apply() {
	defer k.work.done()
	for {
		k.mu.Lock()
		want := k.b.State()
		if want == k.applied || k.stopped {
			k.applying = false
			k.mu.Unlock()
			return
		}
		k.mu.Unlock()
		err := k.enter(want)
		k.mu.Lock()
		k.applied = want
		if err != nil && k.ctx.Err() == nil {
			k.c.logger.Error("acemq: circuit breaker: could not make the consumer "+string(want), "consumer", k.c.id, "error", err)
			if tr, ok := k.b.ProbeNotStarted(err.Error()); ok {
				k.moved(tr) // applied by this loop, which applies
			}
		}
		k.mu.Unlock()
	}
}

func (k *circuit) enter(s breaker.State) error {
	c, ctx := k.c, k.ctx
	switch s {
	case breaker.Open:
		return c.pauseFor(ctx, PausedByBreaker)
	case breaker.HalfOpen:
		return errors.Join(c.setProbe(ctx, true), c.resumeFor(ctx, PausedByBreaker))
	}
	return errors.Join(c.setProbe(ctx, false), c.resumeFor(ctx, PausedByBreaker))
}

// state is the breaker's state for ConsumerStatus.
func (k *circuit) state() BreakerState {
	if k == nil {
		return ""
	}
	return k.shown.Load().(BreakerState)
}

// stop ends the breaker with its consumer: no cool-down timer and no
// transition under way after it returns (or ctx ends).
func (k *circuit) stop(ctx context.Context) {
	if k == nil {
		return
	}
	k.mu.Lock()
	k.stopped = true
	if k.stopTimer != nil && k.stopTimer() {
		k.work.done() // its callback will not run
	}
	k.stopTimer = nil
	k.mu.Unlock()
	k.cancel()
	select {
	case <-k.work.idle():
	case <-ctx.Done():
	}
}
