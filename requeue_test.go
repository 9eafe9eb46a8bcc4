package acemq_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
)

// Requeue holds the message for contract.RequeueDelay, then puts a copy back
// with its attempt and headers as they were: the handler sees attempt 1
// again, and nothing is written of why.
func TestRequeuePutsBackUnchanged(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	ctx := context.Background()
	policy := acemq.Fixed(2, contract.DefaultBrokerWaitThreshold)
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "jobs", Retry: &policy}}}
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	attempts := make(chan int, 4)
	c, err := acemq.Consume(ctx, conn, "jobs", func(_ context.Context, m acemq.Message[string]) acemq.Decision {
		attempts <- m.Envelope.Attempt
		if calls.Add(1) <= 2 {
			return acemq.Requeue(errors.New("not yet"))
		}
		return acemq.Accept()
	}, acemq.WithPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if err := acemqtest.NewPublisher[string](t, conn, "").Publish(ctx, "jobs", "build", acemq.WithMessageID("m-1")); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		acemqtest.WaitFor(t, c, "the wait before putting it back", func(s acemq.Stats) bool { return s.Waiting == 1 })
		b.Advance(contract.RequeueDelay)
		acemqtest.WaitFor(t, c, "the put back", func(s acemq.Stats) bool { return s.PutBack == int64(i) })
	}
	acemqtest.WaitFor(t, c, "the accept", func(s acemq.Stats) bool { return s.Accepted == 1 })
	close(attempts)
	for a := range attempts {
		if a != 1 {
			t.Errorf("the handler saw attempt %d; a requeue spends none", a)
		}
	}
	if s := c.Stats(); s.RetriedInConsumer != 0 || s.DeadLettered != 0 || s.Parked != 0 {
		t.Errorf("stats %+v", s)
	}
	for _, q := range []string{"jobs", contract.DeadLetterQueue("jobs"), contract.ParkedQueue("jobs")} {
		if left := b.Messages(t, q); len(left) != 0 {
			t.Errorf("%s holds %d", q, len(left))
		}
	}
}

func TestRequeueString(t *testing.T) {
	if got := acemq.Requeue(nil).String(); got != "requeue (requeue requested)" {
		t.Errorf("Requeue(nil) = %q", got)
	}
}
