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
	size     int
	settle   func(T) error
	inFlight []T // in the order sent
}

// New makes a window of size sends in flight (at least 1).
func New[T Sent](size int, settle func(T) error) *Window[T] {
	return &Window[T]{size: max(size, 1), settle: settle}
}

// Add puts x in flight, first settling the oldest when the window is full.
// It returns that settle's error; x is in flight all the same.
func (w *Window[T]) Add(x T) error {
	var err error
	if len(w.inFlight) >= w.size {
		err = w.settleOldest()
	}
	w.inFlight = append(w.inFlight, x)
	return err
}

// SettleAnswered settles, oldest first, the sends already answered, and
// stops at the first one that is not, or whose settle fails.
func (w *Window[T]) SettleAnswered() error {
	for len(w.inFlight) > 0 && answered(w.inFlight[0]) {
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
	for len(w.inFlight) > 0 {
		if err := w.settleOldest(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Len is how many sends are in flight.
func (w *Window[T]) Len() int { return len(w.inFlight) }

func (w *Window[T]) settleOldest() error {
	x := w.inFlight[0]
	var zero T
	w.inFlight[0] = zero // let it go
	w.inFlight = w.inFlight[1:]
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
