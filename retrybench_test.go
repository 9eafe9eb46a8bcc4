package acemq

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// BenchmarkRetryMemory is one retry in the consumer on memory://: a
// confirmed publish, its delivery failing, held on a timer of no wait, the
// republish with the next attempt (confirmed) and the ack, then the second
// delivery accepted. Its allocations are the figure to watch: its time is
// mostly the timer's and the goroutines' wake-ups.
func BenchmarkRetryMemory(b *testing.B) {
	ctx := context.Background()
	tr, err := memory.Dial(ctx, fmt.Sprintf("memory://bench-%d", benchBrokers.Add(1)))
	if err != nil {
		b.Fatal(err)
	}
	conn, err := New(tr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Transport().DeclareQueue(ctx, transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		b.Fatal(err)
	}
	handled := make(chan struct{}, 1)
	c, err := Consume(ctx, conn, "orders", func(_ context.Context, m Message[benchItem]) Decision {
		if m.Envelope.Attempt == 1 {
			return Retry(errors.New("boom"))
		}
		handled <- struct{}{}
		return Accept()
	}, WithPolicy(Fixed(2, 0)))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if _, err := c.Close(ctx); err != nil {
			b.Error(err)
		}
	}()
	pub := mustPublisher[benchItem](b, conn, "")
	item := newBenchItem(1)
	b.ReportAllocs()
	for b.Loop() {
		if err := pub.Publish(ctx, "orders", item); err != nil {
			b.Fatal(err)
		}
		<-handled
	}
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
