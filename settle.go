package acemq

import (
	"fmt"
	"maps"
	"time"

	"github.com/acemq-go/acemq/transport"
)

// Outcome says how a delivery was settled.
type Outcome uint8

const (
	// Accepted: the handler accepted it; it was acknowledged.
	Accepted Outcome = iota + 1
	// RetriedInConsumer: held, waited for in the consumer, republished.
	RetriedInConsumer
	// RetriedOnRung: republished to a rung of the retry ladder.
	RetriedOnRung
	// DeadLettered: set aside in Q.dlq.
	DeadLettered
	// Parked: set aside in Q.parked.
	Parked
	// Requeued: back on its queue to be delivered again: handed back
	// unsettled (a shutdown), or, after a failed republish, published to
	// its queue again as it was and then acknowledged.
	Requeued
)

func (o Outcome) String() string {
	switch o {
	case Accepted:
		return "accepted"
	case RetriedInConsumer:
		return "retried in consumer"
	case RetriedOnRung:
		return "retried on rung"
	case DeadLettered:
		return "dead-lettered"
	case Parked:
		return "parked"
	case Requeued:
		return "requeued"
	}
	return fmt.Sprintf("Outcome(%d)", o)
}

// settlement is what to do with one delivery (CONTRACT.md section 7): ack
// it, or republish it to Target (after Wait, in the consumer) and then ack
// it. It is decided without a broker; the consumer carries it out.
type settlement struct {
	Outcome Outcome
	// Target is the queue the message is republished to; "" means ack only.
	Target string
	// Attempt is the x-acemq-attempt of a retried message.
	Attempt int
	// Reason is the x-acemq-error of a set-aside message.
	Reason string
	// Class sorts the reason, or the retry, for observers.
	Class ReasonClass
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
	// Panicked: the handler panicked; Decision rejects with the panic.
	Panicked bool
	Attempt  int
	Age      time.Duration // UnknownAge when not known
	// RungUnavailable: the rung for this wait is missing or returned the
	// message, so the wait is the consumer's.
	RungUnavailable bool
}

// settle decides a delivery's settlement from the handler's decision, the
// policy and its ladder. random draws the jitter of consumer waits.
func settle(in delivered, policy RetryPolicy, ladder RetryLadder, random func() float64) settlement {
	// The set-aside queues' names are built only when needed: an accept,
	// the common case, allocates nothing.
	park := func(reason string, class ReasonClass) settlement {
		return settlement{Outcome: Parked, Target: ParkedQueue(in.Source), Reason: reason, Class: class}
	}
	deadLetter := func(reason string, class ReasonClass) settlement {
		return settlement{Outcome: DeadLettered, Target: DeadLetterQueue(in.Source), Reason: reason, Class: class}
	}
	if in.DecodeErr != nil {
		return park("could not be decoded: "+in.DecodeErr.Error(), ReasonUndecodable)
	}
	d := in.Decision
	switch {
	case d.verdict == accepted:
		return settlement{Outcome: Accepted}
	case d.verdict == parked:
		return park(d.err.Error(), ReasonParked)
	case in.Panicked:
		return deadLetter(d.err.Error(), ReasonPanicked)
	case d.verdict == rejected:
		return deadLetter(d.err.Error(), ReasonRejected)
	case d.verdict == retried && IsFatal(d.err):
		return deadLetter(d.err.Error(), ReasonFatal)
	case d.verdict != retried:
		return deadLetter("the handler returned no decision", ReasonNoDecision)
	}
	r := policy.Decide(in.Attempt, in.Age)
	switch r.Outcome {
	case GiveUpExhausted:
		return deadLetter(r.Reason()+": "+d.err.Error(), ReasonExhausted)
	case GiveUpTooOld:
		return deadLetter(r.Reason()+": "+d.err.Error(), ReasonTooOld)
	}
	next := r.Attempt + 1
	if rung, ok := ladder.RungFor(r.Delay); ok && !in.RungUnavailable {
		return settlement{Outcome: RetriedOnRung, Target: rung.Queue, Attempt: next, Class: ReasonRetry, Delay: r.Delay}
	}
	wait := policy.Jittered(r.Delay, random)
	return settlement{Outcome: RetriedInConsumer, Target: in.Source, Attempt: next, Class: ReasonRetry, Wait: wait, Delay: wait}
}

// headerDeliveryCount is where a quorum queue says how often it delivered
// the message before: of the delivery, not of the message.
const headerDeliveryCount = "x-delivery-count"

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
	delete(m.Headers, headerDeliveryCount)
	switch {
	case s.Reason != "":
		m.Headers[HeaderError] = s.Reason
	case s.Attempt > 0:
		m.Headers[HeaderAttempt] = int64(s.Attempt)
	}
	m.Persistent = true
	// A per-message expiration could drop it from Q.dlq unseen, and rungs
	// never use one (CONTRACT.md section 2).
	m.Expiration = ""
	return transport.Publishing{RoutingKey: s.Target, Mandatory: true, Message: m}
}
