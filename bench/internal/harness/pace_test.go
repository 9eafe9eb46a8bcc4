package harness

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Each message is due at the plan's start + seq/rate, whenever the sends
// before it went out: the schedule, not the sends, says when.
func TestPlanDueTimesFollowTheSchedule(t *testing.T) {
	start := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	p := planFrom(start, 4000)
	for seq, want := range map[int]time.Time{
		0:     start,
		1:     start.Add(250 * time.Microsecond),
		4000:  start.Add(time.Second),
		10001: start.Add(2500*time.Millisecond + 250*time.Microsecond),
	} {
		if got := p.At(seq); !got.Equal(want) {
			t.Errorf("At(%d) = %v, want %v", seq, got, want)
		}
	}
}

// A generator behind its plan sends the overdue messages at once (it
// catches up rather than stretching the schedule), and one ahead of it
// waits, but no longer than its context.
func TestPlanWaitCatchesUpAndStopsWithItsContext(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	past := planFrom(time.Now().Add(-time.Hour), 1000)
	for _, seq := range []int{0, 1000, 3_599_999} {
		if at, err := past.Wait(ended, seq); err != nil || !at.Equal(past.At(seq)) {
			t.Errorf("Wait(%d) of an overdue message = %v, %v; want its due time at once", seq, at, err)
		}
	}
	future := planFrom(time.Now().Add(time.Hour), 1000)
	if _, err := future.Wait(ended, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait for a message due in an hour with an ended context = %v, want context.Canceled", err)
	}
}
