package acemq

import (
	"testing"
	"time"
)

// A retry reads one wait of the schedule (ScheduledWait) rather than
// making the whole schedule: it must be the schedule's wait, every one.
func TestScheduledWaitIsTheSchedulesWait(t *testing.T) {
	for _, p := range []RetryPolicy{
		Exponential(6, 10*sec, minute), Fixed(4, 30*sec), NoRetry(), Fixed(1, minute),
		Exponential(4, sec, 0), Exponential(5, 0, 0), Exponential(4, 700*ms, 2*sec),
		Exponential(100, sec, 0), // saturates
		Exponential(6, sec, minute).WithJitter(0.5),
	} {
		schedule := p.Schedule()
		for i := -1; i <= len(schedule)+1; i++ {
			got, ok := p.ScheduledWait(i)
			var want time.Duration
			inside := i >= 0 && i < len(schedule)
			if inside {
				want = schedule[i]
			}
			if got != want || ok != inside {
				t.Errorf("%v.ScheduledWait(%d) = %v, %v; want %v, %v", p, i, got, ok, want, inside)
			}
		}
	}
	beyond := RetryPolicy{maxAttempts: maxAttemptsLimit + 1, multiplier: 1, initialDelay: sec}
	if d, ok := beyond.ScheduledWait(0); ok {
		t.Errorf("a policy past the attempts limit has a wait %v; its schedule is empty", d)
	}
}
