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
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	ctx := context.Background()
	policy := acemq.Fixed(2, 5*time.Minute)
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "jobs", Retry: &policy}}}
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	c, err := acemq.Consume(ctx, conn, "jobs", func(_ context.Context, m acemq.Message[string]) acemq.Decision {
		if m.Envelope.Attempt == 1 {
			return acemq.Retry(errors.New("later"))
		}
		return acemq.Accept()
	}, acemq.WithPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if err := acemqtest.NewPublisher[string](t, conn, "").Publish(ctx, "jobs", "build", acemq.WithHeaders(map[string]any{"team": "a"})); err != nil {
		t.Fatal(err)
	}
	acemqtest.WaitFor(t, c, "the retry on the rung", func(s acemq.Stats) bool { return s.RetriedOnRung == 1 })
	waiting := b.Messages(t, "jobs.retry.quorum.5m")
	if len(waiting) != 1 || string(waiting[0].Body) != "build" || waiting[0].Envelope.Attempt != 2 || waiting[0].Envelope.Headers["team"] != "a" {
		t.Fatalf("the rung holds %+v", waiting)
	}
	b.Advance(5 * time.Minute)
	acemqtest.WaitFor(t, c, "the accept", func(s acemq.Stats) bool { return s.Accepted == 1 })
	if left := b.Messages(t, "jobs.retry.quorum.5m"); len(left) != 0 {
		t.Errorf("the rung still holds %d", len(left))
	}
}

func Example() {}
