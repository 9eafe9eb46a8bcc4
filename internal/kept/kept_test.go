package kept

import (
	"sync"
	"testing"
)

// A key's value is built once and kept, up to Limit keys; past it each
// caller gets a value built for it alone. Concurrent first gets of a key
// all get the one value kept.
func TestGet(t *testing.T) {
	m := Map[int, *int]{Limit: 2}
	built := 0
	build := func(k int) *int { built++; v := k; return &v }
	a := m.Get(1, build)
	if b := m.Get(1, build); a != b || built != 1 {
		t.Errorf("the second get of 1 built again (%d builds) or gave another value", built)
	}
	m.Get(2, build)
	if first, second := m.Get(3, build), m.Get(3, build); first == second {
		t.Error("a key past the limit was kept")
	}

	var wg sync.WaitGroup
	c := Map[string, *int]{Limit: 10}
	got := make([]*int, 8)
	for i := range got {
		wg.Go(func() { got[i] = c.Get("q", func(string) *int { return new(int) }) })
	}
	wg.Wait()
	for _, v := range got[1:] {
		if v != got[0] {
			t.Fatal("concurrent first gets of one key got different values")
		}
	}
}
