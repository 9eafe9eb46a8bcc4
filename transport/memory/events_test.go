package memory_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// recorder collects what a Notify handler gets. memory:// calls the handler
// before the call that caused the event returns (with no other goroutine
// calling it), so a test can check the events right after.
type recorder struct {
	mu     sync.Mutex
	events []transport.Event
}

func notified(tr *memory.Transport) *recorder {
	r := &recorder{}
	tr.Notify(func(e transport.Event) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, e)
	})
	return r
}

// take returns the events so far and forgets them.
func (r *recorder) take() []transport.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

// wantKinds checks the events since the last call, by kind.
func (r *recorder) wantKinds(t *testing.T, when string, want ...transport.EventKind) []transport.Event {
	t.Helper()
	got := r.take()
	kinds := make([]transport.EventKind, len(got))
	for i, e := range got {
		kinds[i] = e.Kind
	}
	if len(kinds) != len(want) || !equalKinds(kinds, want) {
		t.Fatalf("%s: events %v (%+v), want %v", when, kinds, got, want)
	}
	return got
}

func equalKinds(a, b []transport.EventKind) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// An alarm reports a connection blocked once, when it first publishes, with
// the reason and its memory:// address, and unblocked when the alarm clears;
// a connection that did not publish reports nothing.
func TestEventsAlarm(t *testing.T) {
	b, _ := testBroker(t)
	name := "events-" + t.Name()
	must(t, "Register", memory.Register(name, b))
	t.Cleanup(func() { memory.Unregister(name) })
	tr, err := memory.Dial(ctxOf(t), "memory://"+name)
	must(t, "Dial", err)
	t.Cleanup(func() { _ = tr.Close() })
	idle := connect(t, b)
	ev, idleEv := notified(tr), notified(idle)
	declareQueue(t, tr, transport.Queue{Name: "q"})

	b.SetAlarm("low on memory")
	ev.wantKinds(t, "alarm raised, nothing published")
	for range 2 {
		short, cancel := context.WithCancel(ctxOf(t))
		cancel()
		_, err := tr.Publish(short, transport.Publishing{RoutingKey: "q"})
		if !errors.Is(err, transport.ErrBlocked) {
			t.Fatalf("Publish during the alarm: %v, want ErrBlocked", err)
		}
	}
	blocked := ev.wantKinds(t, "two publishes during the alarm", transport.EventBlocked)[0]
	if blocked.Reason != "low on memory" || blocked.Address != "memory://"+name || blocked.Err != nil {
		t.Errorf("EventBlocked %+v, want reason %q at memory://%s", blocked, "low on memory", name)
	}

	b.ClearAlarm()
	unblocked := ev.wantKinds(t, "ClearAlarm", transport.EventUnblocked)[0]
	if unblocked.Address != "memory://"+name || unblocked.Reason != "" {
		t.Errorf("EventUnblocked %+v", unblocked)
	}
	b.ClearAlarm()
	ev.wantKinds(t, "a second ClearAlarm")
	idleEv.wantKinds(t, "the connection that did not publish")
	sendBody(t, tr, "q", "after")
	ev.wantKinds(t, "a publish after the alarm")
}

// A connection exception ends the connection and opens the next: EventLost
// with the exception, EventUnblocked when it was blocked (the new connection
// is not, until it publishes), EventRecovered. Close is no event, nor is
// anything after Notify(nil). (RabbitMQ 3.10 raises the connection
// exceptions used here; 4.0 closes only the channel.)
func TestEventsConnectionException(t *testing.T) {
	b, _ := testBroker(t, rabbitMQ310)
	tr := connect(t, b)
	ev := notified(tr)
	declareQueue(t, tr, transport.Queue{Name: "q"})

	unknownType := func() {
		t.Helper()
		err := tr.DeclareExchange(ctxOf(t), transport.Exchange{Name: "x", Type: "x-delayed-message"})
		if err == nil {
			t.Fatal("declaring an exchange of an unknown type succeeded")
		}
	}
	unknownType()
	got := ev.wantKinds(t, "a connection exception", transport.EventLost, transport.EventRecovered)
	if err := got[0].Err; err == nil || !strings.Contains(err.Error(), "COMMAND_INVALID") {
		t.Errorf("EventLost.Err = %v, want the exception", err)
	}
	if got[0].Address != "" || got[1].Address != "" {
		t.Errorf("events of a connection made with Broker.Connect have an address: %+v", got)
	}

	b.SetAlarm("disk low")
	short, cancel := context.WithCancel(ctxOf(t))
	cancel()
	if _, err := tr.Publish(short, transport.Publishing{RoutingKey: "q"}); !errors.Is(err, transport.ErrBlocked) {
		t.Fatalf("Publish during the alarm: %v, want ErrBlocked", err)
	}
	ev.wantKinds(t, "a publish during the alarm", transport.EventBlocked)
	// RabbitMQ 3.10 answers an unknown queue master locator with
	// INTERNAL_ERROR, a connection exception too.
	err := tr.DeclareQueue(ctxOf(t), transport.Queue{Name: "located",
		Arguments: transport.Table{"x-queue-master-locator": "nowhere"}})
	if err == nil {
		t.Fatal("declaring a queue with an unknown master locator succeeded")
	}
	ev.wantKinds(t, "a connection exception while blocked",
		transport.EventLost, transport.EventUnblocked, transport.EventRecovered)
	if tr.State().Blocked {
		t.Error("the new connection is blocked before it publishes")
	}
	b.ClearAlarm()
	ev.wantKinds(t, "ClearAlarm after the blocked connection was lost")

	tr.Notify(nil)
	unknownType()
	must(t, "Close", tr.Close())
	ev.wantKinds(t, "after Notify(nil) and Close")
}

// Events arrive one at a time and in order while several goroutines cause
// them: for one connection, blocked and unblocked alternate.
func TestEventsInOrder(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "q"})
	var (
		inside, blocked, overlap, disorder atomic.Bool
		count                              atomic.Int32
	)
	tr.Notify(func(e transport.Event) {
		if inside.Swap(true) {
			overlap.Store(true)
		}
		defer inside.Store(false)
		count.Add(1)
		switch e.Kind {
		case transport.EventBlocked:
			if blocked.Swap(true) {
				disorder.Store(true)
			}
		case transport.EventUnblocked:
			if !blocked.Swap(false) {
				disorder.Store(true)
			}
		default:
			disorder.Store(true)
		}
	})

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				c, err := tr.Publish(ctxOf(t), transport.Publishing{RoutingKey: "q"})
				if err == nil {
					err = c.Wait(ctxOf(t))
				}
				if err != nil {
					t.Errorf("Publish: %v", err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	for stop := false; !stop; {
		b.SetAlarm("test")
		b.ClearAlarm() // each held publish goes on
		select {
		case <-done:
			stop = true
		default:
		}
	}
	if overlap.Load() {
		t.Error("the handler was called while it was running")
	}
	if disorder.Load() || blocked.Load() {
		t.Errorf("events out of order (%d of them; blocked at the end: %v)", count.Load(), blocked.Load())
	}
}
