package acemq

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// DefaultBrokerWaitThreshold is the shortest wait that goes to the broker
// (a rung) instead of being held in the consumer.
const DefaultBrokerWaitThreshold = 30 * time.Second

// MaxAttemptsLimit bounds a policy's attempts so that its schedule stays a
// list a person can read. It is this library's limit, not the contract's.
const MaxAttemptsLimit = 10_000

// MaxBrokerWait is the longest wait a rung can hold: RabbitMQ refuses to
// declare a queue whose x-message-ttl is above ten years (315360000000 ms)
// with PRECONDITION_FAILED, value_too_large.
const MaxBrokerWait = 315_360_000_000 * time.Millisecond

// MinConsumerWait is the floor of a jittered wait in the consumer.
const MinConsumerWait = time.Millisecond

// ErrInvalidPolicy is matched (errors.Is) by every error of Validate and
// ParsePolicy.
var ErrInvalidPolicy = errors.New("invalid retry policy")

type policyKind uint8

const (
	kindUnset policyKind = iota
	kindNone
	kindFixed
	kindExponential
)

// RetryPolicy says how often a failed message is tried again and how long
// each wait is (CONTRACT.md section 3). Build one with NoRetry, Fixed,
// Exponential or ParsePolicy and adjust it with GiveUpAfter, WithJitter and
// WaitInBrokerFrom; a RetryPolicy is a value and never changes. The zero
// value is not a policy: Validate says so.
type RetryPolicy struct {
	kind         policyKind
	maxAttempts  int
	initialDelay time.Duration
	multiplier   float64
	maxDelay     time.Duration
	jitter       float64
	maxAge       time.Duration
	threshold    time.Duration
}

// NoRetry gives up on the first failure: one attempt, an empty schedule.
// It is what a consumer given no policy uses.
func NoRetry() RetryPolicy {
	return RetryPolicy{kind: kindNone, maxAttempts: 1, multiplier: 1, threshold: DefaultBrokerWaitThreshold}
}

// Fixed tries a message attempts times in all, waiting delay between tries,
// without jitter.
func Fixed(attempts int, delay time.Duration) RetryPolicy {
	return RetryPolicy{kind: kindFixed, maxAttempts: attempts, initialDelay: delay, multiplier: 1,
		threshold: DefaultBrokerWaitThreshold}
}

// Exponential tries a message attempts times in all; the waits start at
// initial and double, each capped at max (0: uncapped), with jitter 0.2.
func Exponential(attempts int, initial, max time.Duration) RetryPolicy {
	return RetryPolicy{kind: kindExponential, maxAttempts: attempts, initialDelay: initial, multiplier: 2,
		maxDelay: max, jitter: 0.2, threshold: DefaultBrokerWaitThreshold}
}

// GiveUpAfter gives up on a message whose first delivery was at least age
// ago, whatever attempts are left. Zero means no limit.
func (p RetryPolicy) GiveUpAfter(age time.Duration) RetryPolicy {
	p.maxAge = age
	return p
}

// WithJitter spreads consumer waits by up to ±f of their length (0 to 1).
// Broker waits are never jittered: each one names a queue.
func (p RetryPolicy) WithJitter(f float64) RetryPolicy {
	p.jitter = f
	return p
}

// WaitInBrokerFrom sends every wait of at least threshold to the broker.
// Zero keeps every wait in the consumer, and no rung is declared.
func (p RetryPolicy) WaitInBrokerFrom(threshold time.Duration) RetryPolicy {
	p.threshold = threshold
	return p
}

// MaxAttempts counts every delivery, the first one included.
func (p RetryPolicy) MaxAttempts() int { return p.maxAttempts }

// InitialDelay is the first wait.
func (p RetryPolicy) InitialDelay() time.Duration { return p.initialDelay }

// Multiplier grows each wait from the one before: 1 for Fixed, 2 for Exponential.
func (p RetryPolicy) Multiplier() float64 { return p.multiplier }

// MaxDelay caps every wait; 0 means uncapped.
func (p RetryPolicy) MaxDelay() time.Duration { return p.maxDelay }

// JitterFactor is the spread of consumer waits, from 0 to 1.
func (p RetryPolicy) JitterFactor() float64 { return p.jitter }

// MaxMessageAge is the age past which a message is given up; 0 means no limit.
func (p RetryPolicy) MaxMessageAge() time.Duration { return p.maxAge }

// BrokerWaitThreshold is the shortest wait that goes to the broker; 0 means none does.
func (p RetryPolicy) BrokerWaitThreshold() time.Duration { return p.threshold }

// Validate reports every value of p that is out of range, with what is allowed.
func (p RetryPolicy) Validate() error {
	if p.kind == kindUnset {
		return fmt.Errorf("%w: the policy is empty; build one with NoRetry, Fixed, Exponential or ParsePolicy", ErrInvalidPolicy)
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if p.maxAttempts < 1 || p.maxAttempts > MaxAttemptsLimit {
		add("maxAttempts is %d but must be from 1 to %d (it counts the first delivery)", p.maxAttempts, MaxAttemptsLimit)
	}
	if p.initialDelay < 0 {
		add("the initial delay is %s but must be at least 0", FormatDuration(p.initialDelay))
	}
	if !(p.multiplier >= 1) || math.IsInf(p.multiplier, 0) {
		add("the multiplier is %v but must be a finite number of at least 1", p.multiplier)
	}
	if p.maxDelay < 0 || (p.maxDelay > 0 && p.maxDelay < p.initialDelay) {
		add("the maximum delay is %s but must be 0 (uncapped) or at least the initial delay %s",
			FormatDuration(p.maxDelay), FormatDuration(p.initialDelay))
	}
	if !(p.jitter >= 0 && p.jitter <= 1) {
		add("the jitter factor is %v but must be from 0 to 1", p.jitter)
	}
	if p.maxAge < 0 {
		add("giveUpAfter is %s but must be at least 0 (0 means no age limit)", FormatDuration(p.maxAge))
	}
	if p.threshold < 0 {
		add("waitInBrokerFrom is %s but must be at least 0 (0 keeps every wait in the consumer)", FormatDuration(p.threshold))
	}
	if len(problems) == 0 {
		for _, d := range p.BrokerRungs() {
			if d > MaxBrokerWait {
				add("the broker wait %s is longer than RabbitMQ allows for x-message-ttl (%dms), so cap the delay at %s or less",
					FormatDuration(d), MaxBrokerWait.Milliseconds(), FormatDuration(MaxBrokerWait.Truncate(time.Hour)))
				break
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w %s: %s", ErrInvalidPolicy, p, strings.Join(problems, "; "))
	}
	return nil
}

// Warnings names what is allowed but will not agree with the other AceMQ
// libraries: broker waits that are not whole seconds (Java and .NET name
// their rungs in milliseconds) and waits whose rungs share one name.
func (p RetryPolicy) Warnings() []string {
	var warnings []string
	first := map[string]time.Duration{}
	for _, d := range p.Schedule() {
		if !p.WaitsInBroker(d) {
			continue
		}
		name := RenderDelay(d)
		if prev, seen := first[name]; seen {
			if prev != d {
				warnings = append(warnings, fmt.Sprintf("the broker waits %s and %s share the rung name %q; the first one's rung serves both",
					FormatDuration(prev), FormatDuration(d), name))
			}
			continue
		}
		first[name] = d
		if d%time.Second != 0 {
			warnings = append(warnings, fmt.Sprintf("the broker wait %s is not a whole number of seconds: its rung is named %q here, in Python and in Ruby, but %q in Java and .NET",
				FormatDuration(d), name, strconv.FormatInt(d.Milliseconds(), 10)+"ms"))
		}
	}
	return warnings
}

// Schedule is the maxAttempts-1 waits before each retry, without jitter.
func (p RetryPolicy) Schedule() []time.Duration {
	if p.maxAttempts <= 1 || p.maxAttempts > MaxAttemptsLimit {
		return nil
	}
	waits := make([]time.Duration, p.maxAttempts-1)
	d := float64(p.initialDelay)
	for i := range waits {
		if p.maxDelay > 0 && d > float64(p.maxDelay) {
			d = float64(p.maxDelay)
		}
		waits[i] = saturate(d)
		d *= p.multiplier
	}
	return waits
}

// saturate converts nanoseconds to a Duration, the longest one past the end.
func saturate(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// WaitsInBroker tells whether a wait of d goes to a rung rather than being
// held in the consumer: threshold > 0, d > 0 and d >= threshold.
func (p RetryPolicy) WaitsInBroker(d time.Duration) bool {
	return p.threshold > 0 && d > 0 && d >= p.threshold
}

// BrokerRungs is the schedule's broker waits in schedule order, one per rung
// name (the first wait to render to a name wins).
func (p RetryPolicy) BrokerRungs() []time.Duration {
	var rungs []time.Duration
	seen := map[string]bool{}
	for _, d := range p.Schedule() {
		if name := RenderDelay(d); p.WaitsInBroker(d) && !seen[name] {
			seen[name] = true
			rungs = append(rungs, d)
		}
	}
	return rungs
}

// RetryOutcome is what the policy decides for a failed delivery.
type RetryOutcome uint8

const (
	// RetryInConsumer holds the delivery, waits, and republishes it.
	RetryInConsumer RetryOutcome = iota + 1
	// RetryInBroker republishes it to a rung, whose TTL is the wait.
	RetryInBroker
	// GiveUpExhausted: the failed attempt was the last one.
	GiveUpExhausted
	// GiveUpTooOld: the message is older than the policy's maximum age.
	GiveUpTooOld
)

func (o RetryOutcome) String() string {
	switch o {
	case RetryInConsumer:
		return "retry in consumer"
	case RetryInBroker:
		return "retry in broker"
	case GiveUpExhausted:
		return "give up: exhausted"
	case GiveUpTooOld:
		return "give up: too old"
	}
	return "RetryOutcome(" + strconv.Itoa(int(o)) + ")"
}

// RetryDecision is the policy's answer for one failure.
type RetryDecision struct {
	Outcome RetryOutcome
	// Attempt is the attempt that failed.
	Attempt int
	// Delay is the scheduled wait, without jitter; zero when giving up.
	Delay time.Duration
	// MaxAttempts is the policy's limit, for the GiveUpExhausted reason:
	// what the policy allowed, not the attempt the message claims.
	MaxAttempts int
	// MaxMessageAge is the policy's limit, for the GiveUpTooOld reason.
	MaxMessageAge time.Duration
}

// GivesUp reports whether the message is not to be tried again.
func (d RetryDecision) GivesUp() bool {
	return d.Outcome == GiveUpExhausted || d.Outcome == GiveUpTooOld
}

// Reason is the set-aside reason of a decision that gives up, to be followed
// by ": " and the handler's error; "" when the decision retries.
func (d RetryDecision) Reason() string {
	switch d.Outcome {
	case GiveUpExhausted:
		return fmt.Sprintf("exhausted %d attempts", d.MaxAttempts)
	case GiveUpTooOld:
		return "exceeded the maximum message age of " + FormatDuration(d.MaxMessageAge)
	}
	return ""
}

// Decide answers a failure at attempt (1-based; below 1 counts as 1) of a
// message of the given age (negative, such as UnknownAge, counts as young): give up because the attempts are used or the
// message is too old, or wait the scheduled time in the consumer or in the
// broker.
func (p RetryPolicy) Decide(attempt int, age time.Duration) RetryDecision {
	attempt = max(attempt, 1)
	if attempt >= p.maxAttempts {
		return RetryDecision{Outcome: GiveUpExhausted, Attempt: attempt, MaxAttempts: p.maxAttempts}
	}
	if p.maxAge > 0 && age >= 0 && age >= p.maxAge {
		return RetryDecision{Outcome: GiveUpTooOld, Attempt: attempt, MaxMessageAge: p.maxAge}
	}
	schedule := p.Schedule()
	if len(schedule) == 0 { // only a policy that fails Validate gets here
		// Its maxAttempts is past MaxAttemptsLimit: it gave up after attempt.
		return RetryDecision{Outcome: GiveUpExhausted, Attempt: attempt, MaxAttempts: attempt}
	}
	d := schedule[min(attempt-1, len(schedule)-1)]
	outcome := RetryInConsumer
	if p.WaitsInBroker(d) {
		outcome = RetryInBroker
	}
	return RetryDecision{Outcome: outcome, Attempt: attempt, Delay: d}
}

// Jittered spreads a consumer wait d to d*(1+u*f), u uniform in [-1, 1] and f
// the jitter factor, never below MinConsumerWait. random returns values in
// [0, 1), as math/rand/v2's Float64 does; nil uses that one.
func (p RetryPolicy) Jittered(d time.Duration, random func() float64) time.Duration {
	if random == nil {
		random = rand.Float64
	}
	if p.jitter > 0 {
		u := 2*random() - 1
		d = saturate(float64(d) * (1 + u*p.jitter))
	}
	return max(d, MinConsumerWait)
}

// String writes p in the notation ParsePolicy reads, with only the modifiers
// whose values differ from the factory's defaults.
func (p RetryPolicy) String() string {
	var b strings.Builder
	defaultJitter := 0.0
	switch p.kind {
	case kindNone:
		b.WriteString("none()")
	case kindFixed:
		fmt.Fprintf(&b, "fixed(%d, %s)", p.maxAttempts, FormatDuration(p.initialDelay))
	case kindExponential:
		fmt.Fprintf(&b, "exponential(%d, %s, %s)", p.maxAttempts, FormatDuration(p.initialDelay), FormatDuration(p.maxDelay))
		defaultJitter = 0.2
	default:
		return "<empty retry policy>"
	}
	if p.maxAge != 0 {
		fmt.Fprintf(&b, ".giveUpAfter(%s)", FormatDuration(p.maxAge))
	}
	if p.jitter != defaultJitter {
		fmt.Fprintf(&b, ".withJitter(%s)", strconv.FormatFloat(p.jitter, 'g', -1, 64))
	}
	if p.threshold != DefaultBrokerWaitThreshold {
		fmt.Fprintf(&b, ".waitInBrokerFrom(%s)", FormatDuration(p.threshold))
	}
	return b.String()
}

// FormatDuration writes d as the policy notation does: Go's syntax without
// zero units (1m, 24h, 1h30m, 1.5s, 500ms), which time.ParseDuration reads
// back exactly.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
