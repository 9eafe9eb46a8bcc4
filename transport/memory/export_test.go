package memory

import "time"

// WithSettleTimeout is withSettleTimeout, for the tests of package
// memory_test.
var WithSettleTimeout = withSettleTimeout

// DueWithin reports whether a callback of c falls due within d of now: a
// test waits for one scheduled by another goroutine before it advances
// the clock past it, or the advance would come first and miss it.
func (c *ManualClock) DueWithin(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers) > 0 && !c.timers[0].when.After(c.now.Add(d))
}
