package breaker

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)

// calls records n results of failed at now, stopping at the first
// transition, and returns it with how many were recorded.
func calls(b *Breaker, now time.Time, n int, failed bool) (Transition, int) {
	for i := 1; i <= n; i++ {
		if tr, ok := b.Record(now, failed); ok {
			return tr, i
		}
	}
	return Transition{}, n
}

func TestConsecutiveFailuresTrip(t *testing.T) {
	b := New(Config{ConsecutiveFailures: 5})
	if _, ok := calls(b, t0, 4, true); ok != 4 || b.State() != Closed {
		t.Fatalf("4 failures of 5: %s", b.State())
	}
	b.Record(t0, false) // a success starts the count again
	tr, n := calls(b, t0, 10, true)
	if n != 5 || tr != (Transition{From: Closed, To: Open, Reason: "5 failures in a row"}) {
		t.Fatalf("tripped after %d failures: %+v", n, tr)
	}
}

func TestFailureRatioTripsOnlyAfterTheMinimumCalls(t *testing.T) {
	b := New(Config{FailureRatio: 0.5, Window: time.Minute, MinCalls: 10})
	calls(b, t0, 4, false)
	if tr, n := calls(b, t0, 4, true); n != 4 || b.State() != Closed {
		t.Fatalf("4 of 8 failed, below the minimum of 10: %+v", tr)
	}
	tr, n := calls(b, t0.Add(time.Second), 5, true)
	if n != 2 || tr.To != Open || tr.Reason != "6 of 10 failed in 1m" {
		t.Fatalf("after %d more failures: %+v", n, tr)
	}
}

func TestFailureRatioBelowTheThresholdDoesNotTrip(t *testing.T) {
	b := New(Config{FailureRatio: 0.5, Window: time.Minute, MinCalls: 10})
	for i := range 100 {
		if tr, ok := b.Record(t0.Add(time.Duration(i)*time.Second), i%3 == 0); ok {
			t.Fatalf("a third failing tripped it at call %d: %+v", i, tr)
		}
	}
}

func TestTheWindowForgetsOldCalls(t *testing.T) {
	b := New(Config{FailureRatio: 0.5, Window: time.Minute, MinCalls: 10})
	calls(b, t0, 9, true)
	// A minute later the nine failures are out of the window: nine more
	// and a success are 9 of 10 again, not 18 of 19.
	later := t0.Add(time.Minute)
	calls(b, later, 1, false)
	tr, n := calls(b, later, 9, true)
	if n != 9 || tr.Reason != "9 of 10 failed in 1m" {
		t.Fatalf("after %d failures: %+v", n, tr)
	}
}

func TestAStreamOfSuccessesKeepsTheRatioLow(t *testing.T) {
	b := New(Config{FailureRatio: 0.5, Window: time.Minute, MinCalls: 10})
	calls(b, t0, 100, false)
	if _, n := calls(b, t0.Add(time.Second), 99, true); b.State() != Closed || n != 99 {
		t.Fatalf("99 of 199 failed: %s", b.State())
	}
	if tr, ok := b.Record(t0.Add(time.Second), true); !ok || tr.Reason != "100 of 200 failed in 1m" {
		t.Fatalf("100 of 200: %+v", tr)
	}
}

func TestOpenCountsNothingAndProbesAfterTheCoolDown(t *testing.T) {
	b := New(Config{ConsecutiveFailures: 1})
	b.Record(t0, true)
	if _, n := calls(b, t0, 50, true); n != 50 || b.State() != Open {
		t.Fatalf("open: %s", b.State())
	}
	if _, ok := b.Record(t0, false); ok {
		t.Fatal("a success of a call started before the trip closed it")
	}
	tr, ok := b.CoolDownOver()
	if !ok || tr.From != Open || tr.To != HalfOpen {
		t.Fatalf("cool-down over: %+v", tr)
	}
	if _, ok := b.CoolDownOver(); ok {
		t.Fatal("half-open moved on a second cool-down")
	}
}

func TestAFailedProbeOpensItAgain(t *testing.T) {
	b := New(Config{ConsecutiveFailures: 3})
	calls(b, t0, 3, true)
	b.CoolDownOver()
	tr, ok := b.Record(t0, true)
	if !ok || tr != (Transition{From: HalfOpen, To: Open, Reason: "the probe failed"}) {
		t.Fatalf("a failed probe: %+v", tr)
	}
}

func TestASucceededProbeClosesItWithACleanCount(t *testing.T) {
	b := New(Config{ConsecutiveFailures: 3, FailureRatio: 0.5, Window: time.Minute, MinCalls: 4})
	calls(b, t0, 3, true)
	b.CoolDownOver()
	tr, ok := b.Record(t0, false)
	if !ok || tr != (Transition{From: HalfOpen, To: Closed, Reason: "the probe succeeded"}) {
		t.Fatalf("a successful probe: %+v", tr)
	}
	// The failures before the trip are forgotten: two more do not trip it.
	if _, n := calls(b, t0, 2, true); b.State() != Closed || n != 2 {
		t.Fatalf("closed again: %s", b.State())
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Config{
		{},
		{FailureRatio: 1.5, Window: time.Minute, MinCalls: 1},
		{FailureRatio: 0.5, MinCalls: 1},
		{FailureRatio: 0.5, Window: time.Minute},
		{ConsecutiveFailures: -1},
	} {
		if c.Validate() == nil {
			t.Errorf("%+v: valid", c)
		}
	}
	if err := (Config{ConsecutiveFailures: 1}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestAProbeThatCouldNotStartOpensItAgain(t *testing.T) {
	b := New(Config{ConsecutiveFailures: 1})
	if _, ok := b.ProbeNotStarted("no queue"); ok {
		t.Fatal("a closed breaker moved")
	}
	b.Record(t0, true)
	b.CoolDownOver()
	tr, ok := b.ProbeNotStarted("no queue")
	if !ok || tr != (Transition{From: HalfOpen, To: Open, Reason: "the probe could not start: no queue"}) {
		t.Fatalf("%+v", tr)
	}
}
