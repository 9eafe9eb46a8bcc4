package acemq_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// events passes on the events of some kinds.
type events struct {
	acemq.NopObserver
	kinds []acemq.EventKind
	ch    chan acemq.Event
}

func eventsOf(kinds ...acemq.EventKind) *events {
	return &events{kinds: kinds, ch: make(chan acemq.Event, 100)}
}

func (e *events) Event(ev acemq.Event) {
	for _, k := range e.kinds {
		if ev.Kind == k {
			e.ch <- ev
		}
	}
}

func (e *events) next(t *testing.T) acemq.Event {
	t.Helper()
	select {
	case ev := <-e.ch:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatalf("none of the events %v within 10s", e.kinds)
		return acemq.Event{}
	}
}

// hung is a handler that ignores its context: it returns Accept only once
// released, and tells what its context said then.
type hung struct {
	started chan struct{}
	release chan struct{}
	free    func() // releases it, once
	cause   chan error
}

// newHung is a hung handler, released when the test ends, before the
// consumers started after it close.
func newHung(t *testing.T) *hung {
	h := &hung{started: make(chan struct{}, 10), release: make(chan struct{}), cause: make(chan error, 10)}
	h.free = sync.OnceFunc(func() { close(h.release) })
	return h
}

func (h *hung) handle(ctx context.Context, _ acemq.Message[item]) acemq.Decision {
	h.started <- struct{}{}
	<-h.release
	h.cause <- context.Cause(ctx)
	return acemq.Accept()
}

func (h *hung) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-h.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not start within 10s")
	}
}

// A handler that hangs past its timeout: its delivery is retried at once
// with the timeout's class, on the rung of the retry's wait; Close returns
// at its drain timeout with the handler abandoned; when the handler
// returns at last, its Accept is discarded and told, and its context said
// why it was cancelled.
func TestHandlerTimeoutOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	seen := eventsOf(acemq.EventHandlerOverran)
	c, h := hangPastTimeout(t, b, seen)
	acemqtest.WaitFor(t, c, "the retry at the timeout", func(s acemq.Stats) bool {
		return s.RetriedOnRung == 1 && s.TimedOut == 1 && s.Overrunning == 1
	})
	rung := b.Messages(t, "orders.retry.quorum.1m")
	if len(rung) != 1 || rung[0].Envelope.Attempt != 2 {
		t.Fatalf("the rung holds %+v, want the message with attempt 2", rung)
	}

	report, err := closeAdvancing(t, b, c)
	if !errors.Is(err, acemq.ErrDrainTimeout) || report.Abandoned != 1 {
		t.Errorf("Close = %+v, %v; want the hung handler abandoned at the drain timeout", report, err)
	}
	h.free()
	if cause := <-h.cause; !errors.Is(cause, acemq.ErrHandlerTimeout) || cause.Error() != "the handler timed out after 5s" {
		t.Errorf("the handler's context's cause is %v", cause)
	}
	if ev := seen.next(t); ev.Queue != "orders" || ev.Delay <= 0 || ev.Reason != "accept" {
		t.Errorf("the overran event is %+v", ev)
	}
	acemqtest.WaitFor(t, c, "the handler's goroutine free", func(s acemq.Stats) bool {
		return s.Overrunning == 0 && s.Accepted == 0 && s.TimedOut == 1
	})
}

// hangPastTimeout starts a consumer of orders on b, its handler hung and its
// timeout 5s, publishes one message and moves the clock past the timeout.
func hangPastTimeout(t *testing.T, b *acemqtest.Broker, o acemq.Observer) (*acemq.Consumer, *hung) {
	t.Helper()
	conn := b.Connect(t, acemq.WithObserver(o))
	declareClassic(t, conn, "orders")
	h := newHung(t)
	c := consume(t, conn, "orders", h.handle, acemq.WithPolicy(acemq.Fixed(3, time.Minute)),
		acemq.WithHandlerTimeout(5*time.Second), acemq.WithDrainTimeout(10*time.Second))
	t.Cleanup(h.free)
	publish(t, conn, "orders", item{N: 1})
	h.waitStarted(t)
	b.Advance(5 * time.Second)
	return c, h
}

// A handler that times out on its last attempt dead-letters the message
// with a reason that says so.
func TestHandlerTimeoutExhaustsOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	declareClassic(t, conn, "orders")
	h := newHung(t)
	c := consume(t, conn, "orders", h.handle, acemq.WithHandlerTimeout(1500*time.Millisecond))
	t.Cleanup(h.free)
	publish(t, conn, "orders", item{N: 1})
	h.waitStarted(t)
	b.Advance(1500 * time.Millisecond)
	acemqtest.WaitFor(t, c, "the dead letter", func(s acemq.Stats) bool { return s.DeadLettered == 1 })
	dead := b.Messages(t, "orders.dlq")
	if len(dead) != 1 || dead[0].Envelope.Error != "exhausted 1 attempts: the handler timed out after 1.5s" {
		t.Errorf("orders.dlq holds %+v", dead)
	}
}

// A handler that returns in time is settled as usual, its context not
// cancelled; the timer it leaves does nothing when it falls due.
func TestHandlerInTimeOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	declareClassic(t, conn, "orders")
	causes := make(chan error, 1)
	c := consume(t, conn, "orders", func(ctx context.Context, _ acemq.Message[item]) acemq.Decision {
		causes <- context.Cause(ctx)
		return acemq.Accept()
	}, acemq.WithHandlerTimeout(time.Second))
	publish(t, conn, "orders", item{N: 1})
	acemqtest.WaitFor(t, c, "the ack", func(s acemq.Stats) bool { return s.Accepted == 1 })
	b.Advance(time.Minute)
	if s := c.Stats(); s != (acemq.Stats{Accepted: 1}) {
		t.Errorf("Stats = %+v", s)
	}
	if cause := <-causes; cause != nil {
		t.Errorf("the handler's context was cancelled: %v", cause)
	}
}

func TestHandlerTimeoutOptions(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	declareClassic(t, conn, "orders")
	for name, opts := range map[string][]acemq.ConsumeOption{
		"zero":     {acemq.WithHandlerTimeout(0)},
		"negative": {acemq.WithHandlerTimeout(-time.Second)},
		"in place": {acemq.WithHandlerTimeout(time.Second), acemq.WithRetryInPlace()},
	} {
		c, err := acemq.Consume(context.Background(), conn, "orders", failing, opts...)
		if !errors.Is(err, acemq.ErrInvalidOption) {
			t.Errorf("%s: Consume = %v, want ErrInvalidOption", name, err)
		}
		if c != nil {
			_, _ = c.Close(context.Background())
		}
	}
}

func declareClassic(t *testing.T, conn *acemq.Conn, q string) {
	t.Helper()
	if err := conn.Transport().DeclareQueue(context.Background(), transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
}

// closeAdvancing closes c while moving b's clock on, a second at a time,
// until Close returns at its drain timeout (bounded by ten seconds of real
// time).
func closeAdvancing(t *testing.T, b *acemqtest.Broker, c *acemq.Consumer) (acemq.ShutdownReport, error) {
	t.Helper()
	type closed struct {
		report acemq.ShutdownReport
		err    error
	}
	done := make(chan closed, 1)
	go func() {
		r, err := c.Close(context.Background())
		done <- closed{r, err}
	}()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case r := <-done:
			return r.report, r.err
		case <-deadline:
			t.Fatal("Close did not return within 10s")
		case <-time.After(10 * time.Millisecond):
			b.Advance(time.Second)
		}
	}
}

// On RabbitMQ, in real time: the hung handler's delivery is on the rung
// with attempt 2 once the timeout passed, and Close returns at its drain
// timeout with the handler abandoned.
func TestHandlerTimeout(t *testing.T) {
	seen := eventsOf(acemq.EventHandlerOverran)
	conn := connect(t, acemq.WithObserver(seen))
	policy := acemq.Fixed(3, time.Minute)
	q := testQueue(t, conn, policy)
	h := newHung(t)
	c := consume(t, conn, q, h.handle, acemq.WithPolicy(policy),
		acemq.WithHandlerTimeout(100*time.Millisecond), acemq.WithDrainTimeout(100*time.Millisecond))
	t.Cleanup(h.free)
	publish(t, conn, q, item{N: 1})
	h.waitStarted(t)
	acemqtest.WaitFor(t, c, "the retry at the timeout", func(s acemq.Stats) bool {
		return s.RetriedOnRung == 1 && s.TimedOut == 1 && s.Overrunning == 1
	})
	rung := contract.RungQueue(q, time.Minute, contract.DefaultRungKind)
	waitFor(t, "the message on its rung", 10*time.Second, func() bool { return depth(t, conn, rung) == 1 })
	d, ok, err := conn.Transport().Get(context.Background(), rung)
	if err != nil || !ok {
		t.Fatalf("reading %s: %v, %v", rung, ok, err)
	}
	if env := acemq.ReadEnvelope(d.Message); env.Attempt != 2 {
		t.Errorf("the retry has attempt %d, want 2", env.Attempt)
	}
	_ = d.Nack(true)

	report, err := c.Close(context.Background())
	if !errors.Is(err, acemq.ErrDrainTimeout) || report.Abandoned != 1 {
		t.Errorf("Close = %+v, %v; want the hung handler abandoned at the drain timeout", report, err)
	}
	h.free()
	if ev := seen.next(t); ev.Queue != q || ev.Reason != "accept" {
		t.Errorf("the overran event is %+v", ev)
	}
	if depth(t, conn, q) != 0 {
		t.Errorf("%s holds the message again: its late Accept was not discarded", q)
	}
}

// Whatever the handler does once its context is cancelled, the timeout is
// told before the overrun, and Overrunning never goes below zero: the
// events of each delivery come in order.
func TestHandlerTimeoutIsToldBeforeTheOverrunOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	seen := eventsOf(acemq.EventHandlerTimedOut, acemq.EventHandlerOverran)
	conn := b.Connect(t, acemq.WithObserver(seen))
	declareClassic(t, conn, "orders")
	started := make(chan struct{}, 1)
	c := consume(t, conn, "orders", func(ctx context.Context, _ acemq.Message[item]) acemq.Decision {
		started <- struct{}{}
		<-ctx.Done() // returns as soon as its timeout cancels it
		return acemq.Accept()
	}, acemq.WithHandlerTimeout(time.Second))
	for n := range 50 {
		publish(t, conn, "orders", item{N: n})
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d: the handler did not start within 10s", n)
		}
		b.Advance(time.Second)
		first, second := seen.next(t), seen.next(t)
		if first.Kind != acemq.EventHandlerTimedOut || second.Kind != acemq.EventHandlerOverran {
			t.Fatalf("message %d: told %s, then %s", n, first.Kind, second.Kind)
		}
		if s := c.Stats(); s.Overrunning < 0 {
			t.Fatalf("message %d: Overrunning = %d", n, s.Overrunning)
		}
	}
	acemqtest.WaitFor(t, c, "every message dead-lettered, no handler overrunning", func(s acemq.Stats) bool {
		return s.DeadLettered == 50 && s.TimedOut == 50 && s.Overrunning == 0
	})
}

// A handler past its timeout holds no pause: its delivery is settled, so
// Pause returns while the handler still hangs.
func TestPauseDoesNotWaitForAHandlerPastItsTimeoutOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	c, _ := hangPastTimeout(t, b, acemq.NopObserver{})
	acemqtest.WaitFor(t, c, "the retry at the timeout", func(s acemq.Stats) bool { return s.TimedOut == 1 && s.Overrunning == 1 })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := c.Pause(ctx); err != nil {
		t.Errorf("Pause with a handler past its timeout: %v", err)
	}
	if s := c.Stats(); s.Overrunning != 1 {
		t.Errorf("%d handlers overrunning after the pause, want the hung one", s.Overrunning)
	}
}
