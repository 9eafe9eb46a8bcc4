package acemqprom

import (
	"maps"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// maxKept bounds the series kept: queues are a bounded set, but if a
// service's are not, the series past the bound are looked up each time.
const maxKept = 4096

// kept are series that events have used, by a key, in a map copied on
// write: an event finds them with one map read and no lock, where
// WithLabelValues hashes the label values, checks that they are UTF-8 and
// takes the vector's lock, every time. The vectors kept so are never
// deleted from (those of consumers that come and go, paused and the
// breakers' state, are not kept), so a kept series is always its vector's.
type kept[K comparable, M any] struct {
	mu sync.Mutex // serialises the writers
	m  atomic.Pointer[map[K]M]
}

// get is the series kept by key, made by make the first time.
func (k *kept[K, M]) get(key K, make func(K) M) M {
	if m := k.m.Load(); m != nil {
		if s, ok := (*m)[key]; ok {
			return s
		}
	}
	return k.add(key, make)
}

// add makes the series of key, and keeps it.
func (k *kept[K, M]) add(key K, make func(K) M) M {
	s := make(key)
	k.mu.Lock()
	defer k.mu.Unlock()
	old := map[K]M{}
	if m := k.m.Load(); m != nil {
		old = *m
	}
	if len(old) < maxKept {
		m := maps.Clone(old)
		m[key] = s
		k.m.Store(&m)
	}
	return s
}

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
	return m.queues.get(queue, func(q string) *queueSeries {
		return &queueSeries{
			inFlight:         m.inFlight.WithLabelValues(q),
			attempts:         m.attempts.WithLabelValues(q),
			handlerDurations: m.consumeDuration.WithLabelValues(q),
		}
	})
}
