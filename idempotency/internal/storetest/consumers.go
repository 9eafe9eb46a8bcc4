package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/internal/testing/testclock"
)

// Two consumers of one queue, each with a store of its own and eight
// handlers, given every message three times: each message's handler runs
// exactly once, acked only after its confirm (which the handler hands over
// to its consumer, to be grouped with the next claims), and every copy is
// accepted.
func consumersDeduplicate(t *testing.T, open func() idempotency.Store, _ *testclock.Clock) {
	const keys, copies = 40, 3
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: "jobs"}}}).Apply(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	runs := make([]atomic.Int32, keys)
	var consumers []*acemq.Consumer
	for i := range 2 {
		h, err := idempotency.Handler(open(), func(_ context.Context, m acemq.Message[int]) acemq.Decision {
			runs[m.Body].Add(1)
			return acemq.Accept()
		}, idempotency.WithOwner(fmt.Sprintf("consumer-%d", i)), idempotency.WithClaimTimeout(timeout))
		if err != nil {
			t.Fatal(err)
		}
		c, err := acemq.Consume(t.Context(), conn, "jobs", h, acemq.WithConcurrency(8))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		consumers = append(consumers, c)
	}
	p := acemqtest.NewPublisher[int](t, conn, "")
	for range copies {
		for k := range keys {
			if err := p.Publish(t.Context(), "jobs", k, acemq.WithMessageID(fmt.Sprintf("dup-%d", k))); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A copy another handler holds is put back after contract.RequeueDelay
	// on the broker's clock, which the loop moves on.
	total := func() (s acemq.Stats) {
		for _, c := range consumers {
			cs := c.Stats()
			s.Accepted, s.Waiting, s.RetriedInConsumer = s.Accepted+cs.Accepted, s.Waiting+cs.Waiting, s.RetriedInConsumer+cs.RetriedInConsumer
		}
		return s
	}
	deadline := time.Now().Add(30 * time.Second)
	for s := total(); s.Accepted < keys*copies; s = total() {
		if time.Now().After(deadline) {
			t.Fatalf("not every copy accepted within 30s: %+v", s)
		}
		if s.Waiting > 0 {
			b.Advance(contract.RequeueDelay)
		}
		time.Sleep(time.Millisecond)
	}
	if s := total(); s.RetriedInConsumer != 0 {
		t.Errorf("%d retries; want none (no store error)", s.RetriedInConsumer)
	}
	for k := range keys {
		if n := runs[k].Load(); n != 1 {
			t.Errorf("dup-%d: the handler ran %d times; want once", k, n)
		}
	}
}
