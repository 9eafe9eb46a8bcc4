package rabbitmq

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// events records what a Notify handler gets.
type events struct {
	ch       chan transport.Event
	overflow atomic.Bool
}

func notified(tr *Transport) *events {
	e := &events{ch: make(chan transport.Event, 64)}
	tr.Notify(func(ev transport.Event) {
		select {
		case e.ch <- ev:
		default:
			e.overflow.Store(true)
		}
	})
	return e
}

// next waits for the next event, which must be of kind want.
func (e *events) next(t *testing.T, ctx context.Context, want transport.EventKind) transport.Event {
	t.Helper()
	select {
	case ev := <-e.ch:
		if ev.Kind != want {
			t.Fatalf("event %s (%+v), want %s", ev.Kind, ev, want)
		}
		return ev
	case <-ctx.Done():
		t.Fatalf("no %s event: %v", want, ctx.Err())
	}
	panic("unreachable")
}

// take waits for the next n events, of any kind (the two connections'
// events interleave), and counts them by kind; the order is in kinds.
func (e *events) take(t *testing.T, ctx context.Context, n int) (kinds []transport.EventKind, count map[transport.EventKind]int) {
	t.Helper()
	count = map[transport.EventKind]int{}
	for len(kinds) < n {
		select {
		case ev := <-e.ch:
			if ev.Kind == transport.EventLost && ev.Err == nil {
				t.Error("EventLost without Err")
			}
			kinds = append(kinds, ev.Kind)
			count[ev.Kind]++
		case <-ctx.Done():
			t.Fatalf("%d events of %d: %v", len(kinds), n, kinds)
		}
	}
	return kinds, count
}

// none checks that no event came beyond those taken.
func (e *events) none(t *testing.T) {
	t.Helper()
	select {
	case ev := <-e.ch:
		t.Errorf("unexpected event %s: %+v", ev.Kind, ev)
	default:
	}
	if e.overflow.Load() {
		t.Error("more events than the test expects")
	}
}

// A connection closed by the broker is reported lost, then recovered, with
// the address (redacted); Close is no event, nor is anything after
// Notify(nil).
func TestEventsLostAndRecovered(t *testing.T) {
	t.Parallel()
	name := brokertest.UniqueName(t, "conn")
	raw := brokertest.URL(t)
	tr := dial(t, raw, Options{ConnectionName: name})
	ev := notified(tr)
	ctx := testCtx(t)

	brokertest.CloseConnections(t, name)
	lost := ev.next(t, ctx, transport.EventLost)
	if lost.Err == nil || !strings.Contains(lost.Err.Error(), "CONNECTION_FORCED") {
		t.Errorf("EventLost.Err = %v, want the broker's CONNECTION_FORCED", lost.Err)
	}
	if lost.Address != RedactURL(raw) {
		t.Errorf("EventLost.Address = %q, want %q", lost.Address, RedactURL(raw))
	}
	if rec := ev.next(t, ctx, transport.EventRecovered); rec.Address != RedactURL(raw) {
		t.Errorf("EventRecovered.Address = %q, want %q", rec.Address, RedactURL(raw))
	}
	if st := tr.State(); st.Connects != 2 {
		t.Errorf("State after EventRecovered: %+v, want the second connection", st)
	}
	ev.none(t)

	tr.Notify(nil)
	brokertest.CloseConnections(t, name)
	eventually(t, ctx, "the third connection", func() bool { return tr.State().Connects == 3 })
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	ev.none(t)
}

// The broker's connection.blocked and connection.unblocked (injected by the
// proxy into both connections: a real alarm would block every test on the
// broker) are reported once, for the publishing connection, the one the
// broker blocks; a blocked connection that is lost reports EventLost,
// EventUnblocked, then EventRecovered, and the main connection, lost with
// it, EventLost and EventRecovered.
func TestEventsBlockedAndUnblocked(t *testing.T) {
	t.Parallel()
	p := startProxy(t, nil)
	tr := dial(t, p.url(t, "amqp"), Options{})
	publish(t, tr, classicQueue(t, tr, nil), "opens the publishing connection")
	ev := notified(tr)
	ctx := testCtx(t)
	addr := RedactURL(p.url(t, "amqp"))

	const reason = "low on memory (test)"
	blocked := append([]byte{byte(len(reason))}, reason...)
	p.inject(10, 60, blocked)
	if b := ev.next(t, ctx, transport.EventBlocked); b.Reason != reason || b.Address != addr {
		t.Errorf("EventBlocked %+v, want reason %q at %s", b, reason, addr)
	}
	if !tr.State().Blocked {
		t.Error("State not Blocked at EventBlocked")
	}
	p.inject(10, 61, nil)
	if u := ev.next(t, ctx, transport.EventUnblocked); u.Address != addr {
		t.Errorf("EventUnblocked %+v, want address %s", u, addr)
	}
	if tr.State().Blocked {
		t.Error("State still Blocked at EventUnblocked")
	}
	ev.none(t)

	p.inject(10, 60, blocked)
	ev.next(t, ctx, transport.EventBlocked)
	p.closeConns()
	// The two connections' events interleave; the publishing connection's
	// EventUnblocked comes after its EventLost.
	kinds, count := ev.take(t, ctx, 5)
	firstLost, unblocked := slices.Index(kinds, transport.EventLost), slices.Index(kinds, transport.EventUnblocked)
	if count[transport.EventLost] != 2 || count[transport.EventRecovered] != 2 || unblocked < firstLost {
		t.Errorf("events after the loss: %v, want two lost, an unblocked after a lost, and two recovered", kinds)
	}
	eventually(t, ctx, "both connections", func() bool { return tr.State().Connected })
	if st := tr.State(); st.Blocked || st.Connects != 3 {
		t.Errorf("State after recovering: %+v, want connected, not blocked, Connects 3 (the main connection's two and the publishing one's reconnect)", st)
	}
	ev.none(t)
}
