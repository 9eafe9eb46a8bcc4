package acemq

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
)

const (
	ms     = time.Millisecond
	sec    = time.Second
	minute = time.Minute
	hr     = time.Hour
)

// The factories of CONTRACT.md section 3 and their defaults.
func TestFactories(t *testing.T) {
	tests := []struct {
		name               string
		p                  RetryPolicy
		attempts           int
		initial, max       time.Duration
		multiplier, jitter float64
		maxAge, threshold  time.Duration
	}{
		{"none", NoRetry(), 1, 0, 0, 1, 0, 0, 30 * sec},
		{"fixed", Fixed(4, 30*sec), 4, 30 * sec, 0, 1, 0, 0, 30 * sec},
		{"exponential", Exponential(5, sec, 24*hr), 5, sec, 24 * hr, 2, 0.2, 0, 30 * sec},
		{"modified", Exponential(5, sec, 24*hr).GiveUpAfter(2 * minute).WithJitter(0.1).WaitInBrokerFrom(minute),
			5, sec, 24 * hr, 2, 0.1, 2 * minute, minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p
			got := []any{p.MaxAttempts(), p.InitialDelay(), p.MaxDelay(), p.Multiplier(), p.JitterFactor(), p.MaxMessageAge(), p.BrokerWaitThreshold()}
			want := []any{tt.attempts, tt.initial, tt.max, tt.multiplier, tt.jitter, tt.maxAge, tt.threshold}
			if !slices.Equal(got, want) {
				t.Errorf("fields = %v, want %v", got, want)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
	if contract.DefaultBrokerWaitThreshold != 30*sec {
		t.Errorf("DefaultBrokerWaitThreshold = %v, want 30s", contract.DefaultBrokerWaitThreshold)
	}
}

func TestModifiersLeaveTheOriginalAlone(t *testing.T) {
	p := Fixed(3, sec)
	_ = p.GiveUpAfter(minute).WithJitter(0.5).WaitInBrokerFrom(0)
	if p.MaxMessageAge() != 0 || p.JitterFactor() != 0 || p.BrokerWaitThreshold() != 30*sec {
		t.Errorf("a modifier changed the policy it was called on: %v", p)
	}
}

func TestSchedule(t *testing.T) {
	tests := []struct {
		p    RetryPolicy
		want []time.Duration
	}{
		{Exponential(6, 10*sec, minute), []time.Duration{10 * sec, 20 * sec, 40 * sec, 60 * sec, 60 * sec}},
		{Fixed(4, 30*sec), []time.Duration{30 * sec, 30 * sec, 30 * sec}},
		{NoRetry(), nil},
		{Fixed(1, minute), nil},
		{Exponential(6, 10*sec, 5*minute), []time.Duration{10 * sec, 20 * sec, 40 * sec, 80 * sec, 160 * sec}},
		{Exponential(4, sec, 0), []time.Duration{sec, 2 * sec, 4 * sec}},  // 0: uncapped
		{Exponential(3, 5*sec, 5*sec), []time.Duration{5 * sec, 5 * sec}}, // capped from the start
		{Exponential(5, 0, 0), []time.Duration{0, 0, 0, 0}},               // zero waits stay zero
		{Exponential(4, 700*ms, 2*sec), []time.Duration{700 * ms, 1400 * ms, 2 * sec}},
	}
	for _, tt := range tests {
		if got := tt.p.Schedule(); !slices.Equal(got, tt.want) {
			t.Errorf("%v.Schedule() = %v, want %v", tt.p, got, tt.want)
		}
	}
}

func TestScheduleSaturatesInsteadOfOverflowing(t *testing.T) {
	s := Exponential(100, sec, 0).Schedule()
	for i := 1; i < len(s); i++ {
		if s[i] < s[i-1] {
			t.Fatalf("wait %d (%v) is shorter than wait %d (%v): overflow", i, s[i], i-1, s[i-1])
		}
	}
	if s[len(s)-1] != math.MaxInt64 {
		t.Errorf("last wait = %v, want the longest Duration", s[len(s)-1])
	}
}

// waitsInBroker(d) is threshold > 0 && d > 0 && d >= threshold.
func TestWaitsInBroker(t *testing.T) {
	tests := []struct {
		threshold, d time.Duration
		want         bool
	}{
		{30 * sec, 29*sec + 999*ms, false},
		{30 * sec, 30 * sec, true},
		{30 * sec, 5 * minute, true},
		{30 * sec, 0, false},
		{0, 5 * minute, false}, // zero threshold: nothing waits in the broker
		{0, 0, false},
		{sec, sec, true},
		{sec, -sec, false},
	}
	for _, tt := range tests {
		p := Fixed(2, tt.d).WaitInBrokerFrom(tt.threshold)
		if got := retry.WaitsOnRung(p, tt.d); got != tt.want {
			t.Errorf("threshold %v: WaitsInBroker(%v) = %v, want %v", tt.threshold, tt.d, got, tt.want)
		}
	}
}

func TestBrokerRungs(t *testing.T) {
	tests := []struct {
		p    RetryPolicy
		want []time.Duration
	}{
		{Exponential(6, 10*sec, 5*minute), []time.Duration{40 * sec, 80 * sec, 160 * sec}},
		{Exponential(6, 10*sec, minute), []time.Duration{40 * sec, minute}}, // 60s twice: one rung
		{Fixed(4, 30*sec), []time.Duration{30 * sec}},
		{Fixed(4, 30*sec).WaitInBrokerFrom(0), nil},
		{Fixed(4, 29*sec), nil},
		{NoRetry(), nil},
		{Exponential(4, 500*ms, 0).WaitInBrokerFrom(ms), []time.Duration{500 * ms, sec, 2 * sec}},
		// 1.5s and 1.9s both render to 1s: the first one wins
		{Exponential(3, 1500*ms, 1900*ms).WaitInBrokerFrom(sec), []time.Duration{1500 * ms}},
	}
	for _, tt := range tests {
		if got := retry.RungDelays(tt.p); !slices.Equal(got, tt.want) {
			t.Errorf("%v.BrokerRungs() = %v, want %v", tt.p, got, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		p    RetryPolicy
		want []string // each must appear in the error; none means valid
	}{
		{"zero value", RetryPolicy{}, []string{"the policy is empty", "NoRetry, Fixed, Exponential or ParsePolicy"}},
		{"no attempts", Fixed(0, sec), []string{"maxAttempts is 0 but must be from 1 to 10000"}},
		{"too many attempts", Fixed(10_001, sec), []string{"maxAttempts is 10001"}},
		{"negative delay", Fixed(3, -sec), []string{"the initial delay is -1s but must be at least 0"}},
		{"cap below initial", Exponential(3, minute, sec), []string{"the maximum delay is 1s but must be 0 (uncapped) or at least the initial delay 1m"}},
		{"negative cap", Exponential(3, sec, -sec), []string{"the maximum delay is -1s"}},
		{"jitter above 1", Fixed(3, sec).WithJitter(1.5), []string{"the jitter factor is 1.5 but must be from 0 to 1"}},
		{"negative jitter", Fixed(3, sec).WithJitter(-0.1), []string{"the jitter factor is -0.1"}},
		{"NaN jitter", Fixed(3, sec).WithJitter(math.NaN()), []string{"the jitter factor is NaN"}},
		{"negative age", Fixed(3, sec).GiveUpAfter(-minute), []string{"giveUpAfter is -1m but must be at least 0"}},
		{"negative threshold", Fixed(3, sec).WaitInBrokerFrom(-sec), []string{"waitInBrokerFrom is -1s but must be at least 0"}},
		{"broker wait beyond x-message-ttl", Fixed(2, maxBrokerWait+ms), []string{"the broker wait 87600h0m0.001s is longer than RabbitMQ allows for x-message-ttl (315360000000ms), so cap the delay at 87600h or less"}},
		{"every problem at once", Exponential(0, -sec, -2*sec).WithJitter(2).GiveUpAfter(-sec).WaitInBrokerFrom(-sec),
			[]string{"maxAttempts is 0", "initial delay is -1s", "maximum delay is -2s", "jitter factor is 2", "giveUpAfter is -1s", "waitInBrokerFrom is -1s"}},
		{"limits are allowed", Fixed(10_000, 0).WithJitter(1).GiveUpAfter(0).WaitInBrokerFrom(0), nil},
		{"the longest rung", Fixed(2, maxBrokerWait), nil},
		{"long consumer waits are the consumer's business", Fixed(2, maxBrokerWait+ms).WaitInBrokerFrom(0), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("Validate = %v, want an ErrInvalidPolicy", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %q, want it to say %q", err, w)
				}
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		p    RetryPolicy
		want []string
	}{
		{Exponential(6, 10*sec, 5*minute), nil},
		{Fixed(3, 1500*ms).WaitInBrokerFrom(sec), []string{
			`the broker wait 1.5s is not a whole number of seconds: its rung is named "1s" here, in Python and in Ruby, but "1500ms" in Java and .NET`}},
		{Exponential(4, 500*ms, 0).WithJitter(0).WaitInBrokerFrom(ms), []string{
			`the broker wait 500ms is not a whole number of seconds: its rung is named "0s" here, in Python and in Ruby, but "500ms" in Java and .NET`,
		}},
		{Exponential(4, 1500*ms, 0).WaitInBrokerFrom(ms), []string{
			`the broker wait 1.5s is not a whole number of seconds: its rung is named "1s" here, in Python and in Ruby, but "1500ms" in Java and .NET`,
		}},
		// consumer waits do not name queues, so fractions do not matter
		{Fixed(3, 1500*ms), nil},
	}
	for _, tt := range tests {
		if got := tt.p.Warnings(); !slices.Equal(got, tt.want) {
			t.Errorf("%v.Warnings() =\n%q\nwant\n%q", tt.p, got, tt.want)
		}
	}
	// 1.5s and 1.9s both render to 1s.
	got := Exponential(3, 1500*ms, 1900*ms).WaitInBrokerFrom(sec).Warnings()
	want := `the broker waits 1.5s and 1.9s share the rung name "1s"; the first one's rung serves both`
	if !slices.Contains(got, want) {
		t.Errorf("Warnings() = %q, want it to hold %q", got, want)
	}
}

// The decision of CONTRACT.md section 3 for a failure at attempt a and age g.
func TestDecide(t *testing.T) {
	p := Exponential(6, 10*sec, 5*minute).GiveUpAfter(10 * minute)
	tests := []struct {
		name    string
		p       RetryPolicy
		attempt int
		age     time.Duration
		want    retry.Decision
	}{
		{"first failure waits in the consumer", p, 1, 0, retry.Decision{Outcome: retry.InConsumer, Attempt: 1, Delay: 10 * sec}},
		{"second failure", p, 2, sec, retry.Decision{Outcome: retry.InConsumer, Attempt: 2, Delay: 20 * sec}},
		{"third failure waits in the broker", p, 3, sec, retry.Decision{Outcome: retry.OnRung, Attempt: 3, Delay: 40 * sec}},
		{"fifth failure", p, 5, sec, retry.Decision{Outcome: retry.OnRung, Attempt: 5, Delay: 160 * sec}},
		{"last attempt is exhausted", p, 6, sec, retry.Decision{Outcome: retry.Exhausted, Attempt: 6, MaxAttempts: 6}},
		{"beyond the last attempt", p, 99, sec, retry.Decision{Outcome: retry.Exhausted, Attempt: 99, MaxAttempts: 6}},
		{"exhausted wins over too old", p, 6, hr, retry.Decision{Outcome: retry.Exhausted, Attempt: 6, MaxAttempts: 6}},
		{"age just under the limit", p, 2, 10*minute - ms, retry.Decision{Outcome: retry.InConsumer, Attempt: 2, Delay: 20 * sec}},
		{"age at the limit", p, 2, 10 * minute, retry.Decision{Outcome: retry.TooOld, Attempt: 2, MaxMessageAge: 10 * minute}},
		{"age past the limit", p, 2, hr, retry.Decision{Outcome: retry.TooOld, Attempt: 2, MaxMessageAge: 10 * minute}},
		{"unknown age counts as young", p, 2, UnknownAge, retry.Decision{Outcome: retry.InConsumer, Attempt: 2, Delay: 20 * sec}},
		{"no age limit", Fixed(3, sec), 1, 1000 * hr, retry.Decision{Outcome: retry.InConsumer, Attempt: 1, Delay: sec}},
		{"attempt 0 counts as 1", p, 0, 0, retry.Decision{Outcome: retry.InConsumer, Attempt: 1, Delay: 10 * sec}},
		{"none gives up at once", NoRetry(), 1, 0, retry.Decision{Outcome: retry.Exhausted, Attempt: 1, MaxAttempts: 1}},
		{"zero threshold keeps long waits in the consumer", Fixed(3, hr).WaitInBrokerFrom(0), 1, 0,
			retry.Decision{Outcome: retry.InConsumer, Attempt: 1, Delay: hr}},
		{"threshold exactly reached", Fixed(3, 30*sec), 2, 0, retry.Decision{Outcome: retry.OnRung, Attempt: 2, Delay: 30 * sec}},
		{"zero wait stays in the consumer", Fixed(3, 0), 1, 0, retry.Decision{Outcome: retry.InConsumer, Attempt: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retry.Decide(tt.p, tt.attempt, tt.age); got != tt.want {
				t.Errorf("Decide(%d, %v) = %+v, want %+v", tt.attempt, tt.age, got, tt.want)
			}
		})
	}
}

func TestDecisionReason(t *testing.T) {
	tests := []struct {
		d       retry.Decision
		givesUp bool
		reason  string
	}{
		{retry.Decide(Fixed(5, sec), 5, 0), true, "exhausted 5 attempts"},
		{retry.Decide(NoRetry(), 1, 0), true, "exhausted 1 attempts"},
		// What the policy allowed, not the attempt the message's header claims.
		{retry.Decide(Fixed(3, sec), math.MaxInt64, 0), true, "exhausted 3 attempts"},
		{retry.Decide(Fixed(5, sec).GiveUpAfter(2*minute), 2, 3*minute), true, "exceeded the maximum message age of 2m"},
		{retry.Decide(Fixed(5, sec).GiveUpAfter(90*minute), 2, 3*hr), true, "exceeded the maximum message age of 1h30m"},
		{retry.Decide(Fixed(5, sec), 1, 0), false, ""},
		{retry.Decide(Fixed(5, minute), 1, 0), false, ""},
	}
	for _, tt := range tests {
		if tt.d.GivesUp() != tt.givesUp || tt.d.Reason() != tt.reason {
			t.Errorf("%+v: GivesUp %v, Reason %q; want %v, %q", tt.d, tt.d.GivesUp(), tt.d.Reason(), tt.givesUp, tt.reason)
		}
	}
}

// A consumer wait is d*(1+u*f), u uniform in [-1, 1], never below 1ms.
func TestJittered(t *testing.T) {
	constant := func(v float64) func() float64 { return func() float64 { return v } }
	tests := []struct {
		name   string
		p      RetryPolicy
		d      time.Duration
		random float64
		want   time.Duration
	}{
		{"lowest draw", Exponential(3, sec, 0), 10 * sec, 0, 8 * sec},
		{"middle draw", Exponential(3, sec, 0), 10 * sec, 0.5, 10 * sec},
		{"draw near the top", Exponential(3, sec, 0), 10 * sec, 0.75, 11 * sec},
		{"no jitter", Fixed(3, sec), 10 * sec, 0, 10 * sec},
		{"full jitter reaches zero, floored at 1ms", Fixed(3, sec).WithJitter(1), 10 * sec, 0, ms},
		{"zero wait floored at 1ms", Fixed(3, 0), 0, 0.5, ms},
		{"tiny wait floored at 1ms", Fixed(3, 0), 10 * time.Microsecond, 0.5, ms},
	}
	for _, tt := range tests {
		if got := retry.Jittered(tt.p, tt.d, constant(tt.random)); got != tt.want {
			t.Errorf("%s: Jittered(%v) with draw %v = %v, want %v", tt.name, tt.d, tt.random, got, tt.want)
		}
	}
}

// Over many draws of the real source the waits stay within d*(1±f).
func TestJitteredBounds(t *testing.T) {
	for _, f := range []float64{0, 0.1, 0.2, 0.5, 1} {
		p := Fixed(3, minute).WithJitter(f)
		d := 10 * sec
		lo := max(time.Duration(float64(d)*(1-f)), ms)
		hi := time.Duration(float64(d) * (1 + f))
		for range 10_000 {
			if got := retry.Jittered(p, d, nil); got < lo || got > hi {
				t.Fatalf("jitter %v: Jittered(%v) = %v, outside [%v, %v]", f, d, got, lo, hi)
			}
		}
	}
}
