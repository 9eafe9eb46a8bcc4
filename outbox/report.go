package outbox

import (
	"context"
	"time"
)

// What a relay reports in plain types, so that an adapter (acemqprom's
// WatchOutbox) reads it through an interface of its own and links no
// outbox.

// Publishes counts the relay's publishes since it was made: published,
// confirmed and marked; failed, every failed publish, counted towards the
// record's attempts or not (the broker never answered).
func (r *Relay) Publishes() (published, failed int64) {
	s := r.Stats()
	return s.Published, s.Failed + s.Unanswered
}

// OldestPending is the age of the oldest unpublished record of the relay's
// table, given up or not (Lag.Oldest); 0 when every record is published.
func (r *Relay) OldestPending(ctx context.Context) (time.Duration, error) {
	lag, err := r.Lag(ctx)
	return lag.Oldest, err
}
