package acemqtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
)

// checkoutTest is a test as a user writes one: a five-minute retry on a rung
// takes no time, because the test moves the broker's clock.
// TestTheExampleRuns runs it.
func checkoutTest(t *testing.T) {
	ctx := context.Background()
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)

	policy := acemq.Fixed(2, 5*time.Minute) // a wait of 5m: on a rung
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "orders", DeadLetter: true, Retry: &policy}}}
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	consumer, err := acemq.Consume(ctx, conn, "orders", func(ctx context.Context, m acemq.Message[string]) acemq.Decision {
		if m.Envelope.Attempt == 1 {
			return acemq.Retry(errors.New("the warehouse is busy"))
		}
		return acemq.Accept()
	}, acemq.WithPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	orders, err := acemq.NewPublisher[string](conn, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := orders.Publish(ctx, "orders", "order o-1"); err != nil {
		t.Fatal(err)
	}

	acemqtest.WaitFor(t, consumer, "the retry", func(s acemq.Stats) bool { return s.RetriedOnRung == 1 })
	b.Advance(5 * time.Minute) // the rung expires now; the message comes home
	acemqtest.WaitFor(t, consumer, "the second attempt", func(s acemq.Stats) bool { return s.Accepted == 1 })
	if dead := b.Messages(t, "orders.dlq"); len(dead) != 0 {
		t.Errorf("orders.dlq holds %d messages", len(dead))
	}
}

func Example() {}
