// Package breaker is a circuit breaker's state machine, without timers or
// goroutines: its caller says what time it is and when the cool-down is
// over, so that its tests run on a clock moved by hand.
package breaker

import (
	"errors"
	"fmt"
	"time"

	"github.com/acemq-go/acemq/contract"
)

// State is where a breaker stands.
type State string

const (
	// Closed: calls go through, their results counted.
	Closed State = "closed"
	// Open: tripped; no calls until the cool-down is over.
	Open State = "open"
	// HalfOpen: the cool-down is over; the next result decides.
	HalfOpen State = "half-open"
)

// Config says when a breaker trips. At least one of FailureRatio and
// ConsecutiveFailures is set.
type Config struct {
	// FailureRatio trips the breaker when at least this share of the calls
	// of the last Window failed, once there were MinCalls of them; 0: off.
	FailureRatio float64
	Window       time.Duration
	MinCalls     int
	// ConsecutiveFailures trips it after this many failures in a row; 0: off.
	ConsecutiveFailures int
}

// Validate says what is wrong with c, if anything.
func (c Config) Validate() error {
	switch {
	case c.FailureRatio < 0 || c.FailureRatio > 1:
		return fmt.Errorf("the failure ratio %v is not between 0 and 1", c.FailureRatio)
	case c.ConsecutiveFailures < 0:
		return fmt.Errorf("the consecutive failures %d are negative", c.ConsecutiveFailures)
	case c.FailureRatio == 0 && c.ConsecutiveFailures == 0:
		return errors.New("neither a failure ratio nor consecutive failures trip it")
	case c.FailureRatio > 0 && c.Window <= 0:
		return fmt.Errorf("the window %v is not positive", c.Window)
	case c.FailureRatio > 0 && c.MinCalls < 1:
		return fmt.Errorf("the minimum calls %d are fewer than 1", c.MinCalls)
	}
	return nil
}

// Transition is a change of state and why.
type Transition struct {
	From, To State
	Reason   string
}

// buckets the window is counted in: a call leaves the count up to a tenth
// of the window late, and memory stays the same at any rate.
const buckets = 10

type bucket struct {
	start           time.Time
	calls, failures int
}

// Breaker is one breaker's state; not safe for concurrent use.
type Breaker struct {
	cfg         Config
	state       State
	window      [buckets]bucket
	consecutive int
}

// New is a closed breaker; cfg must be valid.
func New(cfg Config) *Breaker { return &Breaker{cfg: cfg, state: Closed} }

// State is where the breaker stands.
func (b *Breaker) State() State { return b.state }

// Record counts a call's result at now and says what it changed: closed,
// it may trip; half-open, a success closes it and a failure opens it again.
// An open breaker counts nothing (results of calls started before it
// tripped).
func (b *Breaker) Record(now time.Time, failed bool) (Transition, bool) {
	switch b.state {
	case Open:
		return Transition{}, false
	case HalfOpen:
		if failed {
			return b.move(Open, "the probe failed"), true
		}
		b.reset()
		return b.move(Closed, "the probe succeeded"), true
	}
	if !failed {
		b.consecutive = 0
	} else {
		b.consecutive++
	}
	calls, failures := b.count(now, failed)
	if n := b.cfg.ConsecutiveFailures; n > 0 && b.consecutive >= n {
		b.reset()
		return b.move(Open, fmt.Sprintf("%d failures in a row", n)), true
	}
	if r := b.cfg.FailureRatio; r > 0 && calls >= b.cfg.MinCalls && float64(failures) >= r*float64(calls) {
		b.reset()
		return b.move(Open, fmt.Sprintf("%d of %d failed in %s", failures, calls, contract.FormatDuration(b.cfg.Window))), true
	}
	return Transition{}, false
}

// CoolDownOver moves an open breaker to half-open, to probe.
func (b *Breaker) CoolDownOver() (Transition, bool) {
	if b.state != Open {
		return Transition{}, false
	}
	return b.move(HalfOpen, "the cool-down is over; probing with one message"), true
}

// ProbeNotStarted opens a half-open breaker again: its probe could not
// start (the consumer could not subscribe), so that it tries again after
// another cool-down rather than stay half-open with nothing to probe.
func (b *Breaker) ProbeNotStarted(why string) (Transition, bool) {
	if b.state != HalfOpen {
		return Transition{}, false
	}
	return b.move(Open, "the probe could not start: "+why), true
}

// count adds the call to the window and returns the window's totals.
func (b *Breaker) count(now time.Time, failed bool) (calls, failures int) {
	if b.cfg.FailureRatio == 0 {
		return 0, 0
	}
	width := b.cfg.Window / buckets
	if width <= 0 {
		width = 1
	}
	start := now.Truncate(width)
	i := (start.UnixNano() / int64(width)) % buckets
	cur := &b.window[(i+buckets)%buckets] // before 1970, i is negative
	if !cur.start.Equal(start) {
		*cur = bucket{start: start}
	}
	cur.calls++
	if failed {
		cur.failures++
	}
	for _, w := range b.window {
		if !w.start.IsZero() && now.Sub(w.start) < b.cfg.Window {
			calls, failures = calls+w.calls, failures+w.failures
		}
	}
	return calls, failures
}

func (b *Breaker) reset() {
	b.window, b.consecutive = [buckets]bucket{}, 0
}

func (b *Breaker) move(to State, reason string) Transition {
	t := Transition{From: b.state, To: to, Reason: reason}
	b.state = to
	return t
}
