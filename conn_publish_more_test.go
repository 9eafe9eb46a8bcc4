package acemq

import (
	"context"
	"slices"
	"testing"
)

// PublishMore passes its more to the transport; Publish says no more.
func TestPublishMore(t *testing.T) {
	f := newFake()
	c := f.conn()
	var pending []*Pending
	for _, more := range []bool{true, true, false} {
		p, err := c.PublishMore(context.Background(), "orders", "order.new", RawMessage{Body: []byte("{}")}, more)
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, p)
	}
	p, err := c.Publish(context.Background(), "orders", "order.new", RawMessage{Body: []byte("{}")})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(pending, p) {
		if err := p.Wait(context.Background()); err != nil {
			t.Errorf("Wait = %v", err)
		}
	}
	var more []bool
	for _, pub := range f.publishes() {
		more = append(more, pub.More)
	}
	if want := []bool{true, true, false, false}; !slices.Equal(more, want) {
		t.Errorf("the publishes said More %v, want %v", more, want)
	}
}
