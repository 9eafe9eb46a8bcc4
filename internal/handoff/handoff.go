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
	ctx  context.Context // the running handler's; nil when none runs
	wait func() error
}

type key struct{}

// Context is parent with s in it, for the handlers of s's worker.
func Context(parent context.Context, s *Slot) context.Context {
	return context.WithValue(parent, key{}, s)
}

// Offer hands wait to the consumer whose handler was given ctx: the
// consumer calls it once the handler has returned, and settles the
// message after it; a wait that fails turns an accept into a retry with
// its error. It reports false, and wait is the caller's to make, outside a
// consumer that takes one (a handler called directly, a retry in place),
// when a wait was handed over already, or when ctx is not the one the
// consumer gave its handler but one a wrapper derived from it: such a
// wrapper may act on the Accept it is returned (a pipeline's step sends
// the next message), and is owed one made after the wait.
func Offer(ctx context.Context, wait func() error) bool {
	s, _ := ctx.Value(key{}).(*Slot)
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The consumer's contexts are pointers: comparing one with a
	// wrapper's of another type is false, never a panic.
	if s.ctx == nil || s.ctx != ctx || s.wait != nil {
		return false
	}
	s.wait = wait
	return true
}

// Open readies the slot in ctx, if there is one, for a handler given ctx.
func Open(ctx context.Context) {
	if s, _ := ctx.Value(key{}).(*Slot); s != nil {
		s.mu.Lock()
		s.ctx = ctx
		s.mu.Unlock()
	}
}

// Take closes s, once the handler has returned, and returns what it was
// handed: nil if nothing.
func (s *Slot) Take() func() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.wait
	s.ctx, s.wait = nil, nil
	return w
}
