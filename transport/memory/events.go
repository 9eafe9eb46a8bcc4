package memory

import (
	"sync"

	"github.com/acemq-go/acemq/transport"
)

// Notify has f called with each connection event from now on (see
// transport.Transport): EventBlocked when the connection is first blocked
// (it publishes during Broker.SetAlarm's alarm), EventUnblocked when
// ClearAlarm unblocks it, and for a connection exception (RabbitMQ's 503 or
// 541), which ends the connection and opens the next one at once,
// EventLost (then EventUnblocked if it was blocked) and EventRecovered.
// Close is no event. f is called, after the broker's lock is released, by
// the goroutine whose call caused the event (Publish, ClearAlarm, a
// declaration), or by one already calling f for an earlier event.
func (t *Transport) Notify(f func(transport.Event)) { t.events.set(f) }

// notifier delivers a Transport's events to Notify's handler: queued under
// the broker's lock, so in the order things happen there, and delivered
// after it is released, one at a time, by whichever goroutine flushes first.
type notifier struct {
	mu       sync.Mutex
	f        func(transport.Event)
	queue    []transport.Event
	flushing bool // a goroutine is delivering queue
}

func (n *notifier) set(f func(transport.Event)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.f = f
	if f == nil {
		n.queue = nil
	}
}

// add queues e, under the broker's lock; it is dropped without a handler.
func (n *notifier) add(e transport.Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.f != nil {
		n.queue = append(n.queue, e)
	}
}

// flush delivers the events queued, unless another goroutine is delivering
// already (it delivers those too). Never under the broker's lock.
func (n *notifier) flush() {
	n.mu.Lock()
	if n.flushing {
		n.mu.Unlock()
		return
	}
	n.flushing = true
	n.mu.Unlock()
	done := false
	defer func() {
		if !done { // f panicked: let the next flush deliver
			n.mu.Lock()
			n.flushing = false
			n.mu.Unlock()
		}
	}()
	for {
		f, e, ok := n.next()
		if !ok {
			done = true
			return
		}
		f(e)
	}
}

// next takes the next event to deliver; with none, the flush is over.
func (n *notifier) next() (func(transport.Event), transport.Event, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.queue) == 0 || n.f == nil {
		n.queue, n.flushing = nil, false
		return nil, transport.Event{}, false
	}
	e := n.queue[0]
	n.queue = n.queue[1:]
	return n.f, e, true
}
