package acemq_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport/transporttest"
)

// queueEvents records the queue events a Conn tells.
type queueEvents struct {
	acemq.NopObserver
	mu     sync.Mutex
	events []acemq.Event
}

func (o *queueEvents) Event(e acemq.Event) {
	if e.Kind == acemq.EventQueuePurged || e.Kind == acemq.EventQueueDeleted {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.events = append(o.events, e)
	}
}

func (o *queueEvents) told() []acemq.Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]acemq.Event(nil), o.events...)
}

// The Conn's queue operations on memory:// and on RabbitMQ: what a tool
// or an example does without the driver SPI.
func TestQueueOperations(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		obs := &queueEvents{}
		queueOperations(t, acemqtest.NewBroker(t).Connect(t, acemq.WithObserver(obs)), "jobs", obs)
	})
	t.Run("rabbitmq", func(t *testing.T) {
		obs := &queueEvents{}
		queueOperations(t, connect(t, acemq.WithObserver(obs)), brokertest.UniqueName(t, "acemq.test.queue"), obs)
	})
}

func queueOperations(t *testing.T, conn *acemq.Conn, q string, obs *queueEvents) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !conn.State().Connected {
		t.Fatalf("State %+v: want connected", conn.State())
	}
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: q, Type: "classic"}}}
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = conn.DeleteQueue(context.Background(), q) })
	for _, body := range []string{"one", "two", "three"} {
		sent, err := conn.Publish(ctx, "", q, acemq.RawMessage{Body: []byte(body)})
		if err == nil {
			err = sent.Wait(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	ready := func(want int) {
		t.Helper()
		for {
			st, err := conn.InspectQueue(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if st.Messages == want {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s holds %d ready messages, want %d", q, st.Messages, want)
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	ready(3)

	d, ok, err := conn.Get(ctx, q)
	if err != nil || !ok || string(d.Body) != "one" {
		t.Fatalf("Get: %q, %v, %v; want the head, one", d.Body, ok, err)
	}
	if err := d.Ack(); err != nil {
		t.Fatal(err)
	}
	ready(2)

	taker, err := conn.Take(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	d, ok, err = taker.Next(ctx)
	if err != nil || !ok || string(d.Body) != "two" {
		t.Fatalf("Next: %q, %v, %v; want two", d.Body, ok, err)
	}
	if err := taker.Close(); err != nil {
		t.Fatal(err)
	}
	ready(2) // closing the Taker put two back

	if n, err := conn.PurgeQueue(ctx, q); err != nil || n != 2 {
		t.Fatalf("PurgeQueue: %d, %v; want 2", n, err)
	}
	if n, err := conn.DeleteQueue(ctx, q); err != nil || n != 0 {
		t.Fatalf("DeleteQueue: %d, %v; want 0", n, err)
	}
	if _, err := conn.InspectQueue(ctx, q); !errors.Is(err, acemq.ErrNotFound) {
		t.Fatalf("InspectQueue of the deleted queue: %v, want ErrNotFound", err)
	}
	told := obs.told()
	if len(told) != 2 || told[0].Kind != acemq.EventQueuePurged || told[0].Queue != q || told[0].Messages != 2 ||
		told[1].Kind != acemq.EventQueueDeleted || told[1].Queue != q || told[1].Messages != 0 || told[1].Conn != conn {
		t.Errorf("the Observer was told %+v; want %s purged of 2, then deleted with 0", told, q)
	}
}

// A temporary queue is declared by the Conn and consumed raw; closing the
// consumer ends its deliveries.
func TestConsumeTemporary(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		consumeTemporary(t, acemqtest.NewBroker(t).Connect(t), "replies")
	})
	t.Run("rabbitmq", func(t *testing.T) {
		consumeTemporary(t, connect(t), brokertest.UniqueName(t, "acemq.test.temporary"))
	})
}

func consumeTemporary(t *testing.T, conn *acemq.Conn, q string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tc, err := conn.ConsumeTemporary(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if tc.Queue() != q {
		t.Errorf("Queue() is %q, want %q", tc.Queue(), q)
	}
	sent, err := conn.Publish(ctx, "", q, acemq.RawMessage{Body: []byte("reply"), CorrelationID: "c-1"})
	if err == nil {
		err = sent.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-transporttest.Chan(tc):
		if string(d.Body) != "reply" || d.CorrelationID != "c-1" {
			t.Errorf("delivered %q (%s), want reply (c-1)", d.Body, d.CorrelationID)
		}
		if err := d.Ack(); err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("nothing delivered from the temporary queue")
	}
	if err := tc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for open := true; open; { // ended once the consumer is cancelled
		select {
		case _, open = <-transporttest.Chan(tc):
		case <-ctx.Done():
			t.Fatal("Deliveries stayed open after Close")
		}
	}
	if err := tc.Close(ctx); err != nil {
		t.Errorf("closing again: %v", err)
	}
}
