package acemq_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// recorder writes down what an observer is told, one line each, and marks
// the contexts it hands out so that a test can see which one came back.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

type mark struct{}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}

func (r *recorder) PublishStart(ctx context.Context, p *acemq.PublishInfo) context.Context {
	r.add("publish %s %q attempt %v republish=%v", p.Exchange, p.RoutingKey, p.Headers[contract.HeaderAttempt], p.Republish)
	if p.Headers != nil {
		p.Headers["traceparent"] = "from-the-observer"
	}
	return context.WithValue(ctx, mark{}, "publish")
}

func (r *recorder) PublishEnd(ctx context.Context, p *acemq.PublishInfo, res acemq.PublishResult) {
	r.add("published %q attempt %v %s ctx=%v", p.RoutingKey, p.Headers[contract.HeaderAttempt], res.Outcome, ctx.Value(mark{}))
}

func (r *recorder) DeliveryStart(ctx context.Context, d *acemq.DeliveryInfo) context.Context {
	r.add("delivery %s attempt %d traceparent=%v", d.Queue, d.Attempt, d.Headers["traceparent"])
	return context.WithValue(ctx, mark{}, "delivery")
}

func (r *recorder) DeliveryEnd(ctx context.Context, d *acemq.DeliveryInfo, s acemq.SettleResult) {
	r.add("settled %s %s attempt %d delay %v class %q target %q handler ran %v ctx=%v",
		d.Queue, s.Outcome, s.Attempt, s.Delay, s.ReasonClass, s.Target, s.HandlerDuration > 0, ctx.Value(mark{}))
}

func (r *recorder) Event(e acemq.Event) {
	switch e.Kind {
	case acemq.EventWaitStarted, acemq.EventWaitEnded:
		r.add("%s %s %v %q cut=%v", e.Kind, e.Queue, e.Delay, e.Class, e.CutShort)
	case acemq.EventConsumerStarted:
		r.add("%s %s rungs %v", e.Kind, e.Queue, e.Rungs)
	default:
		r.add("%s %s", e.Kind, e.Queue)
	}
}

// What the observer is told of one message retried in the consumer, then
// on a rung, then accepted; of a body that does not encode; and of the
// connection's end, in order.
func TestObserverIsToldEverything(t *testing.T) {
	b := acemqtest.NewBroker(t)
	rec := &recorder{}
	conn := b.Connect(t, acemq.WithObserver(acemq.Observers(rec, acemq.NopObserver{})))
	ctx := context.Background()
	policy := acemq.Exponential(3, 10*time.Second, time.Minute).WithJitter(0).WaitInBrokerFrom(20 * time.Second) // 10s in the consumer, 20s on a rung
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "orders", Type: transport.Classic, Retry: &policy}}}
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	var handlerCtx sync.Map
	c := consume(t, conn, "orders", func(ctx context.Context, m acemq.Message[item]) acemq.Decision {
		handlerCtx.Store(m.Envelope.Attempt, ctx.Value(mark{}))
		if m.Envelope.Attempt < 3 {
			return acemq.Retry(errors.New("not yet"))
		}
		return acemq.Accept()
	}, acemq.WithPolicy(policy))
	if err := acemqtest.NewPublisher[item](t, conn, "").Publish(ctx, "orders", item{N: 1}); err != nil {
		t.Fatal(err)
	}
	acemqtest.WaitFor(t, c, "the wait in the consumer", func(s acemq.Stats) bool { return s.Waiting == 1 })
	b.Advance(10 * time.Second)
	acemqtest.WaitFor(t, c, "the rung", func(s acemq.Stats) bool { return s.RetriedOnRung == 1 })
	b.Advance(20 * time.Second)
	acemqtest.WaitFor(t, c, "the accept", func(s acemq.Stats) bool { return s.Accepted == 1 })
	if _, err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	err := acemqtest.NewPublisher[func()](t, conn, "").Publish(ctx, "orders", func() {})
	if err == nil {
		t.Fatal("a func published as JSON")
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}

	// The settlement of a retry (its confirm, its ack) and the next
	// delivery of the message it republished happen at once: each chain
	// is in order, and the chains only where they meet.
	const (
		stopped      = `consumer stopped orders`
		settledFirst = `settled orders retried_in_consumer attempt 2 delay 10s class "retry" target "orders" handler ran true ctx=delivery`
		settledRung  = `settled orders retried_on_rung attempt 3 delay 20s class "retry" target "orders.retry.quorum.20s" handler ran true ctx=delivery`
	)
	chains := [][]string{
		{
			`consumer started orders rungs [orders.retry.quorum.20s]`,
			`publish  "orders" attempt 1 republish=false`,
			`published "orders" attempt 1 confirmed ctx=publish`,
			stopped,
		},
		{
			`publish  "orders" attempt 1 republish=false`,
			`delivery orders attempt 1 traceparent=from-the-observer`,
			`wait started orders 10s "retry" cut=false`,
			`wait ended orders 10s "retry" cut=false`,
			`publish  "orders" attempt 2 republish=true`,
			`published "orders" attempt 2 confirmed ctx=publish`,
			settledFirst,
			stopped,
		},
		{
			`publish  "orders" attempt 2 republish=true`,
			`delivery orders attempt 2 traceparent=from-the-observer`,
			`publish  "orders.retry.quorum.20s" attempt 3 republish=true`,
			`published "orders.retry.quorum.20s" attempt 3 confirmed ctx=publish`,
			settledRung,
			stopped,
		},
		{
			`publish  "orders.retry.quorum.20s" attempt 3 republish=true`,
			`delivery orders attempt 3 traceparent=from-the-observer`,
			`settled orders accepted attempt 3 delay 0s class "" target "" handler ran true ctx=delivery`,
			stopped,
			`publish  "orders" attempt <nil> republish=false`,
			`published "orders" attempt <nil> failed ctx=publish`,
			`connection closed `,
		},
	}
	got := rec.seen()
	var want []string
	for _, chain := range chains {
		for _, line := range chain {
			if !slices.Contains(want, line) {
				want = append(want, line)
			}
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("the observer was told:\n%s\nwant, in some order:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, chain := range chains {
		for i := 1; i < len(chain); i++ {
			if slices.Index(got, chain[i-1]) > slices.Index(got, chain[i]) {
				t.Errorf("the observer was told %q after %q:\n%s", chain[i-1], chain[i], strings.Join(got, "\n"))
			}
		}
	}
	for attempt := 1; attempt <= 3; attempt++ {
		if v, _ := handlerCtx.Load(attempt); v != "delivery" {
			t.Errorf("attempt %d's handler context holds %v, want DeliveryStart's", attempt, v)
		}
	}
}

// Conn.Publish and Conn.Republish, the library packages' way to publish a
// message in wire form, are told to the Observer: Publish as the
// application's, Republish as a republish. The Observer's headers go on
// the wire, the caller's table is left as it was.
func TestConnPublishObserved(t *testing.T) {
	b := acemqtest.NewBroker(t)
	rec := &recorder{}
	conn := b.Connect(t, acemq.WithObserver(rec))
	top := acemq.Topology{
		Exchanges: []acemq.ExchangeSpec{{Name: "prices", Type: transport.Direct}},
		Queues:    []acemq.QueueSpec{{Name: "quotes", Bindings: []acemq.BindingSpec{{Exchange: "prices", RoutingKey: "quote"}}}},
	}
	if err := top.Apply(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	headers := transport.Table{contract.HeaderAttempt: 1}
	m := transport.Message{MessageID: "m-1", Headers: headers, Body: []byte("a")}
	for _, send := range []func() (*acemq.Pending, error){
		func() (*acemq.Pending, error) { return conn.Publish(t.Context(), "prices", "quote", m) },
		func() (*acemq.Pending, error) { return conn.Republish(t.Context(), "quotes", m) },
		func() (*acemq.Pending, error) { return conn.Publish(t.Context(), "prices", "nobody", m) },
	} {
		p, err := send()
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(t.Context()); err != nil && !errors.Is(err, acemq.ErrUnroutable) {
			t.Fatal(err)
		}
	}
	want := []string{
		`publish prices "quote" attempt 1 republish=false`,
		`published "quote" attempt 1 confirmed ctx=publish`,
		`publish  "quotes" attempt 1 republish=true`,
		`published "quotes" attempt 1 confirmed ctx=publish`,
		`publish prices "nobody" attempt 1 republish=false`,
		`published "nobody" attempt 1 unroutable ctx=publish`,
	}
	if got := rec.seen(); !slices.Equal(got, want) {
		t.Fatalf("the Observer was told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(headers) != 1 {
		t.Fatalf("the caller's headers became %v", headers)
	}
	for _, got := range b.Messages(t, "quotes") {
		if got.Headers["traceparent"] != "from-the-observer" {
			t.Fatalf("a message arrived with headers %v, without the Observer's", got.Headers)
		}
	}
}

// requestRecorder is a RequestObserver that writes down what it is told,
// marking the context it hands out with its name.
type requestRecorder struct {
	acemq.NopObserver
	name  string
	lines *[]string
}

type requestMark struct{}

func (r requestRecorder) RequestStart(ctx context.Context, info *acemq.RequestInfo) context.Context {
	*r.lines = append(*r.lines, r.name+" start "+info.RoutingKey)
	prev, _ := ctx.Value(requestMark{}).(string)
	return context.WithValue(ctx, requestMark{}, prev+r.name)
}

func (r requestRecorder) RequestEnd(ctx context.Context, info *acemq.RequestInfo, res acemq.RequestResult) {
	m, _ := ctx.Value(requestMark{}).(string)
	*r.lines = append(*r.lines, fmt.Sprintf("%s end %s %s in %s", r.name, info.RoutingKey, res.Outcome, m))
}

// Conn.ObserveRequest tells a RequestObserver, and each RequestObserver
// among combined Observers (in order, each given the context the one
// before returned); an Observer that is not one is left alone.
func TestObserveRequest(t *testing.T) {
	var lines []string
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t, acemq.WithObserver(acemq.Observers(
		requestRecorder{name: "a", lines: &lines}, &recorder{}, requestRecorder{name: "b", lines: &lines})))
	ctx, end := conn.ObserveRequest(context.Background(), acemq.RequestInfo{RoutingKey: "quotes"})
	if m, _ := ctx.Value(requestMark{}).(string); m != "ab" {
		t.Errorf("the request's context is marked %q, want ab", m)
	}
	end(acemq.RequestResult{Outcome: contract.TelemetryAnswered})
	want := []string{"a start quotes", "b start quotes", "a end quotes answered in ab", "b end quotes answered in ab"}
	if !slices.Equal(lines, want) {
		t.Errorf("told %q, want %q", lines, want)
	}

	plain := b.Connect(t, acemq.WithObserver(&recorder{}))
	ctx, end = plain.ObserveRequest(context.Background(), acemq.RequestInfo{RoutingKey: "quotes"})
	end(acemq.RequestResult{Outcome: contract.TelemetryFailed})
	if ctx != context.Background() {
		t.Error("ObserveRequest without a RequestObserver changed the context")
	}
}
