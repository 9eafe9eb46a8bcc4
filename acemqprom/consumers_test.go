package acemqprom_test

import (
	"context"
	"testing"

	"github.com/acemq-go/acemq"
)

// acemq_consumer_paused is 0 from a consumer's start, 1 while it is
// paused, 0 again once it resumes, and gone once it closes; each consumer
// of a queue has its own series, by its id.
func TestConsumerPausedOnMemory(t *testing.T) {
	reg, _, conn := ordersOnMemory(t)
	accept := func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() }
	a, err := acemq.Consume(t.Context(), conn, "orders", accept)
	if err != nil {
		t.Fatal(err)
	}
	b, err := acemq.Consume(t.Context(), conn, "orders", accept, acemq.WithConsumerID("orders-audit"))
	if err != nil {
		t.Fatal(err)
	}
	paused := func(id string) string { return series("consumer_paused", "queue", "orders", "consumer", id) }
	eventually(t, reg, "both running", including(map[string]float64{paused("orders"): 0, paused("orders-audit"): 0}))

	if err := a.Pause(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, reg, "orders paused", including(map[string]float64{paused("orders"): 1, paused("orders-audit"): 0}))
	if err := a.Resume(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, reg, "orders resumed", including(map[string]float64{paused("orders"): 0, paused("orders-audit"): 0}))

	if err := b.Pause(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := eventually(t, reg, "orders-audit closed", including(map[string]float64{paused("orders"): 0}))
	if v, ok := got[paused("orders-audit")]; ok {
		t.Errorf("a closed consumer's series is still there (%v)", v)
	}
	if _, err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
