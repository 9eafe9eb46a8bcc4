package acemq

import (
	"errors"
	"fmt"
	"math"

	"strconv"
	"strings"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
)

// maxAttemptsLimit bounds a policy's attempts so that its schedule stays a
// list a person can read. It is this library's limit, not the contract's.
const maxAttemptsLimit = 10_000

// maxBrokerWait is the longest wait a rung can hold: RabbitMQ refuses to
// declare a queue whose x-message-ttl is above ten years (315360000000 ms)
// with PRECONDITION_FAILED, value_too_large.
const maxBrokerWait = 315_360_000_000 * time.Millisecond

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
	return RetryPolicy{kind: kindNone, maxAttempts: 1, multiplier: 1, threshold: contract.DefaultBrokerWaitThreshold}
}

// Fixed tries a message attempts times in all, waiting delay between tries,
// without jitter.
func Fixed(attempts int, delay time.Duration) RetryPolicy {
	return RetryPolicy{kind: kindFixed, maxAttempts: attempts, initialDelay: delay, multiplier: 1,
		threshold: contract.DefaultBrokerWaitThreshold}
}

// Exponential tries a message attempts times in all; the waits start at
// initial and double, each capped at max (0: uncapped), with jitter 0.2.
func Exponential(attempts int, initial, max time.Duration) RetryPolicy {
	return RetryPolicy{kind: kindExponential, maxAttempts: attempts, initialDelay: initial, multiplier: contract.ExponentialMultiplier,
		maxDelay: max, jitter: contract.ExponentialJitter, threshold: contract.DefaultBrokerWaitThreshold}
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
	if p.maxAttempts < 1 || p.maxAttempts > maxAttemptsLimit {
		add("maxAttempts is %d but must be from 1 to %d (it counts the first delivery)", p.maxAttempts, maxAttemptsLimit)
	}
	if p.initialDelay < 0 {
		add("the initial delay is %s but must be at least 0", contract.FormatDuration(p.initialDelay))
	}
	if !(p.multiplier >= 1) || math.IsInf(p.multiplier, 0) {
		add("the multiplier is %v but must be a finite number of at least 1", p.multiplier)
	}
	if p.maxDelay < 0 || (p.maxDelay > 0 && p.maxDelay < p.initialDelay) {
		add("the maximum delay is %s but must be 0 (uncapped) or at least the initial delay %s",
			contract.FormatDuration(p.maxDelay), contract.FormatDuration(p.initialDelay))
	}
	if !(p.jitter >= 0 && p.jitter <= 1) {
		add("the jitter factor is %v but must be from 0 to 1", p.jitter)
	}
	if p.maxAge < 0 {
		add("giveUpAfter is %s but must be at least 0 (0 means no age limit)", contract.FormatDuration(p.maxAge))
	}
	if p.threshold < 0 {
		add("waitInBrokerFrom is %s but must be at least 0 (0 keeps every wait in the consumer)", contract.FormatDuration(p.threshold))
	}
	if len(problems) == 0 {
		for _, d := range retry.RungDelays(p) {
			if d > maxBrokerWait {
				add("the broker wait %s is longer than RabbitMQ allows for x-message-ttl (%dms), so cap the delay at %s or less",
					contract.FormatDuration(d), maxBrokerWait.Milliseconds(), contract.FormatDuration(maxBrokerWait.Truncate(time.Hour)))
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
		if !retry.WaitsOnRung(p, d) {
			continue
		}
		name := contract.RenderDelay(d)
		if prev, seen := first[name]; seen {
			if prev != d {
				warnings = append(warnings, fmt.Sprintf("the broker waits %s and %s share the rung name %q; the first one's rung serves both",
					contract.FormatDuration(prev), contract.FormatDuration(d), name))
			}
			continue
		}
		first[name] = d
		if d%time.Second != 0 {
			warnings = append(warnings, fmt.Sprintf("the broker wait %s is not a whole number of seconds: its rung is named %q here, in Python and in Ruby, but %q in Java and .NET",
				contract.FormatDuration(d), name, strconv.FormatInt(d.Milliseconds(), 10)+"ms"))
		}
	}
	return warnings
}

// Schedule is the maxAttempts-1 waits before each retry, without jitter.
func (p RetryPolicy) Schedule() []time.Duration {
	if p.maxAttempts <= 1 || p.maxAttempts > maxAttemptsLimit {
		return nil
	}
	waits := make([]time.Duration, 0, p.maxAttempts-1)
	for d := range p.waits {
		waits = append(waits, d)
	}
	return waits
}

// ScheduledWait is Schedule()[i], without making the schedule: a retry
// needs one wait of it. ok is false past its end.
func (p RetryPolicy) ScheduledWait(i int) (d time.Duration, ok bool) {
	if i < 0 || p.maxAttempts > maxAttemptsLimit {
		return 0, false
	}
	for w := range p.waits {
		if i == 0 {
			return w, true
		}
		i--
	}
	return 0, false
}

// waits yields the schedule's waits in order: the initial delay, times the
// multiplier at each step, each capped at the maximum delay.
func (p RetryPolicy) waits(yield func(time.Duration) bool) {
	d := float64(p.initialDelay)
	for range p.maxAttempts - 1 {
		if p.maxDelay > 0 && d > float64(p.maxDelay) {
			d = float64(p.maxDelay)
		}
		if !yield(retry.Saturate(d)) {
			return
		}
		d *= p.multiplier
	}
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
		fmt.Fprintf(&b, "fixed(%d, %s)", p.maxAttempts, contract.FormatDuration(p.initialDelay))
	case kindExponential:
		fmt.Fprintf(&b, "exponential(%d, %s, %s)", p.maxAttempts, contract.FormatDuration(p.initialDelay), contract.FormatDuration(p.maxDelay))
		defaultJitter = contract.ExponentialJitter
	default:
		return "<empty retry policy>"
	}
	if p.maxAge != 0 {
		fmt.Fprintf(&b, ".giveUpAfter(%s)", contract.FormatDuration(p.maxAge))
	}
	if p.jitter != defaultJitter {
		fmt.Fprintf(&b, ".withJitter(%s)", strconv.FormatFloat(p.jitter, 'g', -1, 64))
	}
	if p.threshold != contract.DefaultBrokerWaitThreshold {
		fmt.Fprintf(&b, ".waitInBrokerFrom(%s)", contract.FormatDuration(p.threshold))
	}
	return b.String()
}
