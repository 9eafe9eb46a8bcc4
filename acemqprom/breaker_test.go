package acemqprom_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqprom"
)

// The breaker's state is one-hot by consumer and each transition counted; a
// stopped consumer's state goes, its transitions stay.
func TestCircuitBreakerMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := acemqprom.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []acemq.BreakerState{acemq.BreakerOpen, acemq.BreakerHalfOpen, acemq.BreakerOpen,
		acemq.BreakerHalfOpen, acemq.BreakerClosed, acemq.BreakerOpen} {
		m.Event(acemq.Event{Kind: acemq.EventBreakerChanged, Queue: "payments", Consumer: "payments", Breaker: s, Reason: "why"})
	}
	m.Event(acemq.Event{Kind: acemq.EventBreakerChanged, Queue: "gone", Consumer: "gone", Breaker: acemq.BreakerOpen})
	m.Event(acemq.Event{Kind: acemq.EventConsumerStopped, Queue: "gone", Consumer: "gone"})
	want := `
# HELP acemq_circuit_breaker_state The state of a consumer's circuit breaker: 1 for the state it is in (closed, open, half-open), 0 for the others; no series before its first transition.
# TYPE acemq_circuit_breaker_state gauge
acemq_circuit_breaker_state{consumer="payments",queue="payments",state="closed"} 0
acemq_circuit_breaker_state{consumer="payments",queue="payments",state="half-open"} 0
acemq_circuit_breaker_state{consumer="payments",queue="payments",state="open"} 1
# HELP acemq_circuit_breaker_transitions_total Transitions of a consumer's circuit breaker, by the state entered (open: it tripped; half-open: probing; closed: the probe succeeded).
# TYPE acemq_circuit_breaker_transitions_total counter
acemq_circuit_breaker_transitions_total{consumer="gone",queue="gone",state="open"} 1
acemq_circuit_breaker_transitions_total{consumer="payments",queue="payments",state="closed"} 1
acemq_circuit_breaker_transitions_total{consumer="payments",queue="payments",state="half-open"} 2
acemq_circuit_breaker_transitions_total{consumer="payments",queue="payments",state="open"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "acemq_circuit_breaker_state", "acemq_circuit_breaker_transitions_total"); err != nil {
		t.Error(err)
	}
}
