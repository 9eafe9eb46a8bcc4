package acemq

import (
	"maps"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/option"
	"github.com/acemq-go/acemq/transport"
)

// WithRetryInPlace retries a failed message where it is: its wait is held
// in the consumer's goroutine, the queue's next deliveries behind it, and
// the handler runs again with the next attempt, instead of republishing it
// to a rung or to the back of the queue. It keeps a queue's order, at
// concurrency 1 (package partition). Every wait is the policy's (jittered),
// whatever its broker wait threshold: no rung is declared. When the policy
// gives up, the message is dead-lettered as any consumer's (exhausted,
// too old); a wait that outlasts Close's drain timeout ends it, the
// delivery handed back to the broker.
func WithRetryInPlace() ConsumeOption {
	return consumeOption(option.Named("WithRetryInPlace", func(o *options) error {
		o.cons.inPlace = true
		return nil
	}))
}

// retryInPlace handles d again after each retry s asks for, until a
// settlement that is not a retry; ok is false when Close cut a wait short.
func (c *Consumer) retryInPlace(h *inHand, d transport.Delivery, in delivered, s settlement) (delivered, settlement, bool) {
	for s.Outcome == contract.RetriedInConsumer {
		// The timer is set before the wait is told, so that whoever moves a
		// manual clock on at the event moves this wait on too; its end is
		// told below, after it, whatever the timer does meanwhile.
		over := make(chan struct{})
		stop := c.clock.AfterFunc(s.Wait, func() { close(over) })
		c.observer.Event(Event{Kind: EventWaitStarted, Conn: c.conn, Queue: c.queue, MessageID: h.info.MessageID, Delay: s.Wait, Class: s.Class})
		select {
		case <-over:
		case <-c.handlerCtx.Done():
			stop()
			c.observer.Event(Event{Kind: EventWaitEnded, Conn: c.conn, Queue: c.queue, MessageID: h.info.MessageID, Delay: s.Wait, Class: s.Class, CutShort: true})
			return in, s, false
		}
		c.observer.Event(Event{Kind: EventWaitEnded, Conn: c.conn, Queue: c.queue, MessageID: h.info.MessageID, Delay: s.Wait, Class: s.Class})
		// The next attempt sees its number on the Envelope; the delivery
		// itself, which a set-aside republishes, is left as it came.
		d.Headers = maps.Clone(d.Headers)
		if d.Headers == nil {
			d.Headers = transport.Table{}
		}
		d.Headers[contract.HeaderAttempt] = int64(s.Attempt)
		var panicErr error
		began := time.Now()
		in, panicErr = c.handle(h.ctx, d)
		if in.DecodeErr == nil && !in.Refused {
			h.handled = time.Since(began)
		}
		c.logPanic(d, panicErr)
		s = settle(in, c.policy, c.ladder, c.random)
	}
	return in, s, true
}
