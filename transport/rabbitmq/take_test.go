package rabbitmq

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// A Taker does not recover: once its connection is lost, Next and settling
// what it held fail with ErrStaleDelivery (not ErrClosed: the Transport
// goes on), and the broker has put back everything it held, in place. A
// new Taker on the recovered connection takes it all again.
func TestTakerEndsWithItsConnection(t *testing.T) {
	t.Parallel()
	name := brokertest.UniqueName(t, "conn")
	tr := dial(t, "", Options{ConnectionName: name})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	for _, id := range []string{"a", "b", "c"} {
		publish(t, tr, q, id)
	}
	tk, err := tr.Take(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer tk.Close()
	var held []transport.Delivery
	for range 2 {
		d, ok, err := tk.Next(ctx)
		if err != nil || !ok {
			t.Fatalf("Next: %v, %v", ok, err)
		}
		held = append(held, d)
	}

	brokertest.CloseConnections(t, name)
	eventually(t, ctx, "the second connection", func() bool { return tr.State().Connects == 2 })
	if _, _, err := tk.Next(ctx); !errors.Is(err, transport.ErrStaleDelivery) || errors.Is(err, transport.ErrClosed) {
		t.Errorf("Next after the connection was lost: %v, want ErrStaleDelivery (only)", err)
	}
	if err := held[0].Ack(); !errors.Is(err, transport.ErrStaleDelivery) {
		t.Errorf("Ack of a held delivery after the loss: %v, want ErrStaleDelivery", err)
	}
	if err := held[1].Nack(false); !errors.Is(err, transport.ErrStaleDelivery) {
		t.Errorf("Nack of a held delivery after the loss: %v, want ErrStaleDelivery", err)
	}
	eventually(t, ctx, "the held messages back in the queue", func() bool {
		st, err := tr.InspectQueue(ctx, q)
		return err == nil && st.Messages == 3
	})
	if err := tk.Close(); err != nil {
		t.Errorf("Close after the loss: %v", err)
	}

	again, err := tr.Take(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	var got []string
	for {
		d, ok, err := again.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, string(d.Body))
		if err := d.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("after the loss the queue holds %q, want %q", got, want)
	}
}

// Next with a context already ended takes nothing: the message is still the
// next one.
func TestTakerNextWithAnEndedContext(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	publish(t, tr, q, "a")
	tk, err := tr.Take(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer tk.Close()
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok, err := tk.Next(ended); ok || !errors.Is(err, context.Canceled) {
		t.Errorf("Next with an ended context: %v, %v; want context.Canceled", ok, err)
	}
	d, ok, err := tk.Next(ctx)
	if err != nil || !ok || string(d.Body) != "a" || d.Redelivered {
		t.Fatalf("then Next: %q (redelivered %v), %v, %v; want a, fresh", d.Body, d.Redelivered, ok, err)
	}
	if err := d.Ack(); err != nil {
		t.Fatal(err)
	}
}

// A Taker's channel holds no ack back (ackBatch 1) and the Transport does
// not track it: nothing of it outlives its Close.
func TestTakerChannelIsLetGoOf(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	publish(t, tr, q, "a")
	tk, err := tr.Take(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	cc := tk.(*taker).cc
	if cc.ackBatch != 1 {
		t.Errorf("a Taker's channel holds back %d acks, want 1 (none held)", cc.ackBatch)
	}
	d, ok, err := tk.Next(ctx)
	if err != nil || !ok {
		t.Fatalf("Next: %v, %v", ok, err)
	}
	if err := d.Ack(); err != nil {
		t.Fatal(err)
	}
	if cc.ch.IsClosed() {
		t.Error("the channel closed once everything taken was settled; it stays open until Close")
	}
	if err := tk.Close(); err != nil {
		t.Fatal(err)
	}
	if !cc.ch.IsClosed() {
		t.Error("the channel is open after Close")
	}
	tr.mu.Lock()
	n := len(tr.consumers)
	tr.mu.Unlock()
	if n != 0 {
		t.Errorf("the Transport tracks %d consumer channels, want 0", n)
	}
}
