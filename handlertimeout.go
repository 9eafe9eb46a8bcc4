package acemq

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/option"
	"github.com/acemq-go/acemq/transport"
)

// WithHandlerTimeout bounds how long a handler may run on one delivery (its
// consume interceptors and the decoding of its body included): after d (on
// the Conn's clock) its context is cancelled, with a cause matching
// ErrHandlerTimeout, and the delivery is settled at once as a retry under
// the policy, of class contract.ReasonTimeout, its error saying the timeout
// ("the handler timed out after 5s", which a dead letter that exhausted its
// attempts reads after "exhausted 3 attempts: "). A handler that returns
// later has its decision discarded: it is told as EventHandlerOverran and
// counted in Stats, and its goroutine, one of WithConcurrency's, stays taken
// (Stats.Overrunning) until it returns, since Go cannot stop it.
//
// There is no timeout by default: only the handler knows how long its work
// may take, and a timeout that is too short retries work that was about to
// succeed (and may still succeed, twice). d must be above 0. It cannot be
// combined with WithRetryInPlace, whose retries run in the handler's
// goroutine: a timed-out message would either wait behind the handler
// that hangs or leave its place in the queue.
func WithHandlerTimeout(d time.Duration) ConsumeOption {
	return consumeOption(option.Named("WithHandlerTimeout", func(o *options) error {
		if d <= 0 {
			return invalid("the handler timeout is %s but must be above 0", d)
		}
		o.cons.handlerTimeout = d
		return nil
	}))
}

// ErrHandlerTimeout is the cause (context.Cause) of a handler's context
// cancelled at its timeout; the retry's error matches it too.
var ErrHandlerTimeout = errors.New("acemq: handler timeout")

// timedOutError is a handler's timeout, as the retry's error and the
// handler's context's cause.
type timedOutError struct{ after time.Duration }

func (e timedOutError) Error() string {
	return contract.ReasonTextTimedOut + contract.FormatDuration(e.after)
}

func (e timedOutError) Is(target error) bool { return target == ErrHandlerTimeout }

// handlerTimeouts is a consumer's handler timeout and what it counts.
type handlerTimeouts struct {
	limit time.Duration // 0: none
	// timedOut counts handlers that ran past the limit; overrunning are
	// those still running.
	timedOut, overrunning atomic.Int64
}

// handleInTime runs the handler of d, as c.handle does, within the
// consumer's handler timeout. Whichever comes first, the handler's return
// or the timeout, settles h: late is true when the timeout did (from its
// timer, not from this goroutine, which then also marks the delivery no
// longer busy), and the handler's result is then discarded, told as
// EventHandlerOverran.
func (c *Consumer) handleInTime(h inHand, d transport.Delivery) (in delivered, panicErr error, late bool) {
	limit := c.timeouts.limit
	if limit <= 0 {
		in, panicErr = c.handle(h.ctx, d)
		return in, panicErr, false
	}
	ctx, cancel := context.WithCancelCause(h.ctx)
	defer cancel(nil)
	var settled atomic.Bool     // by the handler's return or by the timeout, once
	told := make(chan struct{}) // the timeout is counted and told
	began := time.Now()
	onTime := h // the timer's own copy, made on the timeout's path only: h stays on the worker's stack
	stop := c.clock.AfterFunc(limit, func() {
		if settled.Swap(true) {
			return
		}
		c.settles.add() // so that Close waits for the retry's republish
		defer c.settles.done()
		c.timeouts.timedOut.Add(1)
		c.timeouts.overrunning.Add(1)
		c.logger.Warn("acemq: handler timed out; retrying the message", "message_id", onTime.info.MessageID, "timeout", limit)
		c.observer.Event(Event{Kind: EventHandlerTimedOut, Conn: c.conn, Queue: c.queue, MessageID: onTime.info.MessageID,
			Delay: limit, Class: contract.ReasonTimeout})
		close(told)
		cause := timedOutError{limit}
		cancel(cause)
		onTime.handled = time.Since(began)
		in := c.timedOut(onTime.Delivery, cause) // not d, which the closure would move to the heap on every delivery
		c.carryOut(onTime, in, settle(in, c.policy, c.ladder, c.random))
		c.busy.done() // settled: the worker's handler no longer holds a pause
	})
	in, panicErr = c.handle(ctx, d)
	stop()
	if !settled.Swap(true) {
		return in, panicErr, false
	}
	<-told // so that the overrun is told after the timeout, and counted after it
	c.timeouts.overrunning.Add(-1)
	ran := time.Since(began)
	c.logPanic(d, panicErr)
	c.logger.Warn("acemq: a handler returned after its timeout; its decision is discarded, the message was retried",
		"message_id", h.info.MessageID, "timeout", limit, "ran", ran, "decision", in.Decision.String())
	c.observer.Event(Event{Kind: EventHandlerOverran, Conn: c.conn, Queue: c.queue, MessageID: h.info.MessageID,
		Delay: ran, Class: contract.ReasonTimeout, Reason: in.Decision.String()})
	return in, panicErr, true
}

// timedOut is what settles a delivery whose handler ran past its timeout:
// a retry with the timeout as its error.
func (c *Consumer) timedOut(d transport.Delivery, cause timedOutError) delivered {
	env := readDelivery(d)
	return delivered{Source: c.queue, Decision: Retry(cause), TimedOut: true, Attempt: env.Attempt, Age: env.Age(c.clock.Now())}
}
