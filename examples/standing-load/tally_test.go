package main

import (
	"testing"
	"time"
)

func TestTallyAccountsByNumber(t *testing.T) {
	start := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
	tl := newTally(start)
	for n := range 10 {
		tl.publishing()
		if n == 9 {
			tl.fail() // not confirmed, yet it arrives below: no loss either way
			continue
		}
		tl.confirm(n)
	}
	for _, n := range []int{0, 1, 2, 9, 1, 3} {
		tl.consume(n) // 1 twice: a duplicate, counted once
	}
	tl.consume(200) // consumed before its confirm
	tl.publishing()
	tl.confirm(200)
	if got := tl.unconsumed(); got != 5 { // 4 to 8
		t.Errorf("unconsumed = %d, want 5 (4 to 8)", got)
	}
	e := tl.extra()
	if e.Duplicates != 1 || e.Unconsumed != 5 {
		t.Errorf("extra = %+v, want 1 duplicate, 5 unconsumed", e)
	}
	l := tl.next(start.Add(2*time.Second), false)
	want := line{At: "2026-12-07T01:00:02.000Z", ElapsedMs: 2000, Published: 11, Confirmed: 10, Consumed: 6,
		Failed: 1, PublishRate: 5.5, ConsumeRate: 3}
	if l != want {
		t.Errorf("line = %+v, want %+v", l, want)
	}
	for n := 4; n <= 8; n++ {
		tl.consume(n)
	}
	tl.refuse("low on memory")
	if got := tl.unconsumed(); got != 0 {
		t.Errorf("unconsumed = %d after the rest, want 0", got)
	}
	l = tl.next(start.Add(4*time.Second), true)
	if l.ConsumeRate != 2.5 || l.PublishRate != 0 || l.Refused != 1 || l.Reason != "low on memory" || !l.Blocked {
		t.Errorf("the next line = %+v, want 2.5 consumed a second, none published, 1 refused for low on memory, blocked", l)
	}
}
