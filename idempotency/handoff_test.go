package idempotency_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/idempotency"
)

// held is a store whose confirm of one key waits until released.
type held struct {
	idempotency.Store
	key      string
	released chan struct{}
}

func (h *held) Confirm(ctx context.Context, key string, d time.Duration) error {
	if key == h.key {
		<-h.released
	}
	return h.Store.Confirm(ctx, key, d)
}

// A confirm in flight does not hold the handler's place: at concurrency 1
// the next message is claimed, handled and acked while the first's confirm
// waits (so that a SQL store groups the next claim with it), and the first
// is acked only once its confirm is made.
func TestAConfirmInFlightFreesTheHandlersPlace(t *testing.T) {
	b := acemqtest.NewBroker(t)
	store := &held{Store: idempotency.NewMemory(b.Clock.Now), key: "order-1", released: make(chan struct{})}
	var runs atomic.Int32
	h, err := idempotency.Handler(idempotency.Store(store), func(context.Context, acemq.Message[string]) acemq.Decision {
		runs.Add(1)
		return acemq.Accept()
	})
	if err != nil {
		t.Fatal(err)
	}
	conn := b.Connect(t)
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: "jobs"}}}).Apply(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	c, err := acemq.Consume(t.Context(), conn, "jobs", h, acemq.WithConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	release := sync.OnceFunc(func() { close(store.released) })
	t.Cleanup(release) // before Close, should the test end early
	p := acemqtest.NewPublisher[string](t, conn, "")
	publish(t, p, "order-1")
	publish(t, p, "order-2")
	acemqtest.WaitFor(t, c, "order-2's accept while order-1's confirm waits", func(s acemq.Stats) bool { return s.Accepted == 1 })
	if n, s := runs.Load(), c.Stats(); n != 2 || s.Accepted != 1 {
		t.Fatalf("the handler ran %d times, %d accepted, order-1's confirm waiting; want 2 and 1 (order-2)", n, s.Accepted)
	}
	release()
	acemqtest.WaitFor(t, c, "order-1's accept once its confirm is made", func(s acemq.Stats) bool { return s.Accepted == 2 })
	if r, _ := store.Claim(t.Context(), "order-1", "someone", time.Minute); r != idempotency.Confirmed {
		t.Errorf("order-1 is %v; want confirmed", r)
	}
}

// recording is a store that records the keys it confirmed.
type recording struct {
	idempotency.Store
	confirmed sync.Map
}

func (r *recording) Confirm(ctx context.Context, key string, d time.Duration) error {
	err := r.Store.Confirm(ctx, key, d)
	if err == nil {
		r.confirmed.Store(key, true)
	}
	return err
}

type wrapperKey struct{}

// A wrapper that gives the idempotent handler a context of its own (a
// pipeline's step, a harness counting what it sees) may act on its
// Accept: it is owed one made after the confirm, so the confirm is made
// in the handler, as outside a consumer.
func TestAWrapperWithAContextOfItsOwnSeesTheConfirmMade(t *testing.T) {
	b := acemqtest.NewBroker(t)
	store := &recording{Store: idempotency.NewMemory(b.Clock.Now)}
	inner, err := idempotency.Handler(idempotency.Store(store), func(context.Context, acemq.Message[string]) acemq.Decision {
		return acemq.Accept()
	})
	if err != nil {
		t.Fatal(err)
	}
	unconfirmed := make(chan string, 2)
	wrapper := func(ctx context.Context, m acemq.Message[string]) acemq.Decision {
		d := inner(context.WithValue(ctx, wrapperKey{}, "mine"), m)
		if _, ok := store.confirmed.Load(m.Envelope.ID); d == acemq.Accept() && !ok {
			unconfirmed <- m.Envelope.ID
		}
		return d
	}
	conn := b.Connect(t)
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: "jobs"}}}).Apply(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	c, err := acemq.Consume(t.Context(), conn, "jobs", wrapper)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	p := acemqtest.NewPublisher[string](t, conn, "")
	publish(t, p, "order-1")
	publish(t, p, "order-2")
	acemqtest.WaitFor(t, c, "two accepts", func(s acemq.Stats) bool { return s.Accepted == 2 })
	if len(unconfirmed) > 0 {
		t.Errorf("the wrapper saw Accept for %s before its confirm was made", <-unconfirmed)
	}
}
