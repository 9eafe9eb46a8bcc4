package harness

import (
	"slices"
	"testing"
	"time"
)

// A message's latency counts from when the plan had it due, not from when
// it was sent: a send held back by a slow system does not hide its wait.
// A redelivered message counts once, and the run's latencies are those of
// the messages that arrived.
func TestArrivalsCountFromTheDueTimeOnce(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	now := t0
	a := newArrivals(1000, 4)
	a.now = func() time.Time { return now }
	a.begin()

	now = t0.Add(30 * time.Millisecond) // message 1 was due at 1ms: 29ms late to send
	a.sent(1)
	now = t0.Add(35 * time.Millisecond)
	a.handled(1)
	a.handled(1) // redelivered
	now = t0.Add(40 * time.Millisecond)
	a.sent(0)
	now = t0.Add(42 * time.Millisecond)
	a.handled(0)
	a.handled(7) // not one of the run's

	late, lag := a.results()
	if want := []time.Duration{42 * time.Millisecond, 34 * time.Millisecond}; !slices.Equal(late, want) {
		t.Errorf("latencies %v, want %v (from each one's due time, once)", late, want)
	}
	if want := []time.Duration{40 * time.Millisecond, 29 * time.Millisecond}; !slices.Equal(lag, want) {
		t.Errorf("send lags %v, want %v", lag, want)
	}
	if got := a.missing(); got != 2 {
		t.Errorf("missing %d, want 2", got)
	}
}
