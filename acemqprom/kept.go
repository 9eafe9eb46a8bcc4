package acemqprom

import (
	"github.com/prometheus/client_golang/prometheus"
)

// maxKept bounds the queues whose series are kept (internal/kept): an
// event finds them with one map read and no lock, where WithLabelValues
// hashes the label values, checks that they are UTF-8 and takes the
// vector's lock, every time. The vectors kept so are never deleted from
// (those of consumers that come and go, paused and the breakers' state,
// are not kept), so a kept series is always its vector's.
const maxKept = 4096

// queueSeries are the series of a consumed queue that have no label but
// the queue: one lookup finds them for every delivery, where their
// WithLabelValues were four. (The series with a label per message, type
// and outcome, gain nothing from being kept: a map keyed by their values
// costs what WithLabelValues does.)
type queueSeries struct {
	inFlight         prometheus.Gauge
	attempts         prometheus.Observer
	handlerDurations prometheus.Observer
}

// queue is the queueSeries of queue.
func (m *Metrics) queue(queue string) *queueSeries {
	return m.queues.Get(queue, func(q string) *queueSeries {
		return &queueSeries{
			inFlight:         m.inFlight.WithLabelValues(q),
			attempts:         m.attempts.WithLabelValues(q),
			handlerDurations: m.consumeDuration.WithLabelValues(q),
		}
	})
}
