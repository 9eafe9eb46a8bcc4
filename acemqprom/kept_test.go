package acemqprom_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqprom"
	"github.com/acemq-go/acemq/contract"
)

// Every queue's series count its own deliveries, past the number of queues
// whose series are kept (4096) as before it: each delivery of queue i is
// in flight while it runs, then counted once in attempts and handler
// durations of queue i.
func TestEveryQueueCountsItsOwnDeliveries(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := acemqprom.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	const queues = 4100
	ctx := context.Background()
	for round := 1; round <= 2; round++ {
		for i := range queues {
			d := &acemq.DeliveryInfo{Queue: fmt.Sprint("q", i), Attempt: round}
			c := m.DeliveryStart(ctx, d)
			if i == queues-1 && round == 2 {
				if n := inFlight(t, reg, d.Queue); n != 1 {
					t.Fatalf("%s in flight %v, want 1", d.Queue, n)
				}
			}
			m.DeliveryEnd(c, d, acemq.SettleResult{Outcome: contract.Accepted})
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range families {
		for _, s := range f.GetMetric() {
			switch f.GetName() {
			case "acemq_consume_in_flight":
				if s.GetGauge().GetValue() != 0 {
					t.Errorf("%s %v in flight after every settlement", s.GetLabel(), s.GetGauge().GetValue())
				}
			case "acemq_consume_attempts", "acemq_consume_duration_seconds":
				if h := s.GetHistogram(); h.GetSampleCount() != 2 || f.GetName() == "acemq_consume_attempts" && h.GetSampleSum() != 3 {
					t.Errorf("%s %s: %d samples summing %v, want 2 (attempts 1 and 2)", f.GetName(), s.GetLabel(), h.GetSampleCount(), h.GetSampleSum())
				}
			default:
				continue
			}
			seen++
		}
	}
	if seen != 3*queues {
		t.Errorf("%d series of in flight, attempts and durations, want %d", seen, 3*queues)
	}
}

// inFlight is queue's acemq_consume_in_flight, read from reg.
func inFlight(t *testing.T, reg *prometheus.Registry, queue string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "acemq_consume_in_flight" {
			continue
		}
		for _, s := range f.GetMetric() {
			if s.GetLabel()[0].GetValue() == queue {
				return s.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no acemq_consume_in_flight{queue=%q}", queue)
	return 0
}
