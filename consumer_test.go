package acemq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/option"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

type order struct {
	ID     int    `json:"id"`
	Action string `json:"action"`
}

// handleOrders settles each order as its action says.
func handleOrders(_ context.Context, m Message[order]) Decision {
	switch m.Body.Action {
	case "accept":
		return Accept()
	case "retry":
		return Retry(errors.New("try again"))
	case "fatal":
		return Retry(Fatal(errors.New("card declined")))
	case "reject":
		return Reject(errors.New("no such product"))
	case "park":
		return Park(errors.New("needs a person"))
	case "panic":
		panic("boom")
	}
	return Decision{}
}

func startConsumer(t *testing.T, f *fakeTransport, opts ...ConsumeOption) *Consumer {
	t.Helper()
	opts = append([]ConsumeOption{withTestBackoff()}, opts...)
	c, err := Consume(context.Background(), f.conn(), "orders", handleOrders, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	return c
}

func withTestBackoff() ConsumeOption {
	return consumeOption(option.Named("withTestBackoff", func(o *options) error {
		o.cons.backoff = time.Millisecond
		return nil
	}))
}

// next waits for the next settlement, failing the test after a generous
// deadline (never reached when the consumer works).
func next(t *testing.T, settled chan string) string {
	t.Helper()
	select {
	case s := <-settled:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no settlement")
		return ""
	}
}

func TestConsumerSettlesEachDecision(t *testing.T) {
	tests := []struct {
		body        string
		target      string // "" when only acked
		reason      string // x-acemq-error, "" for none
		attempt     any    // x-acemq-attempt of the republish
		settledWith string
	}{
		{`{"id":1,"action":"accept"}`, "", "", nil, "ack"},
		{`{"id":2,"action":"reject"}`, "orders.dlq", "no such product", int64(1), "ack"},
		{`{"id":3,"action":"fatal"}`, "orders.dlq", "card declined", int64(1), "ack"},
		{`{"id":4,"action":"park"}`, "orders.parked", "needs a person", int64(1), "ack"},
		{`{"id":5,"action":"panic"}`, "orders.dlq", "handler panicked: boom", int64(1), "ack"},
		{`{"id":6,"action":"nothing"}`, "orders.dlq", "the handler returned no decision", int64(1), "ack"},
		{`not json`, "orders.parked", "could not be decoded: ", int64(1), "ack"},
		{`{"id":8,"action":"retry"}`, "orders.dlq", "exhausted 1 attempts: try again", int64(1), "ack"},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			f := newFake()
			c := startConsumer(t, f)
			settled := make(chan string, 10)
			f.deliver("m", tt.body, transport.Table{contract.HeaderAttempt: int64(1), "tenant": "acme"}, settled)
			if got := next(t, settled); got != "m "+tt.settledWith {
				t.Fatalf("settled with %q, want %q", got, tt.settledWith)
			}
			pubs := f.publishes()
			if tt.target == "" {
				if len(pubs) != 0 {
					t.Fatalf("published %v, want nothing", pubs)
				}
				waitStats(t, c, Stats{Accepted: 1})
				return
			}
			if len(pubs) != 1 {
				t.Fatalf("published %d messages, want 1", len(pubs))
			}
			p := pubs[0]
			if p.Exchange != "" || p.RoutingKey != tt.target || !p.Mandatory {
				t.Errorf("published to %q/%q mandatory=%v, want the default exchange and %s", p.Exchange, p.RoutingKey, p.Mandatory, tt.target)
			}
			reason, _ := p.Message.Headers[contract.HeaderError].(string)
			if !strings.HasPrefix(reason, tt.reason) {
				t.Errorf("reason %q, want %q", reason, tt.reason)
			}
			if p.Message.Headers[contract.HeaderAttempt] != tt.attempt || p.Message.Headers["tenant"] != "acme" || string(p.Message.Body) != tt.body {
				t.Errorf("republished %+v, want the original with its attempt", p.Message)
			}
		})
	}
}

// Without WithRungs, the ladder is at-least-once: quorum rungs that
// dead-letter at least once and refuse what they cannot hold.
func TestConsumerDeclaresItsLadderBeforeConsuming(t *testing.T) {
	f := newFake()
	startConsumer(t, f, WithPolicy(Fixed(3, time.Minute)))
	got := strs(f.Declarations)
	want := strs(mustLadderOf(t, "orders", Fixed(3, time.Minute), contract.AtLeastOnceRungs).Declarations())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("declared\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	rung := `queue orders.retry.quorum.1m (quorum, durable) {x-dead-letter-exchange: "acemq.retry", x-dead-letter-routing-key: "orders", ` +
		`x-dead-letter-strategy: "at-least-once", x-message-ttl: 60000, x-overflow: "reject-publish"}`
	if !slices.Contains(got, rung) {
		t.Errorf("declared no %s", rung)
	}
}

// In a cluster, a classic queue of the ladder whose node is down cannot be
// declared (NOT_FOUND). The consumer consumes without it rather than not at
// all, and says so; its republishes there come back unroutable, which the
// consumer survives (TestConsumerRetries, TestConsumerRequeuesWhenTheSetAsideFails).
func TestConsumerConsumesWhileALadderQueueIsDown(t *testing.T) {
	f := newFake()
	f.down = map[string]bool{"orders.retry.1m": true, "orders.dlq": true}
	var logs strings.Builder
	conn := f.conn()
	conn.logger = slog.New(slog.NewTextHandler(&logs, nil))
	// A classic rung can be down so: contract rungs.
	c, err := Consume(context.Background(), conn, "orders", handleOrders, WithPolicy(Fixed(3, time.Minute)), WithRungs(contract.ContractRungs))
	if err != nil {
		t.Fatalf("Consume with a ladder queue down: %v", err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	var want []string
	for _, d := range strs(mustLadder(t, "orders", Fixed(3, time.Minute)).Declarations()) {
		if !strings.Contains(d, "orders.retry.1m") && !strings.Contains(d, "orders.dlq") {
			want = append(want, d)
		}
	}
	if got := strs(f.Declarations); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("declared\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for _, q := range []string{"orders.retry.1m", "orders.dlq"} {
		if !strings.Contains(logs.String(), "unavailable="+q) {
			t.Errorf("no warning names %s:\n%s", q, logs.String())
		}
	}
}

// On RabbitMQ 4.3 the declaration of a classic queue whose cluster node is
// down answers NOT_FOUND only after 69s (3.10 at once): a consumer
// recovering from its node's loss waited that long for each of Q.dlq and
// Q.parked before consuming again (found by TestChaosFailover on the 4.3
// cluster). It passes over a ladder queue whose declaration does not
// answer within ladderDeclareBound, as over one refused.
func TestConsumerConsumesWhileALadderQueueDeclarationHangs(t *testing.T) {
	f := newFake()
	f.hung = map[string]bool{"orders.dlq": true}
	var logs strings.Builder
	conn := f.conn()
	conn.logger = slog.New(slog.NewTextHandler(&logs, nil))
	started := make(chan error, 1)
	go func() {
		c, err := Consume(context.Background(), conn, "orders", handleOrders, WithPolicy(Fixed(3, time.Minute)))
		if err == nil {
			t.Cleanup(func() { _, _ = c.Close(context.Background()) })
		}
		started <- err
	}()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("Consume with a ladder queue's declaration hung: %v", err)
		}
	case <-time.After(time.Minute): // a liveness bound: it hangs forever when broken
		t.Fatal("Consume did not return while a ladder queue's declaration hung")
	}
	if !strings.Contains(logs.String(), "unavailable=orders.dlq") {
		t.Errorf("no warning names orders.dlq:\n%s", logs.String())
	}
}

func TestConsumerRetries(t *testing.T) {
	tests := []struct {
		name    string
		policy  RetryPolicy
		confirm func(transport.Publishing) error
		target  []string // the queues republished to, in order
		stats   Stats
	}{
		{"in the consumer", Fixed(3, time.Millisecond), nil, []string{"orders"},
			Stats{RetriedInConsumer: 1}},
		{"on a rung", Fixed(3, 2*time.Second).WaitInBrokerFrom(time.Second), nil, []string{"orders.retry.quorum.2s"},
			Stats{RetriedOnRung: 1}},
		{"a missing rung falls back to the consumer", Fixed(3, 5*time.Millisecond).WaitInBrokerFrom(time.Millisecond),
			func(p transport.Publishing) error {
				if strings.Contains(p.RoutingKey, ".retry.") {
					return transport.ErrUnroutable
				}
				return nil
			}, []string{"orders.retry.quorum.0s", "orders"},
			Stats{RetriedInConsumer: 1, RungMissing: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.confirm = tt.confirm
			c := startConsumer(t, f, WithPolicy(tt.policy))
			settled := make(chan string, 10)
			f.deliver("m", `{"action":"retry"}`, transport.Table{contract.HeaderAttempt: int64(1)}, settled)
			if got := next(t, settled); got != "m ack" {
				t.Fatalf("settled with %q, want an ack after the republish", got)
			}
			var targets []string
			for _, p := range f.publishes() {
				targets = append(targets, p.RoutingKey)
				if p.Message.Headers[contract.HeaderAttempt] != int64(2) {
					t.Errorf("republished with attempt %v, want 2", p.Message.Headers[contract.HeaderAttempt])
				}
			}
			if strings.Join(targets, ",") != strings.Join(tt.target, ",") {
				t.Errorf("republished to %v, want %v", targets, tt.target)
			}
			waitStats(t, c, tt.stats)
		})
	}
}

// waitStats waits for the counts to reach want: they are updated just after
// the settlement the test saw.
func waitStats(t *testing.T, c *Consumer, want Stats) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.Stats() != want {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v, want %+v", c.Stats(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// A set-aside whose republish fails leaves the message on the broker.
func TestConsumerRequeuesWhenTheSetAsideFails(t *testing.T) {
	f := newFake()
	f.confirm = func(p transport.Publishing) error { return transport.ErrUnroutable } // no orders.dlq
	c := startConsumer(t, f)
	settled := make(chan string, 10)
	f.deliver("m", `{"action":"reject"}`, nil, settled)
	// A reject, not a nack: RabbitMQ 4.3 counts only a reject towards the
	// delivery limit that ends the loop (brokerversion.NackCounts).
	if got := next(t, settled); got != "m reject requeue=true" {
		t.Fatalf("settled with %q, want a requeue by reject", got)
	}
	waitStats(t, c, Stats{SetAsideFailed: 1, Requeued: 1})
}

// A message whose set-aside fails goes back to its queue as a copy, its
// attempt as it was, no reason, no delivery count, and only then is the
// original acked: a quorum queue counts every requeue towards its delivery
// limit, a copy starts again.
func TestConsumerPutsAMessageBackAfterAFailedSetAside(t *testing.T) {
	f := newFake()
	f.confirm = func(p transport.Publishing) error {
		if p.RoutingKey == "orders.dlq" {
			return transport.ErrUnroutable
		}
		return nil
	}
	c := startConsumer(t, f)
	settled := make(chan string, 10)
	f.deliver("m", `{"action":"reject"}`, transport.Table{contract.HeaderAttempt: int64(3), "x-delivery-count": int64(19), "tenant": "acme"}, settled)
	if got := next(t, settled); got != "m ack" {
		t.Fatalf("settled with %q, want an ack once the copy is confirmed", got)
	}
	waitStats(t, c, Stats{SetAsideFailed: 1, PutBack: 1})
	pubs := f.publishes()
	if len(pubs) != 2 || pubs[0].RoutingKey != "orders.dlq" || pubs[1].RoutingKey != "orders" {
		t.Fatalf("published %v, want orders.dlq then orders", pubs)
	}
	back := pubs[1]
	want := transport.Table{contract.HeaderAttempt: int64(3), "tenant": "acme"}
	if !back.Mandatory || !back.Message.Persistent || back.Exchange != "" || fmt.Sprint(back.Message.Headers) != fmt.Sprint(want) {
		t.Errorf("the copy: %+v, want mandatory, persistent, through the default exchange, headers %v", back, want)
	}
}

// An unconfirmed republish is never followed by an ack.
func TestConsumerNeverAcksBeforeTheConfirm(t *testing.T) {
	f := newFake()
	f.confirm = func(p transport.Publishing) error { return transport.ErrRefused }
	startConsumer(t, f)
	settled := make(chan string, 10)
	f.deliver("m", `{"action":"park"}`, nil, settled)
	if got := next(t, settled); got != "m reject requeue=true" {
		t.Fatalf("settled with %q, want a requeue by reject", got)
	}
}

// Close mid-wait hands the message back unacknowledged, and what was
// prefetched but not started goes back too.
func TestConsumerCloseMidWait(t *testing.T) {
	f := newFake()
	c, err := Consume(context.Background(), f.conn(), "orders", handleOrders,
		WithPolicy(Fixed(3, time.Hour).WaitInBrokerFrom(0)))
	if err != nil {
		t.Fatal(err)
	}
	settled := make(chan string, 10)
	f.deliver("waiting", `{"action":"retry"}`, nil, settled)
	deadline := time.Now().Add(10 * time.Second)
	for c.Stats().Waiting != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the message never started its wait")
		}
		time.Sleep(time.Millisecond)
	}
	report, err := c.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := next(t, settled); got != "waiting nack requeue=true" {
		t.Errorf("the waiting message was settled with %q, want a requeue", got)
	}
	if report.WaitsCutShort != 1 || len(f.publishes()) != 0 {
		t.Errorf("report %+v, %d publishes; want one wait cut short and nothing republished", report, len(f.publishes()))
	}
}

func TestConsumerCloseRequeuesWhatWasNotStarted(t *testing.T) {
	f := newFake()
	started, release := make(chan struct{}), make(chan struct{})
	h := func(ctx context.Context, m Message[order]) Decision {
		close(started)
		<-release
		return Accept()
	}
	c, err := Consume(context.Background(), f.conn(), "orders", h)
	if err != nil {
		t.Fatal(err)
	}
	settled := make(chan string, 10)
	f.deliver("first", `{}`, nil, settled)
	<-started
	f.deliver("second", `{}`, nil, settled)
	f.deliver("third", `{}`, nil, settled)
	done := make(chan ShutdownReport)
	go func() {
		r, _ := c.Close(context.Background())
		done <- r
	}()
	<-f.cancelled // Close has stopped new work
	close(release)
	report := <-done
	// The two not started go back as Close begins, before the first's
	// handler returns.
	got := []string{next(t, settled), next(t, settled), next(t, settled)}
	slices.Sort(got)
	want := "first ack,second nack requeue=true,third nack requeue=true"
	if strings.Join(got, ",") != want {
		t.Errorf("settled %v, want %s", got, want)
	}
	if report.Requeued != 2 {
		t.Errorf("report %+v, want 2 requeued", report)
	}
}

// A handler still running at the drain timeout gets its context cancelled.
func TestConsumerCloseCancelsSlowHandlers(t *testing.T) {
	f := newFake()
	started := make(chan struct{})
	h := func(ctx context.Context, m Message[order]) Decision {
		close(started)
		<-ctx.Done()
		return Retry(ctx.Err())
	}
	c, err := Consume(context.Background(), f.conn(), "orders", h, WithDrainTimeout(time.Millisecond),
		WithPolicy(Fixed(2, time.Hour).WaitInBrokerFrom(0)))
	if err != nil {
		t.Fatal(err)
	}
	settled := make(chan string, 10)
	f.deliver("slow", `{}`, nil, settled)
	<-started
	if _, err := c.Close(context.Background()); !errors.Is(err, ErrDrainTimeout) {
		t.Fatalf("Close at the drain timeout: %v, want ErrDrainTimeout", err)
	}
	if got := next(t, settled); got != "slow nack requeue=true" {
		t.Errorf("settled with %q, want a requeue (its retry wait could not start)", got)
	}
}

func TestConsumeRefusesBadOptions(t *testing.T) {
	f := newFake()
	for _, opts := range [][]ConsumeOption{
		{WithConcurrency(0)}, {WithPrefetch(-1)}, {WithPrefetch(65536)}, {WithPolicy(Fixed(0, time.Second))},
	} {
		if _, err := Consume(context.Background(), f.conn(), "orders", handleOrders, opts...); err == nil {
			t.Errorf("Consume accepted bad options")
		}
	}
	if _, err := Consume[order](context.Background(), f.conn(), "orders", nil); err == nil {
		t.Errorf("Consume accepted a nil handler")
	}
}

// scheduleClock is a manual clock that says on scheduled each wait it was
// asked for, so that a test advances it only once the timer is set.
type scheduleClock struct {
	*memory.ManualClock
	scheduled chan time.Duration
}

func (c scheduleClock) AfterFunc(d time.Duration, f func()) func() bool {
	stop := c.ManualClock.AfterFunc(d, f)
	c.scheduled <- d
	return stop
}

// stuckHandler handles like handleOrders once release is closed, ignoring
// its context until then; started is closed when it is called.
func stuckHandler(started, release chan struct{}) Handler[order] {
	return func(ctx context.Context, m Message[order]) Decision {
		close(started)
		<-release
		return handleOrders(ctx, m)
	}
}

// within fails the test if ch is not closed or sent on after a generous
// deadline (never reached when the consumer works).
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal(what)
		var zero T
		return zero
	}
}

// A handler that ignores its context holds Close only until the drain
// timeout. What it decides afterwards is still carried out safely: acked
// only once handled and any republish confirmed, handed back otherwise.
func TestConsumerCloseReturnsAtTheDrainTimeout(t *testing.T) {
	refuse := func(transport.Publishing) error { return transport.ErrRefused }
	tests := []struct {
		action  string
		policy  RetryPolicy
		confirm func(transport.Publishing) error
		settled string
		target  []string // republished to
	}{
		{"accept", NoRetry(), nil, "stuck ack", nil},
		{"reject", NoRetry(), nil, "stuck ack", []string{"orders.dlq"}},
		{"park", NoRetry(), refuse, "stuck nack requeue=true", []string{"orders.parked"}},
		{"retry", Fixed(3, 2*time.Second).WaitInBrokerFrom(time.Second), nil, "stuck ack", []string{"orders.retry.quorum.2s"}},
		// Its wait in the consumer cannot start once closed.
		{"retry", Fixed(3, time.Hour).WaitInBrokerFrom(0), nil, "stuck nack requeue=true", nil},
	}
	for _, tt := range tests {
		t.Run(tt.action+" "+strings.Join(tt.target, ","), func(t *testing.T) {
			f := newFake()
			f.confirm = tt.confirm
			clock := scheduleClock{memory.NewManualClock(time.Now()), make(chan time.Duration, 10)}
			conn := f.conn()
			conn.clock = clock
			started, release := make(chan struct{}), make(chan struct{})
			c, err := Consume(context.Background(), conn, "orders", stuckHandler(started, release),
				WithDrainTimeout(time.Second), WithPolicy(tt.policy), withTestBackoff())
			if err != nil {
				t.Fatal(err)
			}
			settled := make(chan string, 10)
			f.deliver("stuck", `{"action":"`+tt.action+`"}`, nil, settled)
			<-started

			type closed struct {
				report ShutdownReport
				err    error
			}
			done := make(chan closed, 1)
			go func() {
				r, err := c.Close(context.Background())
				done <- closed{r, err}
			}()
			if d := within(t, clock.scheduled, "Close set no drain timer on the Conn's clock"); d != time.Second {
				t.Fatalf("Close waits %v, want the drain timeout of 1s", d)
			}
			select {
			case <-done:
				t.Fatal("Close returned before the drain timeout")
			default:
			}
			clock.Advance(time.Second)
			got := within(t, done, "Close did not return at the drain timeout")
			// release is still open: the handler has not returned.
			if !errors.Is(got.err, ErrDrainTimeout) || got.report.Abandoned != 1 {
				t.Fatalf("Close = %+v, %v; want one handler abandoned and ErrDrainTimeout", got.report, got.err)
			}
			select {
			case s := <-settled:
				t.Fatalf("settled with %q before the handler returned", s)
			default:
			}

			close(release)
			if s := next(t, settled); s != tt.settled {
				t.Errorf("the late decision settled with %q, want %q", s, tt.settled)
			}
			var targets []string
			for _, p := range f.publishes() {
				targets = append(targets, p.RoutingKey)
			}
			if !slices.Equal(targets, tt.target) {
				t.Errorf("republished to %v, want %v", targets, tt.target)
			}
		})
	}
}

// A republish still unconfirmed at the drain timeout is reported; it goes
// on, and its original is acked only once it is confirmed.
func TestConsumerCloseReportsSettlementsUnderWay(t *testing.T) {
	f := newFake()
	publishing, confirm := make(chan struct{}), make(chan struct{})
	f.confirm = func(transport.Publishing) error {
		close(publishing)
		<-confirm
		return nil
	}
	clock := scheduleClock{memory.NewManualClock(time.Now()), make(chan time.Duration, 10)}
	conn := f.conn()
	conn.clock = clock
	c, err := Consume(context.Background(), conn, "orders", handleOrders, WithDrainTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	settled := make(chan string, 10)
	f.deliver("m", `{"action":"reject"}`, nil, settled)
	within(t, publishing, "the rejected message was not republished")
	done := make(chan ShutdownReport, 1)
	go func() {
		r, _ := c.Close(context.Background())
		done <- r
	}()
	within(t, clock.scheduled, "Close set no drain timer on the Conn's clock")
	clock.Advance(time.Second)
	if r := within(t, done, "Close did not return at the drain timeout"); r.Settling != 1 || r.Abandoned != 0 {
		t.Errorf("report %+v, want one settlement under way and no handler", r)
	}
	select {
	case s := <-settled:
		t.Fatalf("settled with %q before the republish was confirmed", s)
	default:
	}
	close(confirm)
	if s := next(t, settled); s != "m ack" {
		t.Errorf("settled with %q, want an ack once confirmed", s)
	}
}

// createdBy lists the goroutines that fn started and that are still alive.
func createdBy(fn string) []string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var found []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "\ncreated by "+fn+" in goroutine ") {
			found = append(found, g)
		}
	}
	return found
}

// Close whose context has ended leaves no goroutine of its own behind: the
// abandoned handler runs on in the consumer's worker, which is counted and
// ends once the handler returns and its delivery is settled.
func TestConsumerCloseLeavesNoGoroutineBehind(t *testing.T) {
	f := newFake()
	started, release := make(chan struct{}), make(chan struct{})
	c, err := Consume(context.Background(), f.conn(), "orders", stuckHandler(started, release))
	if err != nil {
		t.Fatal(err)
	}
	settled := make(chan string, 10)
	f.deliver("stuck", `{"action":"accept"}`, nil, settled)
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	report, err := c.Close(ctx)
	if !errors.Is(err, ErrDrainTimeout) || report.Abandoned != 1 {
		t.Fatalf("Close = %+v, %v; want one handler abandoned and ErrDrainTimeout", report, err)
	}
	if left := createdBy("github.com/acemq-go/acemq.(*Consumer).Close"); len(left) > 0 {
		t.Errorf("Close left %d goroutines running:\n%s", len(left), strings.Join(left, "\n\n"))
	}
	if n := c.workers.count(); n != 1 {
		t.Errorf("%d workers running, want the abandoned handler's", n)
	}
	close(release)
	within(t, c.workers.idle(), "the worker did not end once its handler returned")
	if s := next(t, settled); s != "stuck ack" {
		t.Errorf("settled with %q, want an ack", s)
	}
}

func TestConsumerCloseTwiceIsErrClosed(t *testing.T) {
	c := startConsumer(t, newFake())
	if _, err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Close(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("the second Close = %v, want an error matching ErrClosed", err)
	}
}
