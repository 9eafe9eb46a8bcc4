package harness

import (
	"context"
	"time"
)

// BehindLimit is the generator's send lag (p99) past which a paced run is
// flagged, as the family's workloads tool refuses such a run: its
// latencies then measure the generator too.
const BehindLimit = 100 * time.Millisecond

// plan is an open-loop generator's schedule: message seq is due at start +
// seq/rate, whatever became of the sends before it, so that a slow system
// cannot slow the offered load down and hide its queueing (no coordinated
// omission): a send that cannot keep up shows as lag instead.
type plan struct {
	start time.Time
	rate  float64 // messages a second
}

// newPlan starts a plan now.
func newPlan(rate float64) plan { return planFrom(time.Now(), rate) }

func planFrom(start time.Time, rate float64) plan { return plan{start: start, rate: rate} }

// At is when message seq is due.
func (p plan) At(seq int) time.Time {
	return p.start.Add(time.Duration(float64(seq) * float64(time.Second) / p.rate))
}

// Wait returns once message seq is due, with its due time: at once for an
// overdue one, so that a generator behind its plan catches up; or ctx's
// error if it ends first.
func (p plan) Wait(ctx context.Context, seq int) (time.Time, error) {
	at := p.At(seq)
	wait := time.Until(at)
	if wait <= 0 {
		return at, nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return at, nil
	case <-ctx.Done():
		return at, ctx.Err()
	}
}
