package acemq

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// ErrDrainTimeout says a drain ran out of time: Consumer.Close or
// Conn.Shutdown returned at the drain timeout, or when its context ended,
// with handlers still running or republishes unconfirmed (the
// ShutdownReport counts them). Nothing is lost (their decisions are still
// carried out, or the broker delivers the message again), but the service
// did not finish its work: it exits with contract.ExitDrainTimeout (75,
// EX_TEMPFAIL), as the family's commands do.
var ErrDrainTimeout = errors.New("the drain ran out of time")

// openConsumers are the consumers started on a Conn and not yet closed, by
// id, for Health's count, run-time control and Shutdown.
type openConsumers struct {
	mu  sync.Mutex
	ids map[string]*Consumer
}

// add gives c the id asked for, or a default one, and counts it open.
func (o *openConsumers) add(c *Consumer, id string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ids == nil {
		o.ids = map[string]*Consumer{}
	}
	taken := func(id string) bool { _, ok := o.ids[id]; return ok }
	switch {
	case id == "":
		id = defaultID(c.queue, taken)
	case taken(id):
		return fmt.Errorf("the Conn already has a consumer of id %q: %w", id, ErrInvalidOption)
	}
	c.id = id
	o.ids[id] = c
	return nil
}

func (o *openConsumers) remove(c *Consumer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ids[c.id] == c {
		delete(o.ids, c.id)
	}
}

func (o *openConsumers) byID(id string) *Consumer {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ids[id]
}

// count counts them.
func (o *openConsumers) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.ids)
}

// paused counts those paused.
func (o *openConsumers) paused() int {
	n := 0
	for _, c := range o.list() {
		if c.paused() {
			n++
		}
	}
	return n
}

func (o *openConsumers) list() []*Consumer {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Collect(maps.Values(o.ids))
}

// Shutdown stops the service's messaging, as a service does when it is told
// to stop. From its start the Conn is draining (Health.Draining): it is not
// ready, so that readiness answers 503 and a load balancer sends no more
// work. Every consumer still open on the Conn is closed at once (their
// subscriptions cancelled together, then each drained as Consumer.Close
// does, up to its drain timeout or until ctx ends), then the connection is
// closed. The report adds up the consumers'.
//
// An error matching ErrDrainTimeout says the drain ran out of time; a
// closing error of a consumer or of the connection is joined to it. Keep
// the drain timeout shorter than the host's shutdown grace, itself shorter
// than the orchestrator's (section 21 of the family's contract).
func (c *Conn) Shutdown(ctx context.Context) (ShutdownReport, error) {
	c.draining.Store(true)
	consumers := c.consumers.list()
	reports := make([]ShutdownReport, len(consumers))
	errs := make([]error, len(consumers)+1)
	var wg sync.WaitGroup
	for i, cons := range consumers {
		wg.Go(func() { reports[i], errs[i] = cons.Close(ctx) })
	}
	wg.Wait()
	var sum ShutdownReport
	for _, r := range reports {
		sum.Requeued += r.Requeued
		sum.WaitsCutShort += r.WaitsCutShort
		sum.Abandoned += r.Abandoned
		sum.Settling += r.Settling
	}
	errs[len(consumers)] = c.Close()
	return sum, errors.Join(errs...)
}

// drainError is Close's error for a drain that ran out of time, nil when
// it did not.
func (c *Consumer) drainError(r ShutdownReport) error {
	if r.Abandoned == 0 && r.Settling == 0 {
		return nil
	}
	return fmt.Errorf("acemq: closing the consumer of %s: %d handlers still running, %d republishes unconfirmed: %w",
		c.queue, r.Abandoned, r.Settling, ErrDrainTimeout)
}
