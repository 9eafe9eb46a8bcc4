// Package handoff lets a handler hand the last wait of its work to the
// consumer running it: the idempotent consumer's confirm. The consumer
// frees the handler's place for its next delivery at once, and settles the
// message only once the wait has returned, so that what the wait makes
// durable still is before the ack, while the next delivery's claim goes to
// the database beside this one's confirm (notes/issue30-idempotent.md).
package handoff

import (
	"context"
	"sync"
)

// Slot is a consumer worker's: it takes what the handler it runs hands
// over, while the handler runs.
type Slot struct {
	mu   sync.Mutex
	open bool
	wait func() error
}

type key struct{}

// Context is parent with s in it, for the handlers of s's worker.
func Context(parent context.Context, s *Slot) context.Context {
	return context.WithValue(parent, key{}, s)
}

// Offer hands wait to the consumer whose handler has ctx: the consumer
// calls it once the handler has returned, and settles the message after
// it; a wait that fails turns an accept into a retry with its error. It
// reports false, and wait is the caller's to make, outside a consumer that
// takes one (a handler called directly, a retry in place), or when a wait
// was handed over already.
func Offer(ctx context.Context, wait func() error) bool {
	s, _ := ctx.Value(key{}).(*Slot)
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open || s.wait != nil {
		return false
	}
	s.wait = wait
	return true
}

// Open readies s for a handler's run.
func (s *Slot) Open() {
	s.mu.Lock()
	s.open = true
	s.mu.Unlock()
}

// Take closes s, once the handler has returned, and returns what it was
// handed: nil if nothing.
func (s *Slot) Take() func() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.wait
	s.open, s.wait = false, nil
	return w
}
