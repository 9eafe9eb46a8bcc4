package idempotency_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/idempotency"
)

// setup declares queue "jobs" with consumer waits only, and consumes it
// with h wrapped over store.
func setup(t *testing.T, b *acemqtest.Broker, store idempotency.Store, h acemq.Handler[string], opts ...idempotency.Option) (*acemq.Consumer, *acemq.Publisher[string]) {
	t.Helper()
	conn := b.Connect(t)
	policy := acemq.Fixed(3, time.Second)
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "jobs", Retry: &policy}}}
	if err := top.Apply(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	wrapped, err := idempotency.Handler(store, h, opts...)
	if err != nil {
		t.Fatal(err)
	}
	c, err := acemq.Consume(t.Context(), conn, "jobs", wrapped, acemq.WithPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c, acemqtest.NewPublisher[string](t, conn, "")
}

func publish(t *testing.T, p *acemq.Publisher[string], id string) {
	t.Helper()
	if err := p.Publish(t.Context(), "jobs", "body", acemq.WithMessageID(id)); err != nil {
		t.Fatal(err)
	}
}

func TestDuplicateRunsOnce(t *testing.T) {
	b := acemqtest.NewBroker(t)
	store := idempotency.NewMemory(b.Clock.Now)
	var runs atomic.Int32
	c, p := setup(t, b, store, func(context.Context, acemq.Message[string]) acemq.Decision {
		runs.Add(1)
		return acemq.Accept()
	})
	publish(t, p, "order-1")
	publish(t, p, "order-1")
	publish(t, p, "order-2")
	acemqtest.WaitFor(t, c, "three accepts", func(s acemq.Stats) bool { return s.Accepted == 3 })
	if n := runs.Load(); n != 2 {
		t.Errorf("the handler ran %d times; want 2 (order-1 once, order-2 once)", n)
	}
	if r, _ := store.Claim(t.Context(), "order-1", "someone", time.Minute); r != idempotency.Confirmed {
		t.Errorf("order-1 is %v; want confirmed", r)
	}
}

// A failure releases the claim: the retry runs the handler again, and its
// success confirms.
func TestFailureThenSuccess(t *testing.T) {
	b := acemqtest.NewBroker(t)
	store := idempotency.NewMemory(b.Clock.Now)
	var runs atomic.Int32
	c, p := setup(t, b, store, func(context.Context, acemq.Message[string]) acemq.Decision {
		if runs.Add(1) == 1 {
			return acemq.Retry(errors.New("the database blinked"))
		}
		return acemq.Accept()
	})
	publish(t, p, "order-1")
	acemqtest.WaitFor(t, c, "the retry's wait", func(s acemq.Stats) bool { return s.Waiting == 1 })
	b.Advance(time.Second)
	acemqtest.WaitFor(t, c, "the accept", func(s acemq.Stats) bool { return s.Accepted == 1 })
	if n := runs.Load(); n != 2 {
		t.Errorf("the handler ran %d times; want 2", n)
	}
	publish(t, p, "order-1")
	acemqtest.WaitFor(t, c, "the duplicate's accept", func(s acemq.Stats) bool { return s.Accepted == 2 })
	if n := runs.Load(); n != 2 {
		t.Errorf("the handler ran %d times after the duplicate; want 2", n)
	}
}

// A message another consumer holds is put back without spending an
// attempt until that claim expires; then this consumer takes it over.
func TestHeldElsewhereIsPutBackThenTakenOver(t *testing.T) {
	b := acemqtest.NewBroker(t)
	store := idempotency.NewMemory(b.Clock.Now)
	if r, err := store.Claim(t.Context(), "order-1", "the other consumer", contract.DefaultClaimTimeout); r != idempotency.Claimed || err != nil {
		t.Fatal(r, err)
	}
	attempts := make(chan int, 1)
	c, p := setup(t, b, store, func(_ context.Context, m acemq.Message[string]) acemq.Decision {
		attempts <- m.Envelope.Attempt
		return acemq.Accept()
	})
	publish(t, p, "order-1")
	acemqtest.WaitFor(t, c, "the put back's wait", func(s acemq.Stats) bool { return s.Waiting == 1 })
	b.Advance(contract.RequeueDelay)
	acemqtest.WaitFor(t, c, "the put back", func(s acemq.Stats) bool { return s.PutBack == 1 })
	if len(attempts) != 0 {
		t.Fatal("the handler ran while another consumer held the message")
	}
	// Put back until the other claim expires: 5 minutes, one second at a time.
	for i := 2; len(attempts) == 0; i++ {
		acemqtest.WaitFor(t, c, "the next wait", func(s acemq.Stats) bool { return s.Waiting == 1 || s.Accepted == 1 })
		if c.Stats().Accepted == 1 {
			break
		}
		b.Advance(contract.RequeueDelay)
		acemqtest.WaitFor(t, c, "the put back", func(s acemq.Stats) bool { return s.PutBack == int64(i) || s.Accepted == 1 })
		if i > int(contract.DefaultClaimTimeout/contract.RequeueDelay)+2 {
			t.Fatalf("still put back after %d tries", i)
		}
	}
	acemqtest.WaitFor(t, c, "the accept", func(s acemq.Stats) bool { return s.Accepted == 1 })
	if a := <-attempts; a != 1 {
		t.Errorf("the handler saw attempt %d; the put backs spend none", a)
	}
	if s := c.Stats(); s.RetriedInConsumer != 0 || s.DeadLettered != 0 || s.PutBack < int64(contract.DefaultClaimTimeout/contract.RequeueDelay)-1 {
		t.Errorf("stats %+v", s)
	}
}

// A store that fails: a claim error retries; a failed confirm retries too
// (the message is not lost), and the handler runs again.
type failing struct {
	idempotency.Store
	claim, confirm atomic.Int32 // failures left
}

func (f *failing) Claim(ctx context.Context, key, owner string, d time.Duration) (idempotency.Result, error) {
	if f.claim.Add(-1) >= 0 {
		return 0, errors.New("claim: connection refused")
	}
	return f.Store.Claim(ctx, key, owner, d)
}

func (f *failing) Confirm(ctx context.Context, key string, d time.Duration) error {
	if f.confirm.Add(-1) >= 0 {
		return errors.New("confirm: connection refused")
	}
	return f.Store.Confirm(ctx, key, d)
}

func TestStoreErrorsRetry(t *testing.T) {
	b := acemqtest.NewBroker(t)
	store := &failing{Store: idempotency.NewMemory(b.Clock.Now)}
	store.claim.Store(1)
	store.confirm.Store(1)
	var runs atomic.Int32
	c, p := setup(t, b, store, func(context.Context, acemq.Message[string]) acemq.Decision {
		runs.Add(1)
		return acemq.Accept()
	})
	publish(t, p, "order-1")
	for i := 1; i <= 2; i++ { // the claim fails, then the confirm
		acemqtest.WaitFor(t, c, "the retry's wait", func(s acemq.Stats) bool { return s.Waiting == 1 })
		b.Advance(time.Second)
		acemqtest.WaitFor(t, c, "the retry", func(s acemq.Stats) bool { return s.RetriedInConsumer == int64(i) })
	}
	// The failed confirm's claim is still held: put back until it expires.
	for c.Stats().Accepted == 0 {
		acemqtest.WaitFor(t, c, "a wait", func(s acemq.Stats) bool { return s.Waiting == 1 || s.Accepted == 1 })
		b.Advance(contract.RequeueDelay)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the handler ran %d times; want 2 (the confirm failed once)", n)
	}
}

func TestNoKey(t *testing.T) {
	b := acemqtest.NewBroker(t)
	c, p := setup(t, b, idempotency.NewMemory(b.Clock.Now), func(context.Context, acemq.Message[string]) acemq.Decision {
		t.Error("the handler ran for a message without a key")
		return acemq.Accept()
	}, idempotency.WithKey(func(acemq.Envelope) string { return "" }))
	publish(t, p, "order-1")
	acemqtest.WaitFor(t, c, "the park", func(s acemq.Stats) bool { return s.Parked == 1 })
	parked := b.Messages(t, contract.ParkedQueue("jobs"))
	if len(parked) != 1 || parked[0].Envelope.Error != idempotency.ErrNoKey.Error() {
		t.Errorf("parked %+v", parked)
	}

	b2 := acemqtest.NewBroker(t)
	var runs atomic.Int32
	c2, p2 := setup(t, b2, idempotency.NewMemory(b2.Clock.Now), func(context.Context, acemq.Message[string]) acemq.Decision {
		runs.Add(1)
		return acemq.Accept()
	}, idempotency.WithKey(func(acemq.Envelope) string { return "" }), idempotency.RunWithoutKey())
	publish(t, p2, "order-1")
	publish(t, p2, "order-1")
	acemqtest.WaitFor(t, c2, "two accepts", func(s acemq.Stats) bool { return s.Accepted == 2 })
	if runs.Load() != 2 {
		t.Errorf("ran %d times without a key; want 2 (no deduplication)", runs.Load())
	}
}

// A panicking handler releases its claim: the next copy runs.
func TestPanicForgets(t *testing.T) {
	store := idempotency.NewMemory(nil)
	h, err := idempotency.Handler(store, func(context.Context, acemq.Message[string]) acemq.Decision { panic("boom") })
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic was swallowed")
			}
		}()
		h(t.Context(), acemq.Message[string]{Envelope: acemq.Envelope{ID: "m-1"}})
	}()
	if r, _ := store.Claim(t.Context(), "m-1", "next", time.Minute); r != idempotency.Claimed {
		t.Errorf("after the panic m-1 is %v; want it free to claim", r)
	}
}

// Prune removes what has expired, on the consumer's clock.
func TestPruneAfterRetention(t *testing.T) {
	b := acemqtest.NewBroker(t)
	store := idempotency.NewMemory(b.Clock.Now)
	c, p := setup(t, b, store, func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() },
		idempotency.WithRetention(time.Hour))
	publish(t, p, "order-1")
	acemqtest.WaitFor(t, c, "the accept", func(s acemq.Stats) bool { return s.Accepted == 1 })
	if n, _ := store.Prune(t.Context(), b.Clock.Now()); n != 0 {
		t.Errorf("pruned %d before the retention ended", n)
	}
	if n, _ := store.Prune(t.Context(), b.Clock.Now().Add(time.Hour)); n != 1 || len(store.Keys()) != 0 {
		t.Errorf("pruned %d, left %v; want 1, none", n, store.Keys())
	}
}
