package acemq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/internal/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// A rung sends a message home by RabbitMQ's own dead-lettering, which for a
// classic queue is at most once: nothing confirms the hop, so a message the
// source queue cannot take is gone without a word. Here the source is full
// with x-overflow reject-publish: a publisher is told (a negative confirm),
// the rung is not. This is why Topology refuses that overflow beside a retry
// policy, and the mechanism behind the loss the broker-restart chaos
// scenario can show (docs/reliability.md).
func TestRungHomeIntoAFullQueueIsDroppedOnRabbitMQ(t *testing.T) {
	conn := connect(t)
	q := brokertest.UniqueName(t, "acemq.test")
	rungLoss(t, conn, q, func() {
		waitFor(t, "the rung's TTL", 30*time.Second, func() bool { return depth(t, conn, q+".retry.1s") == 0 })
	})
}

func TestRungHomeIntoAFullQueueIsDroppedOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	rungLoss(t, b.Connect(t), "orders", func() { b.Advance(time.Second) })
}

func rungLoss(t *testing.T, conn *acemq.Conn, q string, expire func()) {
	ctx := context.Background()
	tr := conn.Transport()
	ladder, err := acemq.NewRetryLadder(q, acemq.Fixed(2, time.Second).WaitInBrokerFrom(time.Second), acemq.ContractRungs)
	if err != nil {
		t.Fatal(err)
	}
	full := transport.Queue{Name: q, Type: transport.Classic, Durable: true,
		Arguments: transport.Table{"x-max-length": int64(1), "x-overflow": "reject-publish"}}
	if err := tr.DeclareQueue(ctx, full); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, name := range append([]string{q, acemq.DeadLetterQueue(q), acemq.ParkedQueue(q)}, ladder.Queues()...) {
			_, _ = tr.DeleteQueue(context.Background(), name)
		}
	})
	if err := ladder.Declare(ctx, tr); err != nil {
		t.Fatal(err)
	}
	rung := ladder.Rungs()[0].Queue
	send := func(queue, body string) error {
		c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: queue, Mandatory: true,
			Message: transport.Message{Body: []byte(body), Persistent: true}})
		if err == nil {
			err = c.Wait(ctx)
		}
		return err
	}
	if err := send(q, "resident"); err != nil {
		t.Fatal(err)
	}
	if err := send(q, "refused"); !errors.Is(err, transport.ErrRefused) {
		t.Fatalf("a publish into the full queue: %v, want ErrRefused (the publisher is told)", err)
	}
	if err := send(rung, "retried"); err != nil {
		t.Fatal(err)
	}

	expire()
	for queue, want := range map[string]int{rung: 0, q: 1, acemq.DeadLetterQueue(q): 0, acemq.ParkedQueue(q): 0} {
		if n := depth(t, conn, queue); n != want {
			t.Errorf("%s holds %d messages, want %d", queue, n, want)
		}
	}
	d, ok, err := tr.Get(ctx, q)
	if err != nil || !ok || string(d.Body) != "resident" {
		t.Fatalf("Get from %s: %q, %v, %v; want the resident message", q, d.Body, ok, err)
	}
	_ = d.Ack()
	// "retried" left its rung, and no queue holds it: dropped, unannounced.
}
