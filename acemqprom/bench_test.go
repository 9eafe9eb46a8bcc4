package acemqprom

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// benchMetrics runs body on Metrics of a registry of their own.
func benchMetrics(b *testing.B, body func(m *Metrics)) {
	m, err := New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	body(m)
}

// One delivery settled and one publish, as the observer sees them.
func BenchmarkObserve(b *testing.B) {
	benchMetrics(b, func(m *Metrics) {
		ctx := context.Background()
		d := &acemq.DeliveryInfo{Queue: "orders", MessageID: "m", Attempt: 1}
		p := &acemq.PublishInfo{RoutingKey: "orders"}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c := m.DeliveryStart(ctx, d)
				m.DeliveryEnd(c, d, acemq.SettleResult{Outcome: contract.Accepted, HandlerDuration: time.Millisecond})
				c = m.PublishStart(ctx, p)
				m.PublishEnd(c, p, acemq.PublishResult{Outcome: contract.PublishConfirmed, Duration: time.Millisecond})
			}
		})
	})
}

// An application's publish, confirmed.
func BenchmarkPublish(b *testing.B) {
	benchMetrics(b, func(m *Metrics) {
		ctx := context.Background()
		p := &acemq.PublishInfo{RoutingKey: "orders", Type: "order.placed"}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c := m.PublishStart(ctx, p)
				m.PublishEnd(c, p, acemq.PublishResult{Outcome: contract.PublishConfirmed, Duration: time.Millisecond})
			}
		})
	})
}

// A delivery acked.
func BenchmarkDelivery(b *testing.B) {
	benchMetrics(b, func(m *Metrics) {
		ctx := context.Background()
		d := &acemq.DeliveryInfo{Queue: "orders", MessageID: "m", Type: "order.placed", Attempt: 1}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c := m.DeliveryStart(ctx, d)
				m.DeliveryEnd(c, d, acemq.SettleResult{Outcome: contract.Accepted, HandlerDuration: time.Millisecond})
			}
		})
	})
}

// A delivery retried in the consumer: its wait, its republish and its
// settlement.
func BenchmarkRetry(b *testing.B) {
	benchMetrics(b, func(m *Metrics) {
		ctx := context.Background()
		d := &acemq.DeliveryInfo{Queue: "orders", MessageID: "m", Type: "order.placed", Attempt: 1}
		p := &acemq.PublishInfo{RoutingKey: "orders", Type: "order.placed", Republish: true, RepublishKind: contract.RepublishRetry}
		wait := acemq.Event{Kind: acemq.EventWaitStarted, Queue: "orders", Class: contract.ReasonRetry, Delay: 10 * time.Millisecond}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c := m.DeliveryStart(ctx, d)
				w := wait
				m.Event(w)
				w.Kind = acemq.EventWaitEnded
				m.Event(w)
				pc := m.PublishStart(c, p)
				m.PublishEnd(pc, p, acemq.PublishResult{Outcome: contract.PublishConfirmed, Duration: time.Millisecond})
				m.DeliveryEnd(c, d, acemq.SettleResult{Outcome: contract.RetriedInConsumer, ReasonClass: contract.ReasonRetry,
					Attempt: 2, Delay: 10 * time.Millisecond, HandlerDuration: time.Millisecond})
			}
		})
	})
}

// A request answered.
func BenchmarkRequest(b *testing.B) {
	benchMetrics(b, func(m *Metrics) {
		ctx := context.Background()
		r := &acemq.RequestInfo{RoutingKey: "prices", CorrelationID: "c", Type: "price.asked"}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c := m.RequestStart(ctx, r)
				m.RequestEnd(c, r, acemq.RequestResult{Outcome: contract.TelemetryAnswered, Duration: time.Millisecond})
			}
		})
	})
}
