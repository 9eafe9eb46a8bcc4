package harness

import (
	"context"
	"fmt"
	"sync/atomic"
)

// countdown closes Done once Tick was called n times, so a scenario can wait
// for its last message without polling.
type countdown struct {
	left atomic.Int64
	done chan struct{}
}

func newCountdown(n int) *countdown {
	c := &countdown{done: make(chan struct{})}
	c.left.Store(int64(n))
	if n <= 0 {
		close(c.done)
	}
	return c
}

func (c *countdown) Tick() {
	if c.left.Add(-1) == 0 {
		close(c.done)
	}
}

// Wait returns nil once every tick came, the first error from failed (nil
// for none), or an error saying how many are missing when ctx ends first.
func (c *countdown) Wait(ctx context.Context, failed <-chan error) error {
	select {
	case <-c.done:
		return nil
	case err := <-failed:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%d messages still missing: %w", c.left.Load(), ctx.Err())
	}
}
