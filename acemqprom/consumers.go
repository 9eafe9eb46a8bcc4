package acemqprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// consumerEvent keeps consumer_paused{queue,consumer}: 0 from the
// consumer's start, 1 while it is paused (by an operator or its circuit
// breaker), 0 once it resumes, and no series once it closes. A paused
// consumer is paused, not failing: no alert rule fires for it.
func (m *Metrics) consumerEvent(e acemq.Event) {
	switch e.Kind {
	case acemq.EventConsumerStarted, acemq.EventConsumerResumed:
		m.paused.WithLabelValues(e.Queue, e.Consumer).Set(0)
	case acemq.EventConsumerPaused:
		m.paused.WithLabelValues(e.Queue, e.Consumer).Set(1)
	case acemq.EventConsumerStopped:
		gone := prometheus.Labels{contract.PrometheusLabel(contract.TagQueue): e.Queue}
		if e.Consumer != "" {
			gone[contract.PrometheusLabel(contract.TagConsumer)] = e.Consumer
		}
		m.paused.DeletePartialMatch(gone)
	}
}
