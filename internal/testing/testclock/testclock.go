// Package testclock is a test's time, moved by hand: the clock the SQL
// stores' tests give a store (WithClock), so that leases, claims and
// expiries pass when the test says, not when the wall clock does.
package testclock

import (
	"sync"
	"time"
)

// Clock is a time that only Advance moves; safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New is a clock at start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
