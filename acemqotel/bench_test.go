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

// traceparent is a sampled producer's context, as a delivery carries it.
const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// samplers are the two a service runs: every span kept (into a batching
// processor whose exporter drops them: exporting is the collector's cost),
// and every span dropped (a ratio sampler's 0, ParentBased's answer to an
// unsampled parent), where the adapter's own work is what remains.
var samplers = []struct {
	name    string
	sampler sdktrace.Sampler
}{
	{"sampled", sdktrace.AlwaysSample()},
	{"unsampled", sdktrace.NeverSample()},
}

// benchTracer runs body under each sampler with a Tracer of its own.
func benchTracer(b *testing.B, body func(b *testing.B, t *Tracer)) {
	for _, s := range samplers {
		b.Run(s.name, func(b *testing.B) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(s.sampler), sdktrace.WithBatcher(discard{}))
			defer tp.Shutdown(context.Background())
			t, err := New(WithTracerProvider(tp))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			body(b, t)
		})
	}
}

// One delivery settled and one publish in its context (a handler that
// publishes), as the observer sees them.
func BenchmarkObserve(b *testing.B) {
	benchTracer(b, func(b *testing.B, t *Tracer) {
		ctx := context.Background()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				d := &acemq.DeliveryInfo{Queue: "orders", RoutingKey: "orders", MessageID: "m", Attempt: 1,
					Headers: transport.Table{"traceparent": traceparent}}
				c := t.DeliveryStart(ctx, d)
				p := &acemq.PublishInfo{RoutingKey: "orders", Headers: transport.Table{}}
				pc := t.PublishStart(c, p)
				t.PublishEnd(pc, p, acemq.PublishResult{Outcome: contract.PublishConfirmed, Duration: time.Millisecond})
				t.DeliveryEnd(c, d, acemq.SettleResult{Outcome: contract.Accepted, HandlerDuration: time.Millisecond})
			}
		})
	})
}

// An application's publish, confirmed: PublishStart and PublishEnd.
func BenchmarkPublish(b *testing.B) {
	benchTracer(b, func(b *testing.B, t *Tracer) {
		ctx := context.Background()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p := &acemq.PublishInfo{RoutingKey: "orders", MessageID: "m", Type: "order.placed", Headers: transport.Table{}}
				c := t.PublishStart(ctx, p)
				t.PublishEnd(c, p, acemq.PublishResult{Outcome: contract.PublishConfirmed, Duration: time.Millisecond})
			}
		})
	})
}

// A delivery acked: DeliveryStart (its parent in its headers) and
// DeliveryEnd.
func BenchmarkDelivery(b *testing.B) {
	benchTracer(b, func(b *testing.B, t *Tracer) {
		ctx := context.Background()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				d := &acemq.DeliveryInfo{Queue: "orders", RoutingKey: "orders", MessageID: "m", Type: "order.placed", Attempt: 1, BodySize: 256,
					Headers: transport.Table{"traceparent": traceparent}}
				c := t.DeliveryStart(ctx, d)
				t.DeliveryEnd(c, d, acemq.SettleResult{Outcome: contract.Accepted, HandlerDuration: time.Millisecond})
			}
		})
	})
}

// A delivery retried in the consumer: its span, and the republish's in
// its context, which replaces the delivery's trace context.
func BenchmarkRetry(b *testing.B) {
	benchTracer(b, func(b *testing.B, t *Tracer) {
		ctx := context.Background()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				h := transport.Table{"traceparent": traceparent}
				d := &acemq.DeliveryInfo{Queue: "orders", RoutingKey: "orders", MessageID: "m", Type: "order.placed", Attempt: 1, BodySize: 256, Headers: h}
				c := t.DeliveryStart(ctx, d)
				p := &acemq.PublishInfo{RoutingKey: "orders", MessageID: "m", Type: "order.placed", Headers: h,
					Republish: true, RepublishKind: contract.RepublishRetry}
				pc := t.PublishStart(c, p)
				t.PublishEnd(pc, p, acemq.PublishResult{Outcome: contract.PublishConfirmed, Duration: time.Millisecond})
				t.DeliveryEnd(c, d, acemq.SettleResult{Outcome: contract.RetriedInConsumer, ReasonClass: contract.ReasonRetry,
					Reason: "boom", Attempt: 2, Delay: 10 * time.Millisecond, HandlerDuration: time.Millisecond})
			}
		})
	})
}

// A request answered: RequestStart and RequestEnd (its publish is
// BenchmarkPublish's).
func BenchmarkRequest(b *testing.B) {
	benchTracer(b, func(b *testing.B, t *Tracer) {
		ctx := context.Background()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r := &acemq.RequestInfo{RoutingKey: "prices", CorrelationID: "c", Type: "price.asked"}
				c := t.RequestStart(ctx, r)
				t.RequestEnd(c, r, acemq.RequestResult{Outcome: contract.TelemetryAnswered, Duration: time.Millisecond})
			}
		})
	})
}
