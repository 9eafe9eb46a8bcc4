// Package retry is the retry policy's arithmetic and the retry ladder
// (CONTRACT.md sections 3 and 4), pure and without a broker: what a failure
// at some attempt gets, and which rungs a source queue needs. The acemq
// package's RetryPolicy is a Policy; its consumers and topologies, and the
// CLI's ladder verb, all decide here.
package retry

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/acemq-go/acemq/contract"
)

// Policy is what deciding needs of a retry policy: acemq.RetryPolicy.
type Policy interface {
	MaxAttempts() int
	MaxMessageAge() time.Duration
	BrokerWaitThreshold() time.Duration
	JitterFactor() float64
	// MaxDelay caps every wait; 0 means uncapped.
	MaxDelay() time.Duration
	// Schedule is the maxAttempts-1 waits, without jitter.
	Schedule() []time.Duration
	// ScheduledWait is Schedule()[i], without making the schedule; ok is
	// false past its end.
	ScheduledWait(i int) (d time.Duration, ok bool)
	Validate() error
	String() string
}

// Outcome is what the policy decides for a failed delivery.
type Outcome uint8

const (
	// InConsumer holds the delivery, waits, and republishes it.
	InConsumer Outcome = iota + 1
	// OnRung republishes it to a rung, whose TTL is the wait.
	OnRung
	// Exhausted: the failed attempt was the last one.
	Exhausted
	// TooOld: the message is older than the policy's maximum age.
	TooOld
)

// Settled is how a delivery ends under this outcome, in the one vocabulary
// of contract.Outcome: retried in the consumer, on a rung, or dead-lettered.
func (o Outcome) Settled() contract.Outcome {
	switch o {
	case InConsumer:
		return contract.RetriedInConsumer
	case OnRung:
		return contract.RetriedOnRung
	}
	return contract.DeadLettered
}

// Class is the reason class of a delivery settled under this outcome.
func (o Outcome) Class() contract.ReasonClass {
	switch o {
	case Exhausted:
		return contract.ReasonExhausted
	case TooOld:
		return contract.ReasonTooOld
	}
	return contract.ReasonRetry
}

// Decision is the policy's answer for one failure.
type Decision struct {
	Outcome Outcome
	// Attempt is the attempt that failed.
	Attempt int
	// Delay is the scheduled wait, without jitter; zero when giving up.
	Delay time.Duration
	// MaxAttempts is the policy's limit, for the Exhausted reason: what
	// the policy allowed, not the attempt the message claims.
	MaxAttempts int
	// MaxMessageAge is the policy's limit, for the TooOld reason.
	MaxMessageAge time.Duration
}

// GivesUp reports whether the message is not to be tried again.
func (d Decision) GivesUp() bool { return d.Outcome == Exhausted || d.Outcome == TooOld }

// Reason is the set-aside reason of a decision that gives up, to be followed
// by ": " and the handler's error; "" when the decision retries.
func (d Decision) Reason() string {
	switch d.Outcome {
	case Exhausted:
		return contract.ExhaustedReason(d.MaxAttempts)
	case TooOld:
		return contract.TooOldReason(d.MaxMessageAge)
	}
	return ""
}

// Decide answers a failure at attempt (1-based; below 1 counts as 1) of a
// message of the given age (negative, an unknown age, counts as young):
// give up because the attempts are used or the message is too old, or wait
// the scheduled time in the consumer or on a rung.
func Decide[P Policy](p P, attempt int, age time.Duration) Decision {
	attempt = max(attempt, 1)
	if attempt >= p.MaxAttempts() {
		return Decision{Outcome: Exhausted, Attempt: attempt, MaxAttempts: p.MaxAttempts()}
	}
	if maxAge := p.MaxMessageAge(); maxAge > 0 && age >= 0 && age >= maxAge {
		return Decision{Outcome: TooOld, Attempt: attempt, MaxMessageAge: maxAge}
	}
	// attempt < maxAttempts, so the schedule has this wait, unless the
	// policy fails Validate.
	d, ok := p.ScheduledWait(attempt - 1)
	if !ok { // its maxAttempts is past the library's limit: it gave up after attempt
		return Decision{Outcome: Exhausted, Attempt: attempt, MaxAttempts: attempt}
	}
	outcome := InConsumer
	if WaitsOnRung(p, d) {
		outcome = OnRung
	}
	return Decision{Outcome: outcome, Attempt: attempt, Delay: d}
}

// WaitsOnRung tells whether a wait of d goes to a rung rather than being
// held in the consumer: threshold > 0, d > 0 and d >= threshold.
func WaitsOnRung[P Policy](p P, d time.Duration) bool {
	threshold := p.BrokerWaitThreshold()
	return threshold > 0 && d > 0 && d >= threshold
}

// RungDelays are the schedule's waits on rungs in schedule order, one per
// rung name (the first wait to render to a name wins).
func RungDelays(p Policy) []time.Duration {
	var rungs []time.Duration
	seen := map[string]bool{}
	for _, d := range p.Schedule() {
		if name := contract.RenderDelay(d); WaitsOnRung(p, d) && !seen[name] {
			seen[name] = true
			rungs = append(rungs, d)
		}
	}
	return rungs
}

// Jittered spreads a consumer wait d to d*(1+u*f), u uniform in [-1, 1] and
// f the policy's jitter factor, never below contract.MinConsumerWait.
// random returns values in [0, 1), as math/rand/v2's Float64 does; nil uses
// that one.
func Jittered[P Policy](p P, d time.Duration, random func() float64) time.Duration {
	return spread(p, d, func() float64 { return 2*orRand(random)() - 1 })
}

// Chosen is the wait a handler chose (acemq.RetryAfter), bounded by the
// longest wait p allows: its maximum delay when it has one, else the longest
// wait of its schedule (a Fixed policy's delay). A ladder's wait is bounded
// again by RungFor: never past the longest rung.
func Chosen[P Policy](p P, d time.Duration) time.Duration {
	longest := p.MaxDelay()
	if longest <= 0 {
		for _, w := range p.Schedule() {
			longest = max(longest, w)
		}
	}
	return min(d, longest)
}

// JitteredUp spreads a consumer wait the handler chose, d, to d*(1+u*f), u
// uniform in [0, 1] and f the policy's jitter factor: only upwards, since
// the wait is the earliest time the handler's dependency named (a
// Retry-After), and never below contract.MinConsumerWait. random is as
// Jittered's.
func JitteredUp[P Policy](p P, d time.Duration, random func() float64) time.Duration {
	return spread(p, d, orRand(random))
}

// spread is d*(1+u*f), drawing u only when p has a jitter factor f, never
// below contract.MinConsumerWait.
func spread[P Policy](p P, d time.Duration, u func() float64) time.Duration {
	if f := p.JitterFactor(); f > 0 {
		d = Saturate(float64(d) * (1 + u()*f))
	}
	return max(d, contract.MinConsumerWait)
}

func orRand(random func() float64) func() float64 {
	if random == nil {
		return rand.Float64
	}
	return random
}

// JitterRange bounds a consumer wait of d under p's jitter: Jittered at
// both ends of its draw (u = -1 and u = 1).
func JitterRange(p Policy, d time.Duration) (shortest, longest time.Duration) {
	return Jittered(p, d, func() float64 { return 0 }), Jittered(p, d, func() float64 { return 1 })
}

// Saturate converts nanoseconds to a Duration, the longest one past the end.
func Saturate(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
