package schedule

import (
	"slices"
	"testing"
	"time"
)

// path is every rung a message waiting d goes through, the routing rule
// applied again at each arrival in the due queue, as the forwarder does.
func path(d time.Duration) []time.Duration {
	var rungs []time.Duration
	for {
		rung, ok := rungFor(d)
		if !ok {
			return rungs
		}
		rungs = append(rungs, rung)
		d -= rung
	}
}

// The routing rule of CONTRACT.md section 12: the longest rung not longer
// than what remains; under a second (or past), deliver. A rung longer than
// what remains by up to hopSlack (the milliseconds hops take) still counts.
func TestRoutingRule(t *testing.T) {
	h, m, s := time.Hour, time.Minute, time.Second
	for _, c := range []struct {
		remaining time.Duration
		want      []time.Duration
	}{
		{4 * h, []time.Duration{h, h, h, h}},
		{90 * s, []time.Duration{m, 10 * s, 10 * s, 10 * s}},
		{999 * time.Millisecond, nil},
		{0, nil},
		{-5 * m, nil},
		{s, []time.Duration{s}},
		{1500 * time.Millisecond, []time.Duration{s}},
		{9*s + 400*time.Millisecond, []time.Duration{s, s, s, s, s, s, s, s, s}},
		{9*s + 500*time.Millisecond, []time.Duration{10 * s}},
		{9*s + 990*time.Millisecond, []time.Duration{10 * s}},
		{10 * s, []time.Duration{10 * s}},
		{990 * time.Millisecond, nil},
		{90*s - 3*time.Millisecond, []time.Duration{m, 10 * s, 10 * s, 10 * s}},
		{4*h - 20*time.Millisecond, []time.Duration{h, h, h, h}},
		{4*h - 400*time.Millisecond, []time.Duration{h, h, h, h}},
		{59 * m, []time.Duration{10 * m, 10 * m, 10 * m, 10 * m, 10 * m, m, m, m, m, m, m, m, m, m}},
		{h + 10*m + m + 10*s + s, []time.Duration{h, 10 * m, m, 10 * s, s}},
		{25 * h, slices.Repeat([]time.Duration{h}, 25)},
	} {
		if got := path(c.remaining); !slices.Equal(got, c.want) {
			t.Errorf("%v remaining goes through %v, want %v", c.remaining, got, c.want)
		}
	}
}
