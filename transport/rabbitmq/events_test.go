package rabbitmq

import (
	"context"
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
// proxy: a real alarm would block every test on the broker) are reported;
// a blocked connection that is lost reports EventLost, EventUnblocked, then
// EventRecovered.
func TestEventsBlockedAndUnblocked(t *testing.T) {
	t.Parallel()
	p := startProxy(t, nil)
	tr := dial(t, p.url(t, "amqp"), Options{})
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
	if lost := ev.next(t, ctx, transport.EventLost); lost.Err == nil {
		t.Error("EventLost without Err")
	}
	ev.next(t, ctx, transport.EventUnblocked)
	ev.next(t, ctx, transport.EventRecovered)
	if st := tr.State(); st.Blocked || !st.Connected {
		t.Errorf("State after recovering: %+v, want connected, not blocked", st)
	}
	ev.none(t)
}
