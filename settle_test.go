package acemq

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// The settlement rules of CONTRACT.md section 7, without a broker.
func TestSettle(t *testing.T) {
	policy := Exponential(4, 10*sec, 5*minute).GiveUpAfter(hr) // waits 10s, 20s, 40s; rung 40s
	ladder := mustLadder(t, "orders", policy)
	boom := errors.New("boom")
	half := func() float64 { return 0.5 } // no jitter
	tests := []struct {
		name string
		in   delivered
		want settlement
	}{
		{"undecodable is parked", delivered{DecodeErr: errors.New("invalid character 'x'"), Decision: Accept(), Attempt: 1},
			settlement{Outcome: contract.Parked, Target: "orders.parked", Reason: "could not be decoded: invalid character 'x'", Class: contract.ReasonUndecodable}},
		{"a temporary decoding failure is retried", delivered{DecodeErr: Temporary(errors.New("the store is unreachable")), Attempt: 1, Age: UnknownAge},
			settlement{Outcome: contract.RetriedInConsumer, Target: "orders", Attempt: 2, Wait: 10 * sec, Delay: 10 * sec, Class: contract.ReasonRetry}},
		{"and dead-lettered when the policy gives up", delivered{DecodeErr: fmt.Errorf("claim: %w", Temporary(errors.New("the store is unreachable"))), Attempt: 4},
			settlement{Outcome: contract.DeadLettered, Target: "orders.dlq", Reason: "exhausted 4 attempts: could not be decoded: claim: the store is unreachable", Class: contract.ReasonExhausted}},
		{"accept acks", delivered{Decision: Accept(), Attempt: 3}, settlement{Outcome: contract.Accepted}},
		{"reject dead-letters", delivered{Decision: Reject(boom), Attempt: 1},
			settlement{Outcome: contract.DeadLettered, Target: "orders.dlq", Reason: "boom", Class: contract.ReasonRejected}},
		{"a panic dead-letters", delivered{Decision: Reject(boom), Panicked: true, Attempt: 1},
			settlement{Outcome: contract.DeadLettered, Target: "orders.dlq", Reason: "boom", Class: contract.ReasonPanicked}},
		{"a fatal retry dead-letters at once", delivered{Decision: Retry(Fatal(boom)), Attempt: 1},
			settlement{Outcome: contract.DeadLettered, Target: "orders.dlq", Reason: "boom", Class: contract.ReasonFatal}},
		{"a wrapped fatal error too", delivered{Decision: Retry(fmt.Errorf("charging: %w", Fatal(boom))), Attempt: 1},
			settlement{Outcome: contract.DeadLettered, Target: "orders.dlq", Reason: "charging: boom", Class: contract.ReasonFatal}},
		{"park parks", delivered{Decision: Park(boom), Attempt: 2},
			settlement{Outcome: contract.Parked, Target: "orders.parked", Reason: "boom", Class: contract.ReasonParked}},
		{"requeue puts it back unchanged after a pause", delivered{Decision: Requeue(boom), Attempt: 3, Age: minute},
			settlement{Outcome: contract.PutBack, Target: "orders", Reason: "boom", Class: contract.ReasonRequeue, Wait: contract.RequeueDelay, Delay: contract.RequeueDelay}},
		{"no decision dead-letters", delivered{Decision: Decision{}, Attempt: 1},
			settlement{Outcome: contract.DeadLettered, Target: "orders.dlq", Reason: "the handler returned no decision", Class: contract.ReasonNoDecision}},
		{"first retry waits in the consumer", delivered{Decision: Retry(boom), Attempt: 1, Age: UnknownAge},
			settlement{Outcome: contract.RetriedInConsumer, Target: "orders", Attempt: 2, Wait: 10 * sec, Delay: 10 * sec, Class: contract.ReasonRetry}},
		{"second retry waits in the consumer", delivered{Decision: Retry(boom), Attempt: 2, Age: minute},
			settlement{Outcome: contract.RetriedInConsumer, Target: "orders", Attempt: 3, Wait: 20 * sec, Delay: 20 * sec, Class: contract.ReasonRetry}},
		{"third retry goes to the rung", delivered{Decision: Retry(boom), Attempt: 3, Age: minute},
			settlement{Outcome: contract.RetriedOnRung, Target: "orders.retry.40s", Attempt: 4, Delay: 40 * sec, Class: contract.ReasonRetry}},
		{"a missing rung falls back to the consumer", delivered{Decision: Retry(boom), Attempt: 3, Age: minute, RungUnavailable: true},
			settlement{Outcome: contract.RetriedInConsumer, Target: "orders", Attempt: 4, Wait: 40 * sec, Delay: 40 * sec, Class: contract.ReasonRetry}},
		{"the last attempt is exhausted", delivered{Decision: Retry(boom), Attempt: 4, Age: minute},
			settlement{Outcome: contract.DeadLettered, Target: "orders.dlq", Reason: "exhausted 4 attempts: boom", Class: contract.ReasonExhausted}},
		{"too old", delivered{Decision: Retry(boom), Attempt: 1, Age: hr},
			settlement{Outcome: contract.DeadLettered, Target: "orders.dlq", Reason: "exceeded the maximum message age of 1h: boom", Class: contract.ReasonTooOld}},
		{"retry without an error", delivered{Decision: Retry(nil), Attempt: 4},
			settlement{Outcome: contract.DeadLettered, Target: "orders.dlq", Reason: "exhausted 4 attempts: retry requested", Class: contract.ReasonExhausted}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Source = "orders"
			if got := settle(tt.in, policy, ladder, half); got != tt.want {
				t.Errorf("settle = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSettleNoRetry(t *testing.T) {
	ladder := mustLadder(t, "q", NoRetry())
	got := settle(delivered{Source: "q", Decision: Retry(errors.New("x")), Attempt: 1}, NoRetry(), ladder, nil)
	want := settlement{Outcome: contract.DeadLettered, Target: "q.dlq", Reason: "exhausted 1 attempts: x", Class: contract.ReasonExhausted}
	if got != want {
		t.Errorf("settle = %+v, want %+v", got, want)
	}
}

func TestSettleJittersConsumerWaitsOnly(t *testing.T) {
	policy := Exponential(4, 10*sec, 5*minute) // jitter 0.2
	ladder := mustLadder(t, "q", policy)
	low := func() float64 { return 0 }
	got := settle(delivered{Source: "q", Decision: Retry(nil), Attempt: 1}, policy, ladder, low)
	if got.Wait != 8*sec {
		t.Errorf("consumer wait = %v, want 8s (10s less 20%%)", got.Wait)
	}
	got = settle(delivered{Source: "q", Decision: Retry(nil), Attempt: 3}, policy, ladder, low)
	if got.Wait != 0 || got.Target != "q.retry.40s" {
		t.Errorf("broker wait = %+v, want the 40s rung and no consumer wait", got)
	}
}

func TestRepublication(t *testing.T) {
	original := transport.Message{
		Headers:     transport.Table{contract.HeaderID: "m1", contract.HeaderAttempt: int64(2), contract.HeaderFirstSeen: int64(1770091506789), "tenant": "acme", "x-death": []any{"kept"}},
		ContentType: "application/json", MessageID: "m1", ReplyTo: "replies", CorrelationID: "c1",
		Expiration: "60000", Body: []byte(`{"n":1}`),
	}
	retry := republication(original, settlement{Outcome: contract.RetriedOnRung, Target: "q.retry.40s", Attempt: 3})
	if retry.Exchange != "" || retry.RoutingKey != "q.retry.40s" || !retry.Mandatory {
		t.Errorf("retry goes to %q/%q mandatory %v, want the default exchange, the rung, mandatory", retry.Exchange, retry.RoutingKey, retry.Mandatory)
	}
	m := retry.Message
	if m.Headers[contract.HeaderAttempt] != int64(3) || m.Headers["tenant"] != "acme" || m.Headers[contract.HeaderFirstSeen] != int64(1770091506789) ||
		m.Headers["x-death"] == nil || m.Headers[contract.HeaderError] != nil {
		t.Errorf("retry headers = %v", m.Headers)
	}
	if string(m.Body) != `{"n":1}` || m.ContentType != "application/json" || m.MessageID != "m1" || m.ReplyTo != "replies" ||
		m.CorrelationID != "c1" || !m.Persistent || m.Expiration != "" {
		t.Errorf("retry message = %+v", m)
	}
	if original.Headers[contract.HeaderAttempt] != int64(2) {
		t.Errorf("republication changed the original's headers: %v", original.Headers)
	}

	aside := republication(original, settlement{Outcome: contract.DeadLettered, Target: "q.dlq", Reason: "exhausted 3 attempts: boom"}).Message
	if aside.Headers[contract.HeaderError] != "exhausted 3 attempts: boom" || aside.Headers[contract.HeaderAttempt] != int64(2) {
		t.Errorf("set-aside headers = %v, want the reason added and the attempt kept", aside.Headers)
	}
	bare := republication(transport.Message{Body: []byte("x")}, settlement{Target: "q", Attempt: 2}).Message
	if bare.Headers[contract.HeaderAttempt] != int64(2) {
		t.Errorf("a message without headers gets %v", bare.Headers)
	}
}

// RetryAfter's wait is the handler's, bounded by the policy's longest wait
// and routed as any wait of its length: on the ladder's rung at or above it
// (40s, 80s, 160s here), or in the consumer below the threshold, jittered
// only upwards; the policy still ends it.
func TestSettleRetryAfter(t *testing.T) {
	policy := Exponential(4, 40*sec, 160*sec).GiveUpAfter(hr) // rungs 40s, 80s, 160s; jitter 0.2
	ladder := mustLadder(t, "q", policy)
	boom := errors.New("429 Too Many Requests")
	lowest, highest := func() float64 { return 0 }, func() float64 { return 0.999 }
	onRung := func(rung string, delay time.Duration) settlement {
		return settlement{Outcome: contract.RetriedOnRung, Target: rung, Attempt: 2, Class: contract.ReasonRetry, Delay: delay}
	}
	inConsumer := func(wait time.Duration) settlement {
		return settlement{Outcome: contract.RetriedInConsumer, Target: "q", Attempt: 2, Class: contract.ReasonRetry, Wait: wait, Delay: wait}
	}
	tests := []struct {
		name   string
		in     delivered
		random func() float64
		want   settlement
	}{
		{"90s waits on the 160s rung", delivered{Decision: RetryAfter(90*sec, boom), Attempt: 1}, lowest, onRung("q.retry.160s", 160*sec)},
		{"40s waits on the 40s rung", delivered{Decision: RetryAfter(40*sec, boom), Attempt: 1}, lowest, onRung("q.retry.40s", 40*sec)},
		{"a wait past the policy's maximum is its maximum", delivered{Decision: RetryAfter(hr, boom), Attempt: 1}, lowest, onRung("q.retry.160s", 160*sec)},
		{"5s waits in the consumer", delivered{Decision: RetryAfter(5*sec, boom), Attempt: 1}, lowest, inConsumer(5 * sec)},
		{"jittered upwards only", delivered{Decision: RetryAfter(5*sec, boom), Attempt: 1}, highest, inConsumer(5*sec + 999*ms)},
		{"a missing rung waits in the consumer", delivered{Decision: RetryAfter(90*sec, boom), Attempt: 1, RungUnavailable: true}, lowest, inConsumer(90 * sec)},
		{"0 is the policy's wait", delivered{Decision: RetryAfter(0, boom), Attempt: 2}, lowest,
			settlement{Outcome: contract.RetriedOnRung, Target: "q.retry.80s", Attempt: 3, Class: contract.ReasonRetry, Delay: 80 * sec}},
		{"below 0 too", delivered{Decision: RetryAfter(-sec, boom), Attempt: 1}, lowest, onRung("q.retry.40s", 40*sec)},
		{"fatal still dead-letters", delivered{Decision: RetryAfter(90*sec, Fatal(boom)), Attempt: 1}, lowest,
			settlement{Outcome: contract.DeadLettered, Target: "q.dlq", Reason: boom.Error(), Class: contract.ReasonFatal}},
		{"the attempts still end it", delivered{Decision: RetryAfter(5*sec, boom), Attempt: 4}, lowest,
			settlement{Outcome: contract.DeadLettered, Target: "q.dlq", Reason: "exhausted 4 attempts: " + boom.Error(), Class: contract.ReasonExhausted}},
		{"and the age", delivered{Decision: RetryAfter(5*sec, boom), Attempt: 1, Age: hr}, lowest,
			settlement{Outcome: contract.DeadLettered, Target: "q.dlq", Reason: "exceeded the maximum message age of 1h: " + boom.Error(), Class: contract.ReasonTooOld}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Source = "q"
			if got := settle(tt.in, policy, ladder, tt.random); got != tt.want {
				t.Errorf("settle = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The longest wait a handler may choose is the policy's maximum delay, or
// without one the longest wait of its schedule.
func TestSettleRetryAfterBound(t *testing.T) {
	tests := []struct {
		name   string
		policy RetryPolicy
		want   time.Duration
	}{
		{"a fixed policy's delay", Fixed(3, 10*sec), 10 * sec},
		{"an uncapped exponential's last wait", Exponential(4, sec, 0).WithJitter(0), 4 * sec},
		{"a capped exponential's cap", Exponential(3, sec, hr).WithJitter(0).WaitInBrokerFrom(0), hr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := delivered{Source: "q", Decision: RetryAfter(10*hr, errors.New("later")), Attempt: 1}
			if got := settle(in, tt.policy, mustLadder(t, "q", tt.policy), nil); got.Wait != tt.want || got.Outcome != contract.RetriedInConsumer {
				t.Errorf("settle = %+v, want a wait of %s in the consumer", got, tt.want)
			}
		})
	}
}

// A handler that timed out is retried with the timeout's class; when the
// policy gives up, the dead letter says it timed out.
func TestSettleTimedOut(t *testing.T) {
	policy := Fixed(3, minute)
	ladder := mustLadder(t, "q", policy)
	timedOut := Retry(errors.New(contract.ReasonTextTimedOut + "5s"))
	got := settle(delivered{Source: "q", Decision: timedOut, TimedOut: true, Attempt: 1}, policy, ladder, nil)
	want := settlement{Outcome: contract.RetriedOnRung, Target: "q.retry.1m", Attempt: 2, Class: contract.ReasonTimeout, Delay: minute}
	if got != want {
		t.Errorf("settle = %+v, want %+v", got, want)
	}
	got = settle(delivered{Source: "q", Decision: timedOut, TimedOut: true, Attempt: 3}, policy, ladder, nil)
	want = settlement{Outcome: contract.DeadLettered, Target: "q.dlq", Reason: "exhausted 3 attempts: the handler timed out after 5s", Class: contract.ReasonExhausted}
	if got != want {
		t.Errorf("settle = %+v, want %+v", got, want)
	}
}
