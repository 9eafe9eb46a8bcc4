package acemq_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport/memory"
)

// breakerEvents writes down a consumer's breaker transitions.
type breakerEvents struct {
	acemq.NopObserver
	mu     sync.Mutex
	events []acemq.Event
}

func (r *breakerEvents) Event(e acemq.Event) {
	if e.Kind == acemq.EventBreakerChanged {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, e)
	}
}

func (r *breakerEvents) states() []acemq.BreakerState {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []acemq.BreakerState
	for _, e := range r.events {
		out = append(out, e.Breaker)
	}
	return out
}

// waitKinds waits up to 10s for the transitions told to be want.
func (r *breakerEvents) waitStates(t *testing.T, want ...acemq.BreakerState) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !slices.Equal(r.states(), want); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("breaker transitions %v, want %v", r.states(), want)
		}
	}
}

// waitStatus waits up to 10s for the consumer's status to satisfy cond.
func waitStatus(t *testing.T, c *acemq.Consumer, what string, cond func(acemq.ConsumerStatus) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(c.Status()); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: the consumer's status is %+v", what, c.Status())
		}
	}
}

var errDependencyDown = errors.New("the payment service is down")

// A dependency that fails: the breaker trips after 3 failures in a row and
// pauses the consumer; the messages stay on the queue, none dead-lettered
// and none with an attempt spent but the two retried before it tripped;
// after the cool-down one probe closes it and the queue drains.
func TestCircuitBreakerPausesUntilTheDependencyIsBack(t *testing.T) {
	b := acemqtest.NewBroker(t)
	events := &breakerEvents{}
	conn := b.Connect(t, acemq.WithObserver(events))
	ctx := context.Background()
	policy := acemq.Fixed(3, time.Second)
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "payments", Retry: &policy}}}
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	const n = 10
	pub := acemqtest.NewPublisher[int](t, conn, "")
	for i := range n {
		if err := pub.Publish(ctx, "payments", i); err != nil {
			t.Fatal(err)
		}
	}
	var down atomic.Bool
	down.Store(true)
	var mu sync.Mutex
	attempts := map[int]int{} // accepted body → its attempt
	c, err := acemq.Consume(ctx, conn, "payments", func(_ context.Context, m acemq.Message[int]) acemq.Decision {
		if down.Load() {
			return acemq.Retry(errDependencyDown)
		}
		mu.Lock()
		defer mu.Unlock()
		attempts[m.Body] = m.Envelope.Attempt
		return acemq.Accept()
	}, acemq.WithPolicy(policy), acemq.WithCircuitBreaker(acemq.CircuitBreaker{ConsecutiveFailures: 3, FailureRatio: -1, CoolDown: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)

	events.waitStates(t, acemq.BreakerOpen)
	if r := events.events[0].Reason; r != "3 failures in a row" {
		t.Errorf("opened because %q", r)
	}
	waitStatus(t, c, "the pause", func(s acemq.ConsumerStatus) bool {
		return s.State == acemq.ConsumerPaused && s.Running == 0 && s.Breaker == acemq.BreakerOpen &&
			slices.Equal(s.PausedBy, []acemq.PauseCause{acemq.PausedByBreaker})
	})
	// The two retries held in the consumer go back to the queue when due;
	// then every message waits there, ready: none is taken while open.
	b.Advance(time.Second)
	acemqtest.WaitFor(t, c, "the held retries", func(s acemq.Stats) bool { return s.Waiting == 0 && s.RetriedInConsumer == 2 })
	for deadline := time.Now().Add(10 * time.Second); len(b.Messages(t, "payments")) != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the queue holds %d ready messages while the breaker is open, want %d", len(b.Messages(t, "payments")), n)
		}
	}
	// The failure that opened it went back as a copy, which is on the queue
	// before its original is acknowledged and counted.
	acemqtest.WaitFor(t, c, "the failure put back", func(s acemq.Stats) bool { return s.PutBack > 0 })
	if s := c.Stats(); s.DeadLettered != 0 {
		t.Fatalf("while open: %+v", s)
	}

	down.Store(false)
	b.Advance(10 * time.Second)
	events.waitStates(t, acemq.BreakerOpen, acemq.BreakerHalfOpen, acemq.BreakerClosed)
	acemqtest.WaitFor(t, c, "the drain", func(s acemq.Stats) bool { return s.Accepted == n })
	waitStatus(t, c, "running again", func(s acemq.ConsumerStatus) bool {
		return s.State == acemq.ConsumerRunning && s.Breaker == acemq.BreakerClosed
	})
	mu.Lock()
	defer mu.Unlock()
	spent := 0
	for _, a := range attempts {
		spent += a - 1
	}
	if spent != 2 {
		t.Errorf("attempts spent %d, want 2 (the retries before the breaker opened): %v", spent, attempts)
	}
	if left := b.Messages(t, contract.DeadLetterQueue("payments")); len(left) != 0 {
		t.Errorf("%d dead-lettered", len(left))
	}
}

// What is the message's own fault counts neither way: a run of them does
// not open the breaker, however long; nor does it break a run of the
// dependency's failures.
func TestCircuitBreakerCountsOnlyTheDependencysFailures(t *testing.T) {
	b := acemqtest.NewBroker(t)
	events := &breakerEvents{}
	conn := b.Connect(t, acemq.WithObserver(events))
	ctx := context.Background()
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: "faults"}}}).Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	decisions := map[string]acemq.Decision{
		"reject": acemq.Reject(errors.New("no")), "fatal": acemq.Retry(acemq.Fatal(errors.New("bad"))),
		"park": acemq.Park(errors.New("later")), "none": {}, "fail": acemq.Retry(errDependencyDown),
	}
	c, err := acemq.Consume(ctx, conn, "faults", func(_ context.Context, m acemq.Message[string]) acemq.Decision {
		if m.Body == "panic" {
			panic("the message's fault")
		}
		return decisions[m.Body]
	}, acemq.WithPolicy(acemq.Fixed(5, time.Hour)), acemq.WithCircuitBreaker(acemq.CircuitBreaker{ConsecutiveFailures: 3, FailureRatio: -1}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	pub := acemqtest.NewPublisher[string](t, conn, "")
	raw := acemqtest.NewPublisher[[]byte](t, conn, "") // a content type the consumer does not read
	send := func(bodies ...string) {
		for _, body := range bodies {
			var err error
			if body == "undecodable" {
				err = raw.Publish(ctx, "faults", []byte("{not json"))
			} else {
				err = pub.Publish(ctx, "faults", body)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	send("fail", "fail")
	for range 3 {
		send("reject", "fatal", "park", "none", "panic", "undecodable")
	}
	acemqtest.WaitFor(t, c, "the message's faults", func(s acemq.Stats) bool { return s.DeadLettered+s.Parked == 18 })
	if k := events.states(); len(k) != 0 {
		t.Fatalf("the message's faults moved the breaker: %v", k)
	}
	send("fail")
	events.waitStates(t, acemq.BreakerOpen)
}

func TestCircuitBreakerOptions(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	ctx := context.Background()
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: "q"}}}).Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	h := func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() }
	for _, bad := range []acemq.CircuitBreaker{{FailureRatio: 1.5}, {FailureRatio: -1, ConsecutiveFailures: -1}, {CoolDown: -time.Second}} {
		if _, err := acemq.Consume(ctx, conn, "q", h, acemq.WithCircuitBreaker(bad)); !errors.Is(err, acemq.ErrInvalidOption) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if _, err := acemq.Consume(ctx, conn, "q", h, acemq.WithCircuitBreaker(acemq.CircuitBreaker{}), acemq.WithAppendOnly(acemq.AppendOnly{})); !errors.Is(err, acemq.ErrInvalidOption) {
		t.Errorf("with an append-only consumer: %v", err)
	}
}

// countingClock counts the timers set on it and not yet run or stopped.
type countingClock struct {
	*memory.ManualClock
	live atomic.Int64
}

func (c *countingClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.live.Add(1)
	var once sync.Once
	done := func() { once.Do(func() { c.live.Add(-1) }) }
	stop := c.ManualClock.AfterFunc(d, func() { done(); f() })
	return func() bool {
		stopped := stop()
		if stopped {
			done()
		}
		return stopped
	}
}

// Closing a consumer whose breaker is open leaves neither its cool-down's
// timer nor a goroutine of the breaker behind.
func TestClosingAConsumerStopsItsBreaker(t *testing.T) {
	b := acemqtest.NewBroker(t)
	events := &breakerEvents{}
	clock := &countingClock{ManualClock: b.Clock}
	conn := b.Connect(t, acemq.WithObserver(events), acemq.WithClock(clock))
	ctx := context.Background()
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: "down"}}}).Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	c, err := acemq.Consume(ctx, conn, "down", func(context.Context, acemq.Message[string]) acemq.Decision {
		return acemq.Retry(errDependencyDown)
	}, acemq.WithPolicy(acemq.Fixed(5, time.Hour)), acemq.WithCircuitBreaker(acemq.CircuitBreaker{ConsecutiveFailures: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if err := acemqtest.NewPublisher[string](t, conn, "").Publish(ctx, "down", "x"); err != nil {
		t.Fatal(err)
	}
	events.waitStates(t, acemq.BreakerOpen)
	if _, err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := clock.live.Load(); n != 0 {
		t.Errorf("%d timers left after Close", n)
	}
	if n := acemq.BreakerWork(c); n != 0 {
		t.Errorf("%d goroutines and timers of the breaker left after Close", n)
	}
}

// Under load, on memory:// and on RabbitMQ: the dependency is down from the
// start; the breaker opens after 5 failures in a row, the consumer pauses
// and the queue holds every message not yet handled, with no consumer;
// once the dependency is back, the probe closes it and the queue drains:
// nothing dead-lettered, nothing lost, and only the 4 failures before the
// breaker opened spent an attempt.
func TestCircuitBreakerUnderLoadSpendsNoAttemptOnTheOutage(t *testing.T) {
	onBoth(t, func(t *testing.T, connect func(...acemq.ConnOption) *acemq.Conn, queue func(*acemq.Conn, acemq.RetryPolicy) string) {
		events := &breakerEvents{}
		conn := connect(acemq.WithObserver(events))
		policy := acemq.Fixed(3, 100*time.Millisecond)
		q := queue(conn, policy)
		const want = 200
		var up atomic.Bool
		var mu sync.Mutex
		spent := map[int]int{} // accepted number → attempts spent
		c := consume(t, conn, q, func(_ context.Context, m acemq.Message[item]) acemq.Decision {
			if !up.Load() {
				return acemq.Retry(errDependencyDown)
			}
			mu.Lock()
			defer mu.Unlock()
			spent[m.Body.N] = m.Envelope.Attempt - 1
			return acemq.Accept()
		}, acemq.WithPolicy(policy), acemq.WithConcurrency(4), acemq.WithPrefetch(20),
			acemq.WithCircuitBreaker(acemq.CircuitBreaker{ConsecutiveFailures: 5, FailureRatio: -1, CoolDown: 300 * time.Millisecond}))
		items := make([]item, want)
		for i := range items {
			items[i] = item{N: i}
		}
		publish(t, conn, q, items...)

		// Opened, then (the dependency still down) half-open and open again
		// every 300ms: the queue holds every message while it is open.
		waitFor(t, "the breaker open", 10*time.Second, func() bool {
			st := events.states()
			return len(st) > 0 && st[0] == acemq.BreakerOpen
		})
		waitFor(t, "the pause, every message on the queue", 30*time.Second, func() bool {
			st, err := conn.InspectQueue(t.Context(), q)
			s := c.Status()
			return err == nil && st.Consumers == 0 && st.Messages == want && s.State == acemq.ConsumerPaused && s.Stats.Waiting == 0
		})
		up.Store(true)
		waitFor(t, "the drain", 30*time.Second, func() bool { return c.Stats().Accepted >= want })
		if s := c.Stats(); s.DeadLettered != 0 || s.RetriedInConsumer+s.RetriedOnRung != 4 || s.PutBack == 0 {
			t.Errorf("stats %+v; want nothing dead-lettered, the 4 failures before it opened retried, some put back", s)
		}
		mu.Lock()
		defer mu.Unlock()
		total := 0
		for _, n := range spent {
			total += n
		}
		if len(spent) != want || total != 4 {
			t.Errorf("%d of %d accepted, %d attempts spent; want all, 4", len(spent), want, total)
		}
		if st := events.states(); st[len(st)-1] != acemq.BreakerClosed {
			t.Errorf("breaker transitions %v, want the last closed", st)
		}
	})
}

// statusAsker asks the consumer for its status when told of a transition,
// as an admin endpoint pushing changes might.
type statusAsker struct {
	breakerEvents
	consumer atomic.Pointer[acemq.Consumer]
	seen     atomic.Value // the Breaker of the last Status
}

func (s *statusAsker) Event(e acemq.Event) {
	if c := s.consumer.Load(); c != nil && e.Kind == acemq.EventBreakerChanged {
		s.seen.Store(c.Status().Breaker)
	}
	s.breakerEvents.Event(e)
}

// Status answers an observer told of a transition: it does not wait for
// the breaker, which tells it.
func TestAnObserverOfTheBreakerMayAskForTheStatus(t *testing.T) {
	b := acemqtest.NewBroker(t)
	asker := &statusAsker{}
	conn := b.Connect(t, acemq.WithObserver(asker))
	ctx := context.Background()
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: "asked"}}}).Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	c, err := acemq.Consume(ctx, conn, "asked", func(context.Context, acemq.Message[string]) acemq.Decision {
		return acemq.Retry(errDependencyDown)
	}, acemq.WithPolicy(acemq.Fixed(5, time.Hour)), acemq.WithCircuitBreaker(acemq.CircuitBreaker{ConsecutiveFailures: 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	asker.consumer.Store(c)
	if err := acemqtest.NewPublisher[string](t, conn, "").Publish(ctx, "asked", "x"); err != nil {
		t.Fatal(err)
	}
	asker.waitStates(t, acemq.BreakerOpen)
	if got := asker.seen.Load(); got != acemq.BreakerOpen {
		t.Errorf("the observer read %v", got)
	}
}

// A probe that cannot start (the queue was deleted while the breaker was
// open) opens the breaker again for another cool-down, rather than leave it
// half-open with the consumer paused; once the queue is back, a probe
// closes it.
func TestABreakerWhoseProbeCannotStartTriesAgain(t *testing.T) {
	b := acemqtest.NewBroker(t)
	events := &breakerEvents{}
	conn := b.Connect(t, acemq.WithObserver(events))
	ctx := context.Background()
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "gone"}}}
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	var up atomic.Bool
	c, err := acemq.Consume(ctx, conn, "gone", func(context.Context, acemq.Message[string]) acemq.Decision {
		if up.Load() {
			return acemq.Accept()
		}
		return acemq.Retry(errDependencyDown)
	}, acemq.WithPolicy(acemq.Fixed(5, time.Hour)), acemq.WithCircuitBreaker(acemq.CircuitBreaker{ConsecutiveFailures: 1, CoolDown: time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	pub := acemqtest.NewPublisher[string](t, conn, "")
	if err := pub.Publish(ctx, "gone", "x"); err != nil {
		t.Fatal(err)
	}
	events.waitStates(t, acemq.BreakerOpen)
	waitStatus(t, c, "the pause", func(s acemq.ConsumerStatus) bool { return s.State == acemq.ConsumerPaused })
	if _, err := conn.DeleteQueue(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	b.Advance(time.Second)
	events.waitStates(t, acemq.BreakerOpen, acemq.BreakerHalfOpen, acemq.BreakerOpen)
	if r := events.events[2].Reason; !strings.HasPrefix(r, "the probe could not start: ") {
		t.Errorf("opened again because %q", r)
	}
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	up.Store(true)
	if err := pub.Publish(ctx, "gone", "y"); err != nil {
		t.Fatal(err)
	}
	b.Advance(time.Second)
	events.waitStates(t, acemq.BreakerOpen, acemq.BreakerHalfOpen, acemq.BreakerOpen, acemq.BreakerHalfOpen, acemq.BreakerClosed)
	waitStatus(t, c, "running", func(s acemq.ConsumerStatus) bool { return s.State == acemq.ConsumerRunning })
}

// A handler that runs past its timeout is the dependency's failure too: two
// in a row open the breaker, and the second goes back to its queue, its
// attempt unspent.
func TestHandlerTimeoutsOpenTheBreaker(t *testing.T) {
	b := acemqtest.NewBroker(t)
	events := &breakerEvents{}
	conn := b.Connect(t, acemq.WithObserver(events))
	ctx := context.Background()
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: "slow"}}}).Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 10) // a handler runs, its timeout set
	c, err := acemq.Consume(ctx, conn, "slow", func(ctx context.Context, _ acemq.Message[string]) acemq.Decision {
		started <- struct{}{}
		<-ctx.Done() // the dependency never answers
		return acemq.Retry(ctx.Err())
	}, acemq.WithPolicy(acemq.Fixed(5, time.Hour)), acemq.WithHandlerTimeout(time.Second),
		acemq.WithCircuitBreaker(acemq.CircuitBreaker{ConsecutiveFailures: 2, FailureRatio: -1}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { // a handler the test did not time out is abandoned
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, _ = c.Close(cctx)
	}()
	pub := acemqtest.NewPublisher[string](t, conn, "")
	for _, body := range []string{"a", "b"} {
		if err := pub.Publish(ctx, "slow", body); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 2; i++ {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatalf("handler %d did not start", i)
		}
		b.Advance(time.Second)
		acemqtest.WaitFor(t, c, "the timeout's settlement", func(s acemq.Stats) bool { return s.RetriedOnRung+s.PutBack == int64(i) })
	}
	events.waitStates(t, acemq.BreakerOpen)
	if r := events.events[0].Reason; r != "2 failures in a row" {
		t.Errorf("opened because %q", r)
	}
	// The copy put back may reach a handler before the pause: its timeout
	// puts it back again, its attempt still unspent.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if s := c.Status(); s.State == acemq.ConsumerPaused && s.Running == 0 {
			break
		}
		select {
		case <-started:
			b.Advance(time.Second)
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not paused within 10s: %+v", c.Status())
		}
	}
	if s := c.Stats(); s.PutBack < 1 || s.RetriedOnRung != 1 || s.DeadLettered != 0 {
		t.Errorf("stats %+v; want the first on a rung, the second put back", s)
	}
}
