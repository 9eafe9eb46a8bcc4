package acemq

import (
	"context"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/handoff"
)

// worker is what a worker goroutine keeps across its deliveries: the
// context its handlers' derive from and the slot in it where a handler
// hands over the last wait of its work (package internal/handoff: the
// idempotent consumer's confirm). A consumer that retries in place, or
// reads a stream, settles each delivery in the worker, in order: it
// offers no slot.
type worker struct {
	ctx  context.Context
	slot *handoff.Slot
}

func (c *Consumer) newWorker() worker {
	if c.inPlace || c.appendOnly != nil {
		return worker{ctx: c.handlerCtx}
	}
	s := &handoff.Slot{}
	return worker{ctx: handoff.Context(c.handlerCtx, s), slot: s}
}

// take returns what the handler handed over: nil if nothing.
func (w worker) take() func() error {
	if w.slot == nil {
		return nil
	}
	return w.slot.Take()
}

// settleAfter settles h, in a goroutine of its own, once wait has
// returned: the worker goes on to its next delivery meanwhile, so that
// its handler's place is not held while the wait is, but the message is
// acked only after it. A failed wait makes an accept a retry with its
// error, as the handler would have. Close waits for it as for any
// settlement under way.
func (c *Consumer) settleAfter(h inHand, in delivered, s settlement, wait func() error) {
	c.settles.add()
	go func() {
		defer c.settles.done()
		defer c.busy.done()
		if err := wait(); err != nil && s.Outcome == contract.Accepted {
			in.Decision = Retry(err)
			s = settle(in, c.policy, c.ladder, c.random)
		}
		c.carryOut(h, in, s)
	}()
}
