package memory

import (
	"container/heap"
	"sync"
	"time"

	"github.com/acemq-go/acemq/transport"
)

// Clock is the broker's time source: message and queue expiry, the consumer
// timeout, the backoff of a subscription subscribing again. It is
// transport.Clock, so one value serves both the broker and acemq.WithClock.
type Clock = transport.Clock

// SystemClock is real time.
var SystemClock = transport.SystemClock

// ManualClock is a Clock for tests: time stands still until Advance moves
// it, and Advance runs the callbacks that fall due, in the goroutine that
// calls it. A broker on a ManualClock expires a five-minute rung in
// microseconds, and never on its own.
type ManualClock struct {
	advancing sync.Mutex // one Advance at a time

	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers timerHeap
}

// NewManualClock returns a clock that reads start until it is advanced.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start}
}

// Now is the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f for d from now. A callback whose time has already
// come (d <= 0) runs at the next Advance, Advance(0) included: never inside
// AfterFunc, whose caller may hold a lock f takes.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{when: c.now.Add(d), seq: c.seq, f: f}
	c.seq++
	heap.Push(&c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.index < 0 {
			return false
		}
		heap.Remove(&c.timers, t.index)
		return true
	}
}

// Advance moves the clock on by d, running every callback that falls due on
// the way, in time order (those due at the same instant in the order they
// were scheduled). While a callback runs, Now reads its due time; callbacks
// may schedule more, which run too if they fall due within d. Advance
// returns when the clock reads the old time plus d and nothing due is left.
// A negative d counts as 0. Do not call Advance from a callback.
func (c *ManualClock) Advance(d time.Duration) {
	c.advancing.Lock()
	defer c.advancing.Unlock()
	c.mu.Lock()
	target := c.now.Add(max(d, 0))
	for len(c.timers) > 0 && !c.timers[0].when.After(target) {
		t := heap.Pop(&c.timers).(*manualTimer)
		if t.when.After(c.now) {
			c.now = t.when
		}
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = target
	c.mu.Unlock()
}

type manualTimer struct {
	when  time.Time
	seq   uint64
	f     func()
	index int // in the heap; -1 once popped or stopped
}

type timerHeap []*manualTimer

func (h timerHeap) Len() int { return len(h) }

func (h timerHeap) Less(i, j int) bool {
	if !h[i].when.Equal(h[j].when) {
		return h[i].when.Before(h[j].when)
	}
	return h[i].seq < h[j].seq
}

func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *timerHeap) Push(x any) {
	t := x.(*manualTimer)
	t.index = len(*h)
	*h = append(*h, t)
}

func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
