package acemqprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// breakerStates are the states of a consumer's circuit breaker.
var breakerStates = []acemq.BreakerState{acemq.BreakerClosed, acemq.BreakerOpen, acemq.BreakerHalfOpen}

// breakerMetrics are the circuit breakers' (acemq.WithCircuitBreaker).
type breakerMetrics struct {
	state       *prometheus.GaugeVec
	transitions *prometheus.CounterVec
}

func newBreakerMetrics(b builder) breakerMetrics {
	return breakerMetrics{state: b.gauge(contract.MetricCircuitBreakerState), transitions: b.counter(contract.MetricCircuitBreakerTransitions)}
}

// event keeps the state of the breaker of e.Queue's consumer, one-hot, and
// counts its transitions; a stopped consumer's state is dropped.
func (m breakerMetrics) event(e acemq.Event) {
	if e.Kind == acemq.EventConsumerStopped {
		m.state.DeletePartialMatch(prometheus.Labels{contract.PrometheusLabel(contract.TagQueue): e.Queue})
		return
	}
	if e.Kind != acemq.EventBreakerChanged {
		return
	}
	to := e.Breaker
	m.transitions.WithLabelValues(e.Queue, string(to)).Inc()
	for _, s := range breakerStates {
		v := 0.0
		if s == to {
			v = 1
		}
		m.state.WithLabelValues(e.Queue, string(s)).Set(v)
	}
}
