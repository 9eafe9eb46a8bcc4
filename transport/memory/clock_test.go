package memory_test

import (
	"slices"
	"testing"
	"time"

	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// The broker's clock is the one acemq.WithClock takes.
var (
	_ transport.Clock = memory.SystemClock
	_ transport.Clock = (*memory.ManualClock)(nil)
	_ memory.Clock    = transport.SystemClock
)

var epoch = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)

func TestManualClockRunsCallbacksInTimeOrder(t *testing.T) {
	c := memory.NewManualClock(epoch)
	var ran []string
	at := map[string]time.Time{}
	schedule := func(name string, d time.Duration) func() bool {
		return c.AfterFunc(d, func() {
			ran = append(ran, name)
			at[name] = c.Now()
		})
	}
	schedule("3s", 3*time.Second)
	schedule("1s", time.Second)
	schedule("1s again", time.Second) // same instant: in the order scheduled
	stop := schedule("2s stopped", 2*time.Second)
	schedule("10s", 10*time.Second)
	if !stop() {
		t.Error("stop of a pending callback = false")
	}
	if stop() {
		t.Error("a second stop = true")
	}

	c.Advance(5 * time.Second)
	if want := []string{"1s", "1s again", "3s"}; !slices.Equal(ran, want) {
		t.Errorf("ran %q, want %q", ran, want)
	}
	if got := at["3s"]; !got.Equal(epoch.Add(3 * time.Second)) {
		t.Errorf("Now in the 3s callback = %v, want its due time", got)
	}
	if got := c.Now(); !got.Equal(epoch.Add(5 * time.Second)) {
		t.Errorf("Now after Advance(5s) = %v", got)
	}
	c.Advance(5 * time.Second)
	if ran[len(ran)-1] != "10s" {
		t.Errorf("ran %q, want 10s last", ran)
	}
}

func TestManualClockCallbacksScheduleMore(t *testing.T) {
	c := memory.NewManualClock(epoch)
	var ticks []time.Duration
	var tick func()
	tick = func() {
		ticks = append(ticks, c.Now().Sub(epoch))
		c.AfterFunc(time.Second, tick)
	}
	c.AfterFunc(time.Second, tick)
	c.Advance(3500 * time.Millisecond)
	if want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}; !slices.Equal(ticks, want) {
		t.Errorf("ticks at %v, want %v", ticks, want)
	}
}

// A callback due now never runs inside AfterFunc (whose caller may hold a
// lock it takes), but at the next Advance, even Advance(0).
func TestManualClockDueCallbackRunsAtNextAdvance(t *testing.T) {
	c := memory.NewManualClock(epoch)
	ran := false
	c.AfterFunc(0, func() { ran = true })
	if ran {
		t.Fatal("AfterFunc(0) ran f before returning")
	}
	c.Advance(0)
	if !ran {
		t.Error("Advance(0) did not run a callback due now")
	}
	c.Advance(-time.Hour)
	if !c.Now().Equal(epoch) {
		t.Errorf("Advance(-1h) moved the clock to %v", c.Now())
	}
}

func TestSystemClock(t *testing.T) {
	done := make(chan struct{})
	memory.SystemClock.AfterFunc(time.Millisecond, func() { close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("SystemClock.AfterFunc never ran")
	}
	stop := memory.SystemClock.AfterFunc(time.Hour, func() { t.Error("a stopped callback ran") })
	if !stop() {
		t.Error("stop = false")
	}
}
