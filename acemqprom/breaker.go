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

// event keeps the state of a consumer's breaker, one-hot, and counts its
// transitions; a stopped consumer's state is dropped (its transitions stay,
// as a counter's do).
func (m breakerMetrics) event(e acemq.Event) {
	if e.Kind == acemq.EventConsumerStopped {
		gone := prometheus.Labels{contract.PrometheusLabel(contract.TagQueue): e.Queue}
		if e.Consumer != "" {
			gone[contract.PrometheusLabel(contract.TagConsumer)] = e.Consumer
		}
		m.state.DeletePartialMatch(gone)
		return
	}
	if e.Kind != acemq.EventBreakerChanged {
		return
	}
	to := e.Breaker
	m.transitions.WithLabelValues(e.Queue, e.Consumer, string(to)).Inc()
	for _, s := range breakerStates {
		v := 0.0
		if s == to {
			v = 1
		}
		m.state.WithLabelValues(e.Queue, e.Consumer, string(s)).Set(v)
	}
}
