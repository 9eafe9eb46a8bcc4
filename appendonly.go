package acemq

import (
	"context"
	"errors"
	"fmt"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/option"
	"github.com/acemq-go/acemq/transport"
)

// AppendOnly makes a consumer one of an append-only queue, a RabbitMQ
// stream, which keeps every message whatever its consumers do: an ack only
// lets the broker send more, and there is nothing to hand back (RabbitMQ
// 3.10 closes the whole connection on a stream's nack or reject, 540
// NOT_IMPLEMENTED). Package stream builds on it.
//
// Such a consumer never nacks and never republishes to its own queue (a
// copy would be appended to the log). What another consumer would hand
// back (deliveries sent ahead when it closes) it acknowledges unhandled,
// the outcome Requeued: the message stays in the log. A failure (a
// decision other than Accept, a body that does not decode, a panic) is set
// aside in Q.dlq or Q.parked as usual when SetAside is true; otherwise, or
// when that set-aside fails, or for a retry or a Requeue, the consumer
// halts: the delivery is acknowledged unhandled (Requeued, with the
// failure's reason and class), the subscription is cancelled, and every
// delivery after it is acknowledged unhandled. Nothing is declared but,
// with SetAside, Q.dlq and Q.parked; no retry ladder.
type AppendOnly struct {
	// Arguments are the subscription's basic.consume arguments, asked for
	// again at every subscription (after a lost connection too): a stream
	// consumer's x-stream-offset, resuming after the last offset handled.
	Arguments func() Table
	// SetAside sets a failure aside and goes on, instead of halting.
	SetAside bool
	// Settled, when set, is told each delivery's settlement, after the
	// Observer and in the consumer's goroutine: the halting one is the
	// first whose outcome is Requeued.
	Settled func(d *DeliveryInfo, s SettleResult)
}

// WithAppendOnly makes the consumer one of an append-only queue (see
// AppendOnly).
func WithAppendOnly(a AppendOnly) ConsumeOption {
	return consumeOption(option.Named("WithAppendOnly", func(o *options) error {
		o.cons.appendOnly = &a
		return nil
	}))
}

// appendOnlySetup is the subscription's Setup of an append-only consumer:
// the dead-letter half when it sets failures aside, else nothing.
func (c *Consumer) appendOnlySetup() func(context.Context, transport.Declarer) error {
	if !c.appendOnly.SetAside {
		return nil
	}
	return func(ctx context.Context, d transport.Declarer) error {
		return c.ladder.DeclareDeadLetters(ctx, d)
	}
}

// halts says whether an append-only consumer halts rather than carry out s.
func (c *Consumer) halts(s settlement) bool {
	switch s.Outcome {
	case contract.Accepted:
		return false
	case contract.DeadLettered, contract.Parked:
		return !c.appendOnly.SetAside
	}
	return true
}

// halt ends an append-only consumer at h, which failed as s says: the
// subscription is cancelled and h acknowledged unhandled.
func (c *Consumer) halt(h inHand, s settlement) {
	c.halted.Store(true)
	if err := c.cancelCurrent(context.Background()); err != nil && !errors.Is(err, ErrClosed) {
		c.logger.Warn("acemq: cancelling the subscription of a halted consumer failed", "error", err)
	}
	c.logger.Warn("acemq: the consumer of an append-only queue halted at a failed message", "message_id", h.info.MessageID,
		"reason_class", string(s.Class), "reason", s.Reason)
	s = settlement{Outcome: contract.Requeued, Reason: s.Reason, Class: s.Class}
	if err := h.Ack(); err != nil {
		s.Reason = fmt.Sprintf("%s (its ack failed: %v)", s.Reason, err)
	}
	c.settled(h, contract.Requeued, s)
}

// ackUnhandled is an append-only consumer's hand-back: an ack, which
// leaves the message in the log.
func ackUnhandled(ack func() error) func(requeue bool) error {
	return func(bool) error { return ack() }
}
