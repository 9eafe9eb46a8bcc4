package acemq

import (
	"fmt"
	"maps"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/transport"
)

// settlement is what to do with one delivery (CONTRACT.md section 7): ack
// it, or republish it to Target (after Wait, in the consumer) and then ack
// it. It is decided without a broker; the consumer carries it out.
type settlement struct {
	Outcome contract.Outcome
	// Target is the queue the message is republished to; "" means ack only.
	Target string
	// Attempt is the x-acemq-attempt of a retried message.
	Attempt int
	// Reason is the x-acemq-error of a set-aside message.
	Reason string
	// Class sorts the reason, or the retry, for observers.
	Class contract.ReasonClass
	// Wait is how long the consumer holds the delivery before republishing.
	Wait time.Duration
	// Delay is a retry's scheduled wait: on the rung, or (with jitter,
	// as Wait) in the consumer.
	Delay time.Duration
}

// delivered is what the settlement of one delivery depends on.
type delivered struct {
	Source    string
	DecodeErr error
	Decision  Decision
	// Panicked: the handler (or an interceptor) panicked; Decision
	// rejects with the panic.
	Panicked bool
	// Refused: an interceptor refused it, and the handler did not run;
	// Decision retries with the refusal.
	Refused bool
	Attempt int
	Age     time.Duration // UnknownAge when not known
	// RungUnavailable: the rung for this wait is missing or returned the
	// message, so the wait is the consumer's.
	RungUnavailable bool
	// TimedOut: the handler ran past its timeout (WithHandlerTimeout);
	// Decision retries with the timeout.
	TimedOut bool
}

// settle decides a delivery's settlement from the handler's decision, the
// policy and its ladder. random draws the jitter of consumer waits.
func settle(in delivered, policy RetryPolicy, ladder retry.Ladder, random func() float64) settlement {
	// The set-aside queues' names are built only when needed: an accept,
	// the common case, allocates nothing.
	park := func(reason string, class contract.ReasonClass) settlement {
		return settlement{Outcome: contract.Parked, Target: contract.ParkedQueue(in.Source), Reason: reason, Class: class}
	}
	deadLetter := func(reason string, class contract.ReasonClass) settlement {
		return settlement{Outcome: contract.DeadLettered, Target: contract.DeadLetterQueue(in.Source), Reason: reason, Class: class}
	}
	if in.DecodeErr != nil {
		if !IsTemporary(in.DecodeErr) {
			return park(contract.ReasonTextUndecodable+in.DecodeErr.Error(), contract.ReasonUndecodable)
		}
		// A body that may decode later (its claim-check store is out of
		// reach) is retried as a handler's failure would be.
		in.Decision = Retry(fmt.Errorf("%s%w", contract.ReasonTextUndecodable, in.DecodeErr))
	}
	d := in.Decision
	switch {
	case d.verdict == accepted:
		return settlement{Outcome: contract.Accepted}
	case d.verdict == parked:
		return park(d.err.Error(), contract.ReasonParked)
	case d.verdict == requeued:
		// Held, then put back as a copy with its headers as they were
		// (putBack): no attempt spent, no x-acemq-error written.
		return settlement{Outcome: contract.PutBack, Target: in.Source, Reason: d.err.Error(),
			Class: contract.ReasonRequeue, Wait: contract.RequeueDelay, Delay: contract.RequeueDelay}
	case in.Panicked:
		return deadLetter(d.err.Error(), contract.ReasonPanicked)
	case d.verdict == rejected:
		return deadLetter(d.err.Error(), contract.ReasonRejected)
	case d.verdict == retried && IsFatal(d.err):
		return deadLetter(d.err.Error(), contract.ReasonFatal)
	case d.verdict != retried:
		return deadLetter(contract.ReasonTextNoDecision, contract.ReasonNoDecision)
	}
	r := retry.Decide(policy, in.Attempt, in.Age)
	switch r.Outcome {
	case retry.Exhausted:
		return deadLetter(r.Reason()+": "+d.err.Error(), contract.ReasonExhausted)
	case retry.TooOld:
		return deadLetter(r.Reason()+": "+d.err.Error(), contract.ReasonTooOld)
	}
	next, delay, class := r.Attempt+1, r.Delay, contract.ReasonRetry
	if d.after > 0 {
		delay = retry.Chosen(policy, d.after)
	}
	if in.TimedOut {
		class = contract.ReasonTimeout
	}
	if rung, ok := ladder.RungFor(delay); ok && !in.RungUnavailable {
		return settlement{Outcome: contract.RetriedOnRung, Target: rung.Queue, Attempt: next, Class: class, Delay: rung.Delay}
	}
	wait := retry.Jittered(policy, delay, random)
	if d.after > 0 {
		wait = retry.JitteredUp(policy, delay, random)
	}
	return settlement{Outcome: contract.RetriedInConsumer, Target: in.Source, Attempt: next, Class: class, Wait: wait, Delay: wait}
}

// republication is the publish that carries out s for message m: through the
// default exchange to the target queue, mandatory and persistent, with the
// body, properties and headers kept; a retry gets its next attempt, a
// set-aside its reason, a message put back neither. The quorum queue's
// x-delivery-count is dropped: RabbitMQ 4 would pass it on as it is, a count
// of deliveries of another message.
func republication(m transport.Message, s settlement) transport.Publishing {
	m.Headers = maps.Clone(m.Headers)
	if m.Headers == nil {
		m.Headers = transport.Table{}
	}
	delete(m.Headers, contract.HeaderDeliveryCount)
	delete(m.Headers, contract.ArgStreamOffset) // the broker's, of the stream it was read from
	switch {
	case s.Reason != "":
		m.Headers[contract.HeaderError] = s.Reason
	case s.Attempt > 0:
		m.Headers[contract.HeaderAttempt] = int64(s.Attempt)
	}
	m.Persistent = true
	// A per-message expiration could drop it from Q.dlq unseen, and rungs
	// never use one (CONTRACT.md section 2).
	m.Expiration = ""
	return transport.Publishing{RoutingKey: s.Target, Mandatory: true, Message: m}
}
