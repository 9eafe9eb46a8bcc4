package acemqotel_test

import (
	"context"
	"maps"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/transport"
)

// A pause, a resume and a rescale of a consumer are each a span of their
// own, "Q pause", "Q resume", "Q rescale" (kind Internal: no message is
// sent), naming the consumer and why or to what.
func TestConsumerControlIsASpan(t *testing.T) {
	tr := newTracing(t)
	conn := acemqtest.NewBroker(t).Connect(t, tr.observer())
	if err := conn.Transport().DeclareQueue(t.Context(), transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	c, err := acemq.Consume(t.Context(), conn, "orders", func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() },
		acemq.WithConsumerID("orders-main"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if err := c.Pause(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Rescale(t.Context(), acemq.Scale{Concurrency: 4, Prefetch: 10}); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans := tr.ended(t, 3)
	want := []struct {
		name  string
		attrs map[string]any
	}{
		{"orders pause", map[string]any{"messaging.system": "rabbitmq", "messaging.destination.name": "orders",
			"messaging.acemq.consumer": "orders-main", "messaging.acemq.pause.cause": "operator"}},
		{"orders rescale", map[string]any{"messaging.system": "rabbitmq", "messaging.destination.name": "orders",
			"messaging.acemq.consumer": "orders-main", "messaging.acemq.concurrency": int64(4), "messaging.acemq.prefetch": int64(10)}},
		{"orders resume", map[string]any{"messaging.system": "rabbitmq", "messaging.destination.name": "orders",
			"messaging.acemq.consumer": "orders-main", "messaging.acemq.pause.cause": "operator"}},
	}
	if len(spans) != len(want) {
		t.Fatalf("spans %s, want %d", names(spans), len(want))
	}
	for i, s := range spans {
		got := map[string]any{}
		for _, kv := range s.Attributes() {
			got[string(kv.Key)] = kv.Value.AsInterface()
		}
		if s.Name() != want[i].name || s.SpanKind() != trace.SpanKindInternal || !maps.Equal(got, want[i].attrs) {
			t.Errorf("span %d: %s %s %v, want %s internal %v", i, s.SpanKind(), s.Name(), got, want[i].name, want[i].attrs)
		}
		if s.Parent().IsValid() {
			t.Errorf("%s has a parent: an operator's action starts a trace", s.Name())
		}
	}
}
