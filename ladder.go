package acemq

import (
	"context"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/transport"
)

// RetryDecision is a policy's answer for one failure (RetryPolicy.Decide):
// what a consumer does with it, in the outcome words of package contract.
type RetryDecision struct {
	// Outcome is contract.RetriedInConsumer, contract.RetriedOnRung or
	// contract.DeadLettered (the policy gives up).
	Outcome contract.Outcome
	// Class is the reason class: contract.ReasonRetry, ReasonExhausted or
	// ReasonTooOld.
	Class contract.ReasonClass
	// Attempt is the attempt that failed.
	Attempt int
	// Delay is the scheduled wait, without jitter; zero when giving up.
	Delay time.Duration
	// Reason is why the policy gives up (x-acemq-error, before ": " and
	// the handler's error); "" when the message is retried.
	Reason string
}

// GivesUp reports whether the message is not to be tried again.
func (d RetryDecision) GivesUp() bool { return d.Outcome == contract.DeadLettered }

// Decide answers a failure at attempt (1-based; below 1 counts as 1) of a
// message of age (UnknownAge counts as young enough): give up, because the
// attempts are used or the message is too old, or wait the scheduled time
// in the consumer or on a rung. It is what a consumer decides.
func (p RetryPolicy) Decide(attempt int, age time.Duration) RetryDecision {
	d := retry.Decide(p, attempt, age)
	return RetryDecision{Outcome: d.Outcome.Settled(), Class: d.Outcome.Class(), Attempt: d.Attempt, Delay: d.Delay,
		Reason: d.Reason()}
}

// Ladder is the retry ladder a policy gives a source queue: its rungs, and
// everything a consumer of the queue declares. It is known before anything
// is published, and building it (RetryPolicy.Ladder) touches no broker.
type Ladder struct{ l retry.Ladder }

// Rung is one queue of a ladder. Nothing consumes it: its time-to-live is
// the wait, and it dead-letters home to the source queue.
type Rung struct {
	Queue string
	Delay time.Duration
	// Arguments are the rung's queue arguments, as declared.
	Arguments Table
}

// Ladder is the ladder of source under p, with rungs of kind ("" is
// contract.DefaultRungKind). It fails on a blank source, an invalid policy
// or an unknown kind.
func (p RetryPolicy) Ladder(source string, kind contract.RungKind) (Ladder, error) {
	l, err := retry.NewLadder(source, p, kind)
	if err != nil {
		return Ladder{}, err
	}
	return Ladder{l}, nil
}

// Source is the queue the ladder's messages come home to.
func (l Ladder) Source() string { return l.l.Source() }

// Kind is the kind of the ladder's rungs.
func (l Ladder) Kind() contract.RungKind { return l.l.Kind() }

// Rungs are the ladder's rungs in schedule order.
func (l Ladder) Rungs() []Rung {
	inner := l.l.Rungs()
	rungs := make([]Rung, len(inner))
	for i, r := range inner {
		rungs[i] = publicRung(r)
	}
	return rungs
}

func publicRung(r retry.Rung) Rung {
	return Rung{Queue: r.Queue, Delay: r.Delay, Arguments: r.Declaration().Arguments}
}

// Queues are the names of the rungs, in schedule order.
func (l Ladder) Queues() []string { return l.l.Queues() }

// RungFor is the rung that holds a wait of d: the shortest one at least d
// long, else the longest. It is none when the ladder is empty or d waits in
// the consumer.
func (l Ladder) RungFor(d time.Duration) (Rung, bool) {
	r, ok := l.l.RungFor(d)
	if !ok {
		return Rung{}, false
	}
	return publicRung(r), true
}

// WaitRange is how long a retry scheduled to wait d really waits: a rung's
// time-to-live, exactly, or the consumer's wait, spread by the policy's
// jitter and never below contract.MinConsumerWait.
func (l Ladder) WaitRange(d time.Duration) (shortest, longest time.Duration) {
	if r, ok := l.l.RungFor(d); ok {
		return r.Delay, r.Delay
	}
	return retry.JitterRange(l.l.Policy(), d)
}

// String is "no retry rungs for Q" or "retry rungs for Q: Q.retry.quorum.40s, ...".
func (l Ladder) String() string { return l.l.String() }

// Declarations are what the ladder declares, in the contract's order: when
// there is a rung, the retry exchange, every rung and the source queue's
// binding to it under its own name; then, always, the dead-letter exchange,
// Q.dlq and Q.parked, each bound under its own name. The source queue
// belongs to its owner and is not declared.
func (l Ladder) Declarations() []Declaration { return l.l.Declarations() }

// Declare sends the ladder's declarations on c in order, stopping at the
// first that fails. A consumer declares its ladder by itself; this is for
// a queue whose consumers start later, or an operator's tool.
func (l Ladder) Declare(ctx context.Context, c *Conn) error {
	return transport.DeclareAll(ctx, c.transport, l.l.Declarations())
}
