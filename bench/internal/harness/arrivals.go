package harness

import (
	"context"
	"sync/atomic"
	"time"
)

// DrainGrace is how long an open-loop run waits for its last messages once
// every one was sent and confirmed; one still missing then is counted
// missing (its row is flagged), not waited for.
const DrainGrace = 10 * time.Second

// arrivals records an open-loop run of n messages offered at rate a second:
// each one's send lag (how far behind the plan its send started) and its
// latency (its handler's start against the plan's due time, not the
// send's), each message once. sent and handled may be called from many
// goroutines at once, each for its own message.
type arrivals struct {
	rate  float64
	plan  plan
	begun chan struct{} // closed once plan is set
	now   func() time.Time
	late  []time.Duration
	lag   []time.Duration
	// arrived and wasSent say which entries of late and lag are set.
	arrived, wasSent []atomic.Bool
	left             *countdown
}

func newArrivals(rate float64, n int) *arrivals {
	return &arrivals{rate: rate, begun: make(chan struct{}), now: time.Now, late: make([]time.Duration, n), lag: make([]time.Duration, n),
		arrived: make([]atomic.Bool, n), wasSent: make([]atomic.Bool, n), left: newCountdown(n)}
}

// n is how many messages the run offers.
func (a *arrivals) n() int { return len(a.late) }

// begin starts the plan, once the consumer is ready: its start-up is not
// the messages' latency.
func (a *arrivals) begin() plan {
	a.plan = planFrom(a.now(), a.rate)
	close(a.begun)
	return a.plan
}

// sent notes that message seq's send starts now.
func (a *arrivals) sent(seq int) {
	a.lag[seq] = a.now().Sub(a.plan.At(seq))
	a.wasSent[seq].Store(true)
}

// handled notes that a handler got message seq now; a redelivery, or a
// message not of this run, is not counted.
func (a *arrivals) handled(seq int) {
	now := a.now()
	<-a.begun // a message arrives only after the plan began
	if seq < 0 || seq >= a.n() || a.arrived[seq].Swap(true) {
		return
	}
	a.late[seq] = now.Sub(a.plan.At(seq))
	a.left.Tick()
}

// wait returns once every message arrived, or DrainGrace after it was
// called (the missing ones are the run's flag, not an error), or with the
// first error from failed, or ctx's.
func (a *arrivals) wait(ctx context.Context, failed <-chan error) error {
	drain, cancel := context.WithTimeout(ctx, DrainGrace)
	defer cancel()
	err := a.left.Wait(drain, failed)
	if err != nil && drain.Err() != nil && ctx.Err() == nil {
		return nil
	}
	return err
}

// missing is how many messages have not arrived.
func (a *arrivals) missing() int { return int(a.left.left.Load()) }

// results are the latencies of the messages that arrived and the send
// lags of those sent, in message order; call it once the consumer and the
// publisher stopped.
func (a *arrivals) results() (late, lag []time.Duration) {
	for seq := range a.n() {
		if a.arrived[seq].Load() {
			late = append(late, a.late[seq])
		}
		if a.wasSent[seq].Load() {
			lag = append(lag, a.lag[seq])
		}
	}
	return late, lag
}
