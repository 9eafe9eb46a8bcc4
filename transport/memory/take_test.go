package memory_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/acemq-go/acemq/transport"
)

// next takes the next message with tk, which must have body want.
func next(t *testing.T, tk transport.Taker, want string) transport.Delivery {
	t.Helper()
	d, ok, err := tk.Next(ctxOf(t))
	must(t, "Next", err)
	if !ok || string(d.Body) != want {
		t.Fatalf("Next: %q (ok %v), want %q", d.Body, ok, want)
	}
	return d
}

func take(t *testing.T, tr transport.Transport, queue string) transport.Taker {
	t.Helper()
	tk, err := tr.Take(ctxOf(t), queue)
	must(t, "Take", err)
	t.Cleanup(func() { _ = tk.Close() })
	return tk
}

// After a connection exception (the Transport opens the next connection, as
// transport/rabbitmq reconnects) a Taker is over: Next and settling what it
// held fail with ErrStaleDelivery, not ErrClosed, and what it held is back
// in place, even a delivery taken after everything before it was settled
// (the channel is the Taker's until it closes, with nothing on it too).
func TestTakerEndsWithItsConnection(t *testing.T) {
	b, _ := testBroker(t, rabbitMQ310) // 4.0 closes only the channel
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "q"})
	for _, s := range []string{"a", "b", "c", "d"} {
		sendBody(t, tr, "q", s)
	}
	tk := take(t, tr, "q")
	must(t, "Ack a", next(t, tk, "a").Ack())
	held := []transport.Delivery{next(t, tk, "b"), next(t, tk, "c")}

	err := tr.DeclareExchange(ctxOf(t), transport.Exchange{Name: "x", Type: "x-delayed-message"})
	wantReply(t, "declaring an exchange of an unknown type", err, nil, 503, "COMMAND_INVALID - unknown exchange type 'x-delayed-message'")
	if _, _, err := tk.Next(ctxOf(t)); !errors.Is(err, transport.ErrStaleDelivery) || errors.Is(err, transport.ErrClosed) {
		t.Errorf("Next after the connection went: %v, want ErrStaleDelivery (only)", err)
	}
	if err := held[0].Ack(); !errors.Is(err, transport.ErrStaleDelivery) {
		t.Errorf("Ack after the connection went: %v, want ErrStaleDelivery", err)
	}
	if err := held[1].Reject(false); !errors.Is(err, transport.ErrStaleDelivery) {
		t.Errorf("Reject after the connection went: %v, want ErrStaleDelivery", err)
	}
	must(t, "Close after the connection went", tk.Close())
	wantState(t, tr, "q", 3, 0)
	if got, want := drain(t, tr, "q"), []string{"b", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("after the connection went: %q, want %q", got, want)
	}
}

// RabbitMQ's consumer timeout closes a Taker's channel as any other holding
// a delivery too long: what it held is back, and the Taker is over.
func TestTakerConsumerTimeout(t *testing.T) {
	b, clock := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "q"})
	sendBody(t, tr, "q", "a")
	sendBody(t, tr, "q", "b")
	tk := take(t, tr, "q")
	held := next(t, tk, "a")
	clock.Advance(30 * time.Minute)
	wantState(t, tr, "q", 2, 0)
	if _, _, err := tk.Next(ctxOf(t)); !errors.Is(err, transport.ErrStaleDelivery) {
		t.Errorf("Next after the timeout: %v, want ErrStaleDelivery", err)
	}
	if err := held.Ack(); !errors.Is(err, transport.ErrStaleDelivery) {
		t.Errorf("Ack after the timeout: %v, want ErrStaleDelivery", err)
	}
	d := mustGet(t, tr, "q", "a")
	if !d.Redelivered {
		t.Error("a after the timeout is not marked redelivered")
	}
	must(t, "Ack", d.Ack())
}

// A Taker on a quorum queue counts as a consumer for each delivery it holds,
// as RabbitMQ 3.10 counts unsettled basic.gets.
func TestTakerQuorumGetConsumers(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "q", Type: transport.Quorum, Durable: true})
	for _, s := range []string{"a", "b"} {
		sendBody(t, tr, "q", s)
	}
	tk := take(t, tr, "q")
	a, _ := next(t, tk, "a"), next(t, tk, "b")
	wantState(t, tr, "q", 0, 2)
	must(t, "Ack", a.Ack())
	wantState(t, tr, "q", 0, 1)
	must(t, "Close", tk.Close())
	wantState(t, tr, "q", 1, 0)
}
