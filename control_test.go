package acemq_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
)

// Run-time control on memory:// and on RabbitMQ: pausing and resuming, and
// rescaling, a consumer under load lose nothing and spend no attempt.

// ledger records what a handler saw, per message.
type ledger struct {
	mu       sync.Mutex
	handled  map[int]int // n → times handled
	attempts map[int]int // n → highest attempt seen
	running  atomic.Int64
	maxSeen  atomic.Int64 // most handlers running at once
	paused   atomic.Bool  // a handler running now fails the test
	onPause  atomic.Int64 // handlers run while paused
	done     chan struct{}
	want     int
}

func newLedger(want int) *ledger {
	return &ledger{handled: map[int]int{}, attempts: map[int]int{}, done: make(chan struct{}), want: want}
}

func (l *ledger) handler(work time.Duration) acemq.Handler[item] {
	return func(ctx context.Context, m acemq.Message[item]) acemq.Decision {
		if l.paused.Load() {
			l.onPause.Add(1)
		}
		l.raiseMax(l.running.Add(1))
		defer l.running.Add(-1)
		// Work that takes a moment, so that handlers overlap and deliveries
		// stay prefetched when the test pauses or rescales.
		select {
		case <-time.After(work):
		case <-ctx.Done():
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.handled[m.Body.N]++
		l.attempts[m.Body.N] = max(l.attempts[m.Body.N], m.Envelope.Attempt)
		if len(l.handled) == l.want {
			select {
			case <-l.done:
			default:
				close(l.done)
			}
		}
		return acemq.Accept()
	}
}

// raiseMax records n handlers running at once.
func (l *ledger) raiseMax(n int64) {
	for {
		seen := l.maxSeen.Load()
		if n <= seen || l.maxSeen.CompareAndSwap(seen, n) {
			return
		}
	}
}

func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.handled)
}

// check fails t unless every one of the want messages was handled, each
// on its first attempt.
func (l *ledger) check(t *testing.T, c *acemq.Consumer) {
	t.Helper()
	select {
	case <-l.done:
	case <-time.After(time.Minute):
		t.Fatalf("%d of %d messages handled within a minute", l.count(), l.want)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for n := range l.want {
		if l.handled[n] == 0 {
			t.Errorf("message %d was never handled", n)
		}
		if l.attempts[n] > 1 {
			t.Errorf("message %d was handled at attempt %d: an attempt was spent", n, l.attempts[n])
		}
	}
	s := c.Stats()
	if s.RetriedInConsumer+s.RetriedOnRung+s.DeadLettered+s.Parked+s.PutBack != 0 {
		t.Errorf("stats %+v: a retry, a set-aside or a put-back", s)
	}
}

// publishSteadily publishes want messages from another goroutine, a few at
// a time, until all are confirmed; wait returns once they are.
func publishSteadily(t *testing.T, conn *acemq.Conn, q string, want int) (wait func()) {
	pub := acemqtest.NewPublisher[item](t, conn, "")
	done := make(chan error, 1)
	go func() {
		for n := range want {
			if err := pub.Publish(context.Background(), q, item{N: n}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	return func() {
		t.Helper()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestPauseAndResumeUnderLoadLoseNothingAndSpendNoAttempt(t *testing.T) {
	onBoth(t, func(t *testing.T, connect func(...acemq.ConnOption) *acemq.Conn, queue func(*acemq.Conn, acemq.RetryPolicy) string) {
		conn := connect()
		policy := acemq.Fixed(3, 50*time.Millisecond)
		q := queue(conn, policy)
		const want = 400
		l := newLedger(want)
		c := consume(t, conn, q, l.handler(time.Millisecond), acemq.WithPolicy(policy),
			acemq.WithConcurrency(4), acemq.WithPrefetch(20), acemq.WithConsumerID("orders-worker"))
		published := publishSteadily(t, conn, q, want)
		waitFor(t, "a tenth handled", 30*time.Second, func() bool { return l.count() >= want/10 })

		if err := c.Pause(t.Context()); err != nil {
			t.Fatal(err)
		}
		l.paused.Store(true)
		if st := c.Status(); st.State != acemq.ConsumerPaused || len(st.PausedBy) != 1 || st.PausedBy[0] != acemq.PausedByOperator || st.Running != 0 {
			t.Errorf("Status after Pause = %+v; want paused by the operator, nothing running", st)
		}
		if h := conn.Health(t.Context()); h.PausedConsumers != 1 || !h.Ready() {
			t.Errorf("Health while paused: %d paused, ready %t; want 1 paused and ready", h.PausedConsumers, h.Ready())
		}
		published()
		// Paused: the queue holds what is not handled, and no consumer.
		handledBefore := l.count()
		waitFor(t, "the rest of the messages in the queue", 30*time.Second, func() bool {
			st, err := conn.InspectQueue(t.Context(), q)
			return err == nil && st.Consumers == 0 && st.Messages == want-handledBefore
		})
		if err := c.Pause(t.Context()); err != nil {
			t.Errorf("pausing again: %v", err)
		}
		l.paused.Store(false)
		if n := l.onPause.Load(); n != 0 {
			t.Errorf("%d handlers ran while the consumer was paused", n)
		}

		if err := c.Resume(t.Context()); err != nil {
			t.Fatal(err)
		}
		if st := c.Status(); st.State != acemq.ConsumerRunning || len(st.PausedBy) != 0 {
			t.Errorf("Status after Resume = %+v; want running", st)
		}
		l.check(t, c)
		if got := conn.Consumer("orders-worker"); got != c {
			t.Errorf("Conn.Consumer(orders-worker) = %v, want the consumer", got)
		}
	})
}

func TestRescaleFromOneToEightAndBackUnderLoadLosesNothing(t *testing.T) {
	onBoth(t, func(t *testing.T, connect func(...acemq.ConnOption) *acemq.Conn, queue func(*acemq.Conn, acemq.RetryPolicy) string) {
		conn := connect()
		policy := acemq.Fixed(3, 50*time.Millisecond)
		q := queue(conn, policy)
		const want = 600
		l := newLedger(want)
		c := consume(t, conn, q, l.handler(2*time.Millisecond), acemq.WithPolicy(policy),
			acemq.WithConcurrency(1), acemq.WithPrefetch(5))
		published := publishSteadily(t, conn, q, want)
		waitFor(t, "some handled at 1", 30*time.Second, func() bool { return l.count() >= 50 })
		if n := l.maxSeen.Load(); n != 1 {
			t.Errorf("%d handlers ran at once at concurrency 1", n)
		}

		if err := c.Rescale(t.Context(), acemq.Scale{Concurrency: 8, Prefetch: 40}); err != nil {
			t.Fatal(err)
		}
		if st := c.Status(); st.Scale != (acemq.Scale{Concurrency: 8, Prefetch: 40}) {
			t.Errorf("Status().Scale = %+v after rescaling to 8/40", st.Scale)
		}
		waitFor(t, "some handled at 8", 30*time.Second, func() bool { return l.count() >= 300 })
		if err := c.Rescale(t.Context(), acemq.Scale{Concurrency: 1, Prefetch: 1}); err != nil {
			t.Fatal(err)
		}
		published()
		l.check(t, c)
		if n := l.maxSeen.Load(); n > 8 {
			t.Errorf("%d handlers ran at once; the concurrency was at most 8", n)
		}
	})
}

// Concurrency bounds handlers across the change of subscription a new
// prefetch takes: the old subscription's deliveries wait for a free worker.
func TestRescaleKeepsTheConcurrencyAcrossANewSubscription(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	declareClassic(t, conn, "orders")
	l := newLedger(200)
	c := consume(t, conn, "orders", l.handler(time.Millisecond), acemq.WithConcurrency(2), acemq.WithPrefetch(50))
	published := publishSteadily(t, conn, "orders", 200)
	for _, p := range []int{3, 60, 1, 20} {
		if err := c.Rescale(t.Context(), acemq.Scale{Prefetch: p}); err != nil {
			t.Fatal(err)
		}
	}
	published()
	l.check(t, c)
	if n := l.maxSeen.Load(); n > 2 {
		t.Errorf("%d handlers ran at once at concurrency 2", n)
	}
}

// What a replaced subscription holds is handled though no more messages
// come: the one worker does not wait on the new subscription, which has
// nothing to deliver, while the old one's prefetched deliveries wait.
func TestRescaleHandlesWhatTheReplacedSubscriptionHolds(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	declareClassic(t, conn, "orders")
	const want = 20
	pub := acemqtest.NewPublisher[item](t, conn, "")
	for n := range want {
		if err := pub.Publish(t.Context(), "orders", item{N: n}); err != nil {
			t.Fatal(err)
		}
	}
	l := newLedger(want)
	handle := l.handler(0)
	started, release := make(chan struct{}), make(chan struct{})
	var first sync.Once
	c := consume(t, conn, "orders", func(ctx context.Context, m acemq.Message[item]) acemq.Decision {
		first.Do(func() { close(started); <-release })
		return handle(ctx, m)
	}, acemq.WithConcurrency(1), acemq.WithPrefetch(50))
	<-started
	waitFor(t, "every message prefetched", 10*time.Second, func() bool { return len(b.Messages(t, "orders")) == 0 })
	if err := c.Rescale(t.Context(), acemq.Scale{Prefetch: 10}); err != nil {
		t.Fatal(err)
	}
	close(release)
	l.check(t, c)
}

func TestRunTimeControlRefusals(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	declareClassic(t, conn, "orders")
	h := func(context.Context, acemq.Message[item]) acemq.Decision { return acemq.Accept() }
	c := consume(t, conn, "orders", h)
	second := consume(t, conn, "orders", h)
	if c.ID() != "orders" || second.ID() != "orders-2" {
		t.Errorf("default ids %q and %q, want orders and orders-2", c.ID(), second.ID())
	}
	if _, err := acemq.Consume(t.Context(), conn, "orders", h, acemq.WithConsumerID("orders")); !errors.Is(err, acemq.ErrInvalidOption) {
		t.Errorf("a duplicate id: %v, want ErrInvalidOption", err)
	}
	if ids := []string{conn.Consumers()[0].ID(), conn.Consumers()[1].ID()}; ids[0] != "orders" || ids[1] != "orders-2" {
		t.Errorf("Conn.Consumers() = %v", ids)
	}
	for _, s := range []acemq.Scale{{Concurrency: -1}, {Prefetch: -1}, {Prefetch: 70000}} {
		if err := c.Rescale(t.Context(), s); !errors.Is(err, acemq.ErrInvalidOption) {
			t.Errorf("Rescale(%+v) = %v, want ErrInvalidOption", s, err)
		}
	}
	if _, err := c.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if conn.Consumer("orders") != nil {
		t.Error("a closed consumer is still found by its id")
	}
	for name, op := range map[string]func(context.Context) error{
		"Pause": c.Pause, "Resume": c.Resume,
		"Rescale": func(ctx context.Context) error { return c.Rescale(ctx, acemq.Scale{Concurrency: 2}) },
	} {
		if err := op(t.Context()); !errors.Is(err, acemq.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
	if st := c.Status(); st.State != acemq.ConsumerClosed {
		t.Errorf("State after Close = %q", st.State)
	}
}

// Closing a paused consumer hands back nothing more and returns at once.
func TestClosePausedConsumer(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	declareClassic(t, conn, "orders")
	l := newLedger(10)
	c := consume(t, conn, "orders", l.handler(0))
	published := publishSteadily(t, conn, "orders", 10)
	published()
	l.check(t, c)
	if err := c.Pause(t.Context()); err != nil {
		t.Fatal(err)
	}
	report, err := c.Close(t.Context())
	if err != nil || report != (acemq.ShutdownReport{}) {
		t.Errorf("Close of a paused consumer = %+v, %v", report, err)
	}
}
