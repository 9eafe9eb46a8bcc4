package deadletter_test

import (
	"errors"
	"testing"

	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/transport"
)

// classic is names as classic queues, as the management API lists them.
func classic(names ...string) []transport.Queue {
	out := make([]transport.Queue, len(names))
	for i, n := range names {
		out[i] = transport.Queue{Name: n, Type: transport.Classic}
	}
	return out
}

func TestViewable(t *testing.T) {
	tests := []struct {
		q  transport.Queue
		ok bool
	}{
		{transport.Queue{Name: "orders.dlq", Type: transport.Classic}, true},
		{transport.Queue{Name: "orders.parked", Type: transport.Classic}, true},
		{transport.Queue{Name: "orders.dlq", Type: transport.Quorum}, false},
		{transport.Queue{Name: "orders.parked", Type: transport.Stream}, false},
		{transport.Queue{Name: "orders.dlq"}, false}, // type not known: not read
		{transport.Queue{Name: "orders", Type: transport.Classic}, false},
		{transport.Queue{Name: "orders.retry.30s", Type: transport.Classic}, false},
		{transport.Queue{Name: ".dlq", Type: transport.Classic}, false},
	}
	for _, c := range tests {
		err := deadletter.Viewable(c.q)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, deadletter.ErrNotViewable)) {
			t.Errorf("Viewable(%s, %q) = %v, want ok %v", c.q.Name, c.q.Type, err, c.ok)
		}
	}
}
