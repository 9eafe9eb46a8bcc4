package idempotency

import (
	"context"
	"sync"
	"time"
)

// inFlight is Handler's store: it knows the keys whose confirm is under
// way, and a claim of one of them waits for that confirm first. Handed
// over to the consumer (run), a confirm is under way while the handler's
// place takes the next delivery; a copy of the message right behind the
// first then finds it confirmed, a duplicate accepted at once, as it did
// when the place waited for the confirm, rather than held, and put back
// for a second.
type inFlight struct {
	Store
	mu       sync.Mutex
	confirms map[string]chan struct{} // closed when the key's confirm has returned
}

// begin records that key's confirm is under way, until done is called.
func (s *inFlight) begin(key string) (done func()) {
	c := make(chan struct{})
	s.mu.Lock()
	if s.confirms == nil {
		s.confirms = map[string]chan struct{}{}
	}
	s.confirms[key] = c
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.confirms[key] == c {
			delete(s.confirms, key)
		}
		s.mu.Unlock()
		close(c)
	}
}

// Claim implements Store, after the key's confirm under way, if any.
func (s *inFlight) Claim(ctx context.Context, key, owner string, timeout time.Duration) (Result, error) {
	s.mu.Lock()
	c := s.confirms[key]
	s.mu.Unlock()
	if c != nil {
		select {
		case <-c:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return s.Store.Claim(ctx, key, owner, timeout)
}
