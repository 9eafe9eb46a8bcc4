// Package confirm is the confirmed-publish window, the one that
// Publisher.PublishBatch and package deadletter's moves share: sends go on
// while earlier ones await their answers, and each is settled in the order
// it was sent.
package confirm

// Sent is a send in flight: Done is closed once it is answered.
type Sent interface {
	Done() <-chan struct{}
}

// Window holds up to its size of sends in flight and settles them oldest
// first with the settle function it was made with, which waits for one's
// answer and acts on it.
type Window[T Sent] struct {
	size   int
	settle func(T) error
	// ring holds the sends in flight, n of them from head on, oldest
	// first; it grows (to size at most) as sends come, so that a small
	// batch stays small, and then is reused.
	ring    []T
	head, n int
}

// New makes a window of size sends in flight (at least 1).
func New[T Sent](size int, settle func(T) error) *Window[T] {
	return &Window[T]{size: max(size, 1), settle: settle}
}

// Add puts x in flight, first settling the oldest when the window is full.
// It returns that settle's error; x is in flight all the same.
func (w *Window[T]) Add(x T) error {
	var err error
	if w.n >= w.size {
		err = w.settleOldest()
	}
	if w.n == len(w.ring) {
		w.grow()
	}
	w.ring[(w.head+w.n)%len(w.ring)] = x
	w.n++
	return err
}

// grow doubles the ring (up to the window's size), the oldest first.
func (w *Window[T]) grow() {
	ring := make([]T, min(max(2*len(w.ring), 16), w.size))
	for i := range w.n {
		ring[i] = w.ring[(w.head+i)%len(w.ring)]
	}
	w.ring, w.head = ring, 0
}

// SettleAnswered settles, oldest first, the sends already answered, and
// stops at the first one that is not, or whose settle fails.
func (w *Window[T]) SettleAnswered() error {
	for w.n > 0 && answered(w.ring[w.head]) {
		if err := w.settleOldest(); err != nil {
			return err
		}
	}
	return nil
}

// Drain settles every send in flight, even after one fails: each one sent
// is settled. It returns the first failure.
func (w *Window[T]) Drain() error {
	var first error
	for w.n > 0 {
		if err := w.settleOldest(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Len is how many sends are in flight.
func (w *Window[T]) Len() int { return w.n }

func (w *Window[T]) settleOldest() error {
	x := w.ring[w.head]
	var zero T
	w.ring[w.head] = zero // let it go
	w.head = (w.head + 1) % len(w.ring)
	w.n--
	return w.settle(x)
}

func answered(s Sent) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}
