package confirm

import (
	"errors"
	"slices"
	"testing"
)

// send is a test send, answered when its channel is closed.
type send struct {
	n    int
	done chan struct{}
	err  error
}

func (s send) Done() <-chan struct{} { return s.done }

func newSend(n int, answered bool, err error) send {
	s := send{n: n, done: make(chan struct{}), err: err}
	if answered {
		close(s.done)
	}
	return s
}

// The window holds no more than its size, settles in the order sent, stops
// settling what is answered at the first that is not or that fails, and a
// drain settles every one, returning the first failure.
func TestWindow(t *testing.T) {
	var settled []int
	w := New(2, func(s send) error {
		settled = append(settled, s.n)
		return s.err
	})
	bad := errors.New("refused")
	if err := w.Add(newSend(1, false, nil)); err != nil || w.Add(newSend(2, true, nil)) != nil {
		t.Fatal("Add failed before the window was full")
	}
	if err := w.SettleAnswered(); err != nil || len(settled) != 0 {
		t.Fatalf("SettleAnswered = %v, settled %v: the oldest is not answered, nothing may be", err, settled)
	}
	if err := w.Add(newSend(3, true, bad)); err != nil || !slices.Equal(settled, []int{1}) || w.Len() != 2 {
		t.Fatalf("Add to a full window = %v, settled %v, %d in flight; want the oldest settled first, 2 in flight", err, settled, w.Len())
	}
	if err := w.SettleAnswered(); !errors.Is(err, bad) || !slices.Equal(settled, []int{1, 2, 3}) {
		t.Fatalf("SettleAnswered = %v, settled %v; want 2 and 3 settled, 3's failure", err, settled)
	}
	second := errors.New("second")
	_ = w.Add(newSend(4, true, nil))
	_ = w.Add(newSend(5, true, second))
	_ = w.Add(newSend(6, true, errors.New("third")))
	if err := w.Drain(); !errors.Is(err, second) || !slices.Equal(settled, []int{1, 2, 3, 4, 5, 6}) || w.Len() != 0 {
		t.Fatalf("Drain = %v, settled %v, %d left; want all settled in order, the first failure", err, settled, w.Len())
	}
}

// Through the ring's growth and its wrapping around, sends are settled in
// the order sent, the window never holding more than its size.
func TestWindowKeepsOrderAsItGrowsAndWraps(t *testing.T) {
	var settled []int
	w := New(40, func(s send) error {
		settled = append(settled, s.n)
		return nil
	})
	var want []int
	for i := range 100 {
		_ = w.Add(newSend(i, true, nil))
		want = append(want, i)
		if w.Len() > 40 {
			t.Fatalf("%d in flight after %d sends, over the size 40", w.Len(), i+1)
		}
		if i%7 == 0 {
			_ = w.SettleAnswered() // the ring's head moves on
		}
	}
	if err := w.Drain(); err != nil || !slices.Equal(settled, want) {
		t.Fatalf("Drain = %v, settled %v; want 0..99 in order", err, settled)
	}
}
