package acemqprom

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/acemq-go/acemq/contract"
)

// OutboxRelay is what WatchOutbox reads of an outbox relay at each scrape;
// *outbox.Relay is one. It is declared here, in plain types, so that a
// Prometheus user who has no outbox links none.
type OutboxRelay interface {
	// Name names the relay: the target of inspect_errors_total when its
	// table cannot be read.
	Name() string
	// Publishes counts the relay's publishes since it was made: published
	// (confirmed and marked) and failed (every failed publish).
	Publishes() (published, failed int64)
	// OldestPending is the age of the oldest unpublished record of the
	// relay's table; 0 when all are published.
	OldestPending(ctx context.Context) (time.Duration, error)
}

// WatchOutbox has the relay's publishes counted in outbox_total and its
// table's lag in outbox_lag_seconds, read at each scrape, for as long as
// the Metrics is used (a relay watched twice is counted once). Watch every
// relay of the process, so that the count is all of theirs. A nil relay is
// an error.
func (m *Metrics) WatchOutbox(r OutboxRelay) error {
	if err := checkRelay(r); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.Contains(m.relays, r) {
		m.relays = append(m.relays, r)
	}
	return nil
}

// checkRelay refuses now what would fail only at a scrape: no relay, a nil
// pointer (a nil *outbox.Relay), or one that cannot be compared to find
// it watched twice.
func checkRelay(r OutboxRelay) error {
	if r == nil {
		return errors.New("acemqprom: WatchOutbox needs a relay, not nil")
	}
	switch v := reflect.ValueOf(r); {
	case v.Kind() == reflect.Pointer && v.IsNil():
		return fmt.Errorf("acemqprom: WatchOutbox needs a relay, not a nil %T", r)
	case !v.Comparable():
		return fmt.Errorf("acemqprom: WatchOutbox needs a relay it can compare (a pointer), not a %T", r)
	}
	return nil
}

// collectOutboxes reports the watched relays' publishes, summed, and the
// oldest unpublished record of their tables. A relay whose lag cannot be
// read is left out of it and counted, as a queue is; a lag none of whose
// relays could be read is not reported.
func (m *Metrics) collectOutboxes(ctx context.Context, ch chan<- prometheus.Metric) {
	m.mu.Lock()
	relays := slices.Clone(m.relays)
	m.mu.Unlock()
	if len(relays) == 0 {
		return
	}
	var published, failed int64
	var oldest time.Duration
	read := false
	for _, r := range relays {
		p, f := r.Publishes()
		published += p
		failed += f
		lag, err := r.OldestPending(ctx)
		if err != nil {
			m.inspectFails.WithLabelValues("", r.Name()).Inc()
			continue
		}
		oldest, read = max(oldest, lag), true
	}
	ch <- prometheus.MustNewConstMetric(m.outboxDesc, prometheus.CounterValue, float64(published), string(contract.TelemetryPublished))
	ch <- prometheus.MustNewConstMetric(m.outboxDesc, prometheus.CounterValue, float64(failed), string(contract.TelemetryFailed))
	if read {
		ch <- prometheus.MustNewConstMetric(m.lagDesc, prometheus.GaugeValue, oldest.Seconds())
	}
}
