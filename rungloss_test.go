package acemq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
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
	rungIntoAFullQueue(t, conn, q, contract.ContractRungs, func() {
		waitFor(t, "the rung's TTL", 30*time.Second, func() bool { return depth(t, conn, q+".retry.1s") == 0 })
	})
	// "retried" left its rung, and no queue holds it: dropped, unannounced.
}

func TestRungHomeIntoAFullQueueIsDroppedOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	rungIntoAFullQueue(t, b.Connect(t), "orders", contract.ContractRungs, func() { b.Advance(time.Second) })
}

// An at-least-once rung is another matter: the rung keeps the message the
// full queue refused, confirmed home by nobody yet, and sends it again
// later (RabbitMQ 3.10 and 4.0 both retry after 180s, their default
// dead_letter_worker_publisher_confirm_timeout, too long to wait for here).
func TestAtLeastOnceRungKeepsWhatAFullQueueRefusesOnRabbitMQ(t *testing.T) {
	t.Parallel()
	conn := connect(t)
	q := brokertest.UniqueName(t, "acemq.test")
	rung := q + ".retry.quorum.1s"
	rungIntoAFullQueue(t, conn, q, contract.AtLeastOnceRungs, func() {
		waitFor(t, "the rung holding its refused dead letter", 30*time.Second, func() bool {
			return brokertest.AwaitingDeadLetter(t, rung) == 1
		})
	})
	if n := depth(t, conn, rung); n != 0 {
		t.Errorf("%s holds %d ready messages, want none: the one it holds is dead-lettered, awaiting its confirm", rung, n)
	}
}

// On memory://, with its clock in hand, the whole of it: the rung keeps the
// refused message, and once there is room sends it home at the dead-letter
// worker's next try, 3 minutes on (RabbitMQ's default).
func TestAtLeastOnceRungKeepsWhatAFullQueueRefusesOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	rungIntoAFullQueue(t, conn, "orders", contract.AtLeastOnceRungs, func() { b.Advance(time.Second) })
	// The resident message is gone (rungIntoAFullQueue took it): room.
	b.Advance(3 * time.Minute)
	d, ok, err := conn.Transport().Get(context.Background(), "orders")
	if err != nil || !ok || string(d.Body) != "retried" {
		t.Fatalf("Get from orders after the worker's retry: %q, %v, %v; want the message the rung kept", d.Body, ok, err)
	}
	_ = d.Ack()
}

// rungIntoAFullQueue fills q (x-max-length 1, reject-publish), sends a
// message to its 1s rung of kind, and calls expire to let the rung's TTL
// pass: the full q keeps its one message and refuses the one coming home.
func rungIntoAFullQueue(t *testing.T, conn *acemq.Conn, q string, kind contract.RungKind, expire func()) {
	ctx := context.Background()
	tr := conn.Transport()
	ladder, err := retry.NewLadder(q, acemq.Fixed(2, time.Second).WaitInBrokerFrom(time.Second), kind)
	if err != nil {
		t.Fatal(err)
	}
	full := transport.Queue{Name: q, Type: transport.Classic, Durable: true,
		Arguments: transport.Table{"x-max-length": int64(1), "x-overflow": "reject-publish"}}
	if err := tr.DeclareQueue(ctx, full); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, name := range append([]string{q, contract.DeadLetterQueue(q), contract.ParkedQueue(q)}, ladder.Queues()...) {
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
	for queue, want := range map[string]int{rung: 0, q: 1, contract.DeadLetterQueue(q): 0, contract.ParkedQueue(q): 0} {
		if n := depth(t, conn, queue); n != want {
			t.Errorf("%s holds %d messages, want %d", queue, n, want)
		}
	}
	d, ok, err := tr.Get(ctx, q)
	if err != nil || !ok || string(d.Body) != "resident" {
		t.Fatalf("Get from %s: %q, %v, %v; want the resident message", q, d.Body, ok, err)
	}
	_ = d.Ack()
}
