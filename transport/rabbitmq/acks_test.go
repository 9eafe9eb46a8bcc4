package rabbitmq

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// Acks are held back and sent together, those below every open delivery as
// one multiple ack; these tests check that holding them back never loses
// one, never acks an open delivery, never holds up the prefetch, and never
// outlives the channel or the Transport.

// With the prefetch full and every delivery but the first acked, the broker
// must still deliver more: acks behind an open delivery go out one by one.
func TestAcksBehindAnOpenDeliveryGoOut(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	for i := range 30 {
		publish(t, tr, q, fmt.Sprint(i))
	}
	s, err := tr.Consume(ctx, q, transport.ConsumeOptions{Prefetch: 10})
	if err != nil {
		t.Fatal(err)
	}
	first := receive(t, ctx, s) // held open, as in a consumer wait
	for range 9 {
		if err := receive(t, ctx, s).Ack(); err != nil {
			t.Fatal(err)
		}
	}
	if d := receive(t, ctx, s); string(d.Body) != "10" {
		t.Errorf("after 9 acks behind an open delivery got %q, want the 11th message", d.Body)
	}
	if err := first.Ack(); err != nil {
		t.Fatal(err)
	}
}

// Deliveries settled out of order, as several handlers settle them, with
// nacks among the acks and one delivery open until the end: every
// settlement succeeds (a multiple ack over the open one would make its own
// ack fail, and close the channel: 406 unknown delivery tag), and nothing
// acked comes back.
func TestAcksOutOfOrder(t *testing.T) {
	t.Parallel()
	url := brokertest.URL(t)
	tr := dial(t, url, Options{})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	const n = 60
	for i := range n {
		publish(t, tr, q, fmt.Sprint(i))
	}
	s, err := tr.Consume(ctx, q, transport.ConsumeOptions{Prefetch: 100}) // acks held: 25
	if err != nil {
		t.Fatal(err)
	}
	ds := make([]transport.Delivery, n)
	for i := range ds {
		ds[i] = receive(t, ctx, s)
	}
	open := ds[5]
	order := rand.New(rand.NewPCG(1, 2)).Perm(n)
	for _, i := range order {
		switch {
		case i == 5:
			continue
		case i%10 == 7:
			err = ds[i].Reject(false) // dropped: no dead-letter target
		default:
			err = ds[i].Ack()
		}
		if err != nil {
			t.Fatalf("settling delivery %d: %v", i, err)
		}
	}
	if err := open.Ack(); err != nil {
		t.Fatalf("the delivery left open to the end: %v", err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	other := dial(t, url, Options{})
	if st, err := other.InspectQueue(ctx, q); err != nil || st.Messages != 0 {
		t.Errorf("%s after settling all: %+v, %v; want it empty", q, st, err)
	}
}

// A held ack is sent after a moment even when no other comes: with the
// prefetch full, the next delivery arrives only once it is.
func TestAHeldAckIsSentByItself(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	for i := range 9 {
		publish(t, tr, q, fmt.Sprint(i))
	}
	s, err := tr.Consume(ctx, q, transport.ConsumeOptions{Prefetch: 8}) // acks held: 2
	if err != nil {
		t.Fatal(err)
	}
	var got []transport.Delivery
	for range 8 {
		got = append(got, receive(t, ctx, s))
	}
	if err := got[0].Ack(); err != nil { // held: the batch of 2 is not full
		t.Fatal(err)
	}
	if d := receive(t, ctx, s); string(d.Body) != "8" {
		t.Errorf("got %q, want the 9th message once the held ack went out", d.Body)
	}
}

// Acks held at Close are sent before the connection closes: nothing acked
// comes back.
func TestCloseSendsTheHeldAcks(t *testing.T) {
	t.Parallel()
	url := brokertest.URL(t)
	tr := dial(t, url, Options{})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	other := dial(t, url, Options{})
	for i := range 5 {
		publish(t, other, q, fmt.Sprint(i))
	}
	s, err := tr.Consume(ctx, q, transport.ConsumeOptions{Prefetch: 100}) // acks held: 25
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := receive(t, ctx, s).Ack(); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := other.InspectQueue(ctx, q); err != nil || st.Messages != 0 {
		t.Errorf("%s after Close: %+v, %v; want the 5 acked messages gone", q, st, err)
	}
}

// A channel lost with deliveries open is let go of once they are settled
// (stale): the Transport keeps no reference to it.
func TestALostChannelIsLetGoOf(t *testing.T) {
	t.Parallel()
	name := brokertest.UniqueName(t, "conn")
	tr := dial(t, "", Options{ConnectionName: name})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	publish(t, tr, q, "m")
	s, err := tr.Consume(ctx, q, transport.ConsumeOptions{Prefetch: 10})
	if err != nil {
		t.Fatal(err)
	}
	d := receive(t, ctx, s)
	brokertest.CloseConnections(t, name)
	again := receive(t, ctx, s) // redelivered on the new channel
	if err := d.Ack(); err == nil {
		t.Fatal("Ack on the lost channel succeeded")
	}
	if err := again.Ack(); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	n := len(tr.consumers)
	tr.mu.Unlock()
	if n != 1 {
		t.Errorf("the Transport tracks %d consumer channels, want 1 (the live one)", n)
	}
}
