package acemq

import (
	"errors"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
)

// BenchmarkRetryMemory is one retry in the consumer on memory://: a
// confirmed publish, its delivery failing, held on a timer of no wait, the
// republish with the next attempt (confirmed) and the ack, then the second
// delivery accepted. Its allocations are the figure to watch: its time is
// mostly the timer's and the goroutines' wake-ups.
func BenchmarkRetryMemory(b *testing.B) {
	publishConsumeMemory(b, func(e Envelope) (Decision, bool) {
		if e.Attempt == 1 {
			return Retry(errors.New("boom")), false
		}
		return Accept(), true
	}, WithPolicy(Fixed(2, 0)))
}

// BenchmarkSettleLongPolicy is a retry's decision under a policy of many
// attempts: deciding one wait should not cost the whole schedule.
func BenchmarkSettleLongPolicy(b *testing.B) {
	policy := Exponential(1000, time.Second, time.Hour)
	in := delivered{Source: "orders", Decision: Retry(errors.New("boom")), Attempt: 3}
	random := func() float64 { return 0.5 }
	b.ReportAllocs()
	for b.Loop() {
		if s := settle(in, policy, retry.Ladder{}, random); s.Outcome != contract.RetriedInConsumer {
			b.Fatalf("outcome %v", s.Outcome)
		}
	}
}
