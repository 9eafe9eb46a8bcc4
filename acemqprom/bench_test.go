package acemqprom

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// One delivery settled and one publish, as the observer sees them.
func BenchmarkObserve(b *testing.B) {
	m, err := New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	d := &acemq.DeliveryInfo{Queue: "orders", MessageID: "m", Attempt: 1}
	p := &acemq.PublishInfo{RoutingKey: "orders"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c := m.DeliveryStart(ctx, d)
			m.DeliveryEnd(c, d, acemq.SettleResult{Outcome: contract.Accepted, HandlerDuration: time.Millisecond})
			c = m.PublishStart(ctx, p)
			m.PublishEnd(c, p, acemq.PublishResult{Outcome: contract.PublishConfirmed, Duration: time.Millisecond})
		}
	})
}
