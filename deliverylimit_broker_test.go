package acemq_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/internal/brokerversion"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// A message that can be neither set aside (no Q.dlq) nor put back (its
// queue is over its length limit, held there by a second message, and
// refuses the copy) goes back to the broker as a failure, by reject: every
// version counts that towards the delivery limit, so the broker ends the
// loop itself, dead-lettering a message (here to a queue of the test's)
// at its limit's return. A nack would go around for ever on RabbitMQ 4.3,
// which no longer counts it.
func TestFailedPutBacksEndAtTheDeliveryLimit(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	tr := conn.Transport()
	q := brokertest.UniqueName(t, "acemq.test")
	held := q + ".held"
	t.Cleanup(func() {
		for _, name := range []string{q, held, contract.DeadLetterQueue(q), contract.ParkedQueue(q)} {
			_, _ = tr.DeleteQueue(context.Background(), name)
		}
	})
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: held, Type: transport.Quorum, Durable: true}); err != nil {
		t.Fatal(err)
	}
	const limit = 2
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Quorum, Durable: true, Arguments: transport.Table{
		contract.ArgDeliveryLimit: int64(limit), contract.ArgMaxLength: int64(0), contract.ArgOverflow: contract.OverflowRejectPublish,
		contract.ArgDeadLetterExchange: "", contract.ArgDeadLetterRoutingKey: held,
	}}); err != nil {
		t.Fatal(err)
	}
	var handled atomic.Int64
	first, second := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c := consume(t, conn, q, func(context.Context, acemq.Message[item]) acemq.Decision {
		if handled.Add(1) == 1 {
			close(first)
			<-second // the queue is full before the first put-back
		}
		return acemq.Reject(errors.New("no"))
	}, acemq.WithTestBackoff(), acemq.WithPrefetch(1))
	t.Cleanup(func() { once.Do(func() { close(second) }) })
	if _, err := tr.DeleteQueue(ctx, contract.DeadLetterQueue(q)); err != nil { // declared by Consume
		t.Fatal(err)
	}
	publish(t, conn, q, item{N: 1})
	<-first
	publish(t, conn, q, item{N: 2})
	once.Do(func() { close(second) })

	// Once one is dead-lettered the other is alone, and its copy goes
	// back: it waits for Q.dlq in a loop of put-backs, as designed.
	waitFor(t, "the broker's dead letter", 30*time.Second, func() bool { return depth(t, conn, held) == 1 })
	if _, err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	d, ok, err := tr.Get(ctx, held)
	if err != nil || !ok {
		t.Fatalf("Get from %s: %v, %v", held, ok, err)
	}
	if got := fmt.Sprint(d.Headers[contract.HeaderFirstDeathPrefix+"reason"]); got != contract.DeathReasonDeliveryLimit {
		t.Errorf("dead-lettered for %q, want %q; headers %v", got, contract.DeathReasonDeliveryLimit, d.Headers)
	}
	waitFor(t, "the other message back on its queue", 10*time.Second, func() bool { return depth(t, conn, q) == 1 })
	if st := c.Stats(); st.SetAsideFailed < limit+1 || st.DeadLettered != 0 || st.Accepted != 0 {
		t.Errorf("stats %+v, want at least %d failed set-asides, nothing acked", st, limit+1)
	}
}

// The poison-loop guard for a message that kills its consumer before any
// decision: the broker gets it back with the consumer's closed channel,
// which every version counts. From RabbitMQ 4.0 a quorum queue the
// topology declares (no x-delivery-limit of its own) dead-letters it to
// Q.dlq at the 21st delivery, reason delivery_limit; 3.10 has no default
// limit, and the message is still there.
func TestCrashLoopEndsAtTheDefaultDeliveryLimit(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	tr := conn.Transport()
	v, err := brokerversion.Of(tr)
	if err != nil {
		t.Fatal(err)
	}
	q := brokertest.UniqueName(t, "acemq.test")
	t.Cleanup(func() { deleteQueues(tr, q, acemq.NoRetry()) })
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: q, DeadLetter: true}}}).Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	publish(t, conn, q, item{N: 1})
	const deaths = 21 // one more than RabbitMQ 4's default limit
	delivered := 0
	for ; delivered < deaths && depth(t, conn, contract.DeadLetterQueue(q)) == 0; delivered++ {
		taker, err := tr.Take(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, fmt.Sprintf("delivery %d", delivered+1), 10*time.Second, func() bool {
			_, ok, err := taker.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		})
		if err := taker.Close(); err != nil { // dies holding it
			t.Fatal(err)
		}
	}
	limit := v.DefaultDeliveryLimit()
	if limit == 0 {
		waitFor(t, "the message back on its queue", 10*time.Second, func() bool { return depth(t, conn, q) == 1 })
		if delivered != deaths || depth(t, conn, contract.DeadLetterQueue(q)) != 0 {
			t.Errorf("RabbitMQ %s: delivered %d times, Q.dlq holds %d; want %d deliveries and the message still in %s",
				v, delivered, depth(t, conn, contract.DeadLetterQueue(q)), deaths, q)
		}
		return
	}
	waitFor(t, "the broker's dead letter", 10*time.Second, func() bool { return depth(t, conn, contract.DeadLetterQueue(q)) == 1 })
	if delivered != limit+1 {
		t.Errorf("RabbitMQ %s dead-lettered the message after %d deliveries, want %d", v, delivered, limit+1)
	}
	d, ok, err := tr.Get(ctx, contract.DeadLetterQueue(q))
	if err != nil || !ok {
		t.Fatalf("Get from Q.dlq: %v, %v", ok, err)
	}
	if r := deadletter.ReasonOf(contract.DeadLetterQueue(q), d.Message); r.Class != contract.ReasonDeliveryLimit {
		t.Errorf("in Q.dlq for %+v, want the class %s; headers %v", r, contract.ReasonDeliveryLimit, d.Headers)
	}
}
