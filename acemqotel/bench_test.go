package acemqotel

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// One delivery settled and one publish, every span sampled.
func BenchmarkObserve(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(discard{}))
	defer tp.Shutdown(context.Background())
	t, err := New(WithTracerProvider(tp))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			d := &acemq.DeliveryInfo{Queue: "orders", RoutingKey: "orders", MessageID: "m", Attempt: 1,
				Headers: transport.Table{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
			c := t.DeliveryStart(ctx, d)
			p := &acemq.PublishInfo{RoutingKey: "orders", Headers: transport.Table{}}
			pc := t.PublishStart(c, p)
			t.PublishEnd(pc, p, acemq.PublishResult{Outcome: contract.PublishConfirmed, Duration: time.Millisecond})
			t.DeliveryEnd(c, d, acemq.SettleResult{Outcome: contract.Accepted, HandlerDuration: time.Millisecond})
		}
	})
}
