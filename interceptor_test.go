package acemq_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/conntest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// Interceptors on memory:// and on RabbitMQ: what a chain changes is what
// is sent and what the handler sees, in the chain's order; refusals of a
// publish and of a delivery; the reserved headers; and the library's own
// republishes going around the publish chain.

// onBoth runs test on memory:// (the system clock: waits are real, and
// short) and on the RabbitMQ of ACEMQ_TEST_URL. connect opens a Conn closed
// when the test ends; queue declares a fresh classic queue, deleted with
// its ladder and set-aside queues when the test ends.
func onBoth(t *testing.T, test func(t *testing.T, connect func(...acemq.ConnOption) *acemq.Conn, queue func(*acemq.Conn, acemq.RetryPolicy) string)) {
	queueOn := func(t *testing.T, name func() string) func(*acemq.Conn, acemq.RetryPolicy) string {
		return func(conn *acemq.Conn, policy acemq.RetryPolicy) string {
			q := name()
			tr := conn.Transport()
			if err := tr.DeclareQueue(t.Context(), transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { deleteQueues(tr, q, policy) })
			return q
		}
	}
	t.Run("memory", func(t *testing.T) {
		mb := memory.NewBroker()
		t.Cleanup(mb.Close)
		n := 0
		test(t, func(opts ...acemq.ConnOption) *acemq.Conn {
			c, err := acemq.New(mb.Connect(), opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c
		}, queueOn(t, func() string { n++; return fmt.Sprintf("orders-%d", n) }))
	})
	t.Run("rabbitmq", func(t *testing.T) {
		url := brokertest.URL(t)
		test(t, func(opts ...acemq.ConnOption) *acemq.Conn {
			return conntest.Connect(t, url, t.Name(), opts...)
		}, queueOn(t, func() string { return brokertest.UniqueName(t, "intercept") }))
	})
}

// take takes every message of queue off it, waiting up to five seconds for
// the first want of them to arrive.
func take(t *testing.T, conn *acemq.Conn, queue string, want int) []transport.Delivery {
	t.Helper()
	var got []transport.Delivery
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, ok, err := conn.Transport().Get(t.Context(), queue)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if err := d.Ack(); err != nil {
				t.Fatal(err)
			}
			got = append(got, d)
			continue
		}
		if len(got) >= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// publishes records what the Observer is told of publishes.
type publishes struct {
	acemq.NopObserver
	mu    sync.Mutex
	lines []string
}

func (p *publishes) PublishEnd(_ context.Context, info *acemq.PublishInfo, r acemq.PublishResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines = append(p.lines, fmt.Sprintf("%q %s republish=%v err=%v", info.RoutingKey, r.Outcome, info.Republish, r.Err))
}

func (p *publishes) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.lines)
}

// order is a chain's log of which interceptor ran.
type order struct {
	mu  sync.Mutex
	ran []string
}

func (o *order) note(name string) acemq.Interceptor {
	return func(context.Context, *acemq.Intercepted) error {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.ran = append(o.ran, name)
		return nil
	}
}

func (o *order) seen() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.ran)
}

var errSuspended = errors.New("tenant suspended")

// The Conn's chain runs first, then the Publisher's, each in order: a
// routing key, a header and a body changed on the way out are what
// arrives; the envelope is read as it stands.
func TestPublishInterceptorsChangeWhatIsSent(t *testing.T) {
	onBoth(t, func(t *testing.T, connect func(...acemq.ConnOption) *acemq.Conn, queue func(*acemq.Conn, acemq.RetryPolicy) string) {
		var ran order
		var q string
		var sawType string
		route := func(_ context.Context, m *acemq.Intercepted) error {
			if m.RoutingKey == "nowhere" {
				m.RoutingKey = q
			}
			return nil
		}
		conn := connect(acemq.WithPublishInterceptors(ran.note("conn 1"), route, ran.note("conn 2")))
		q = queue(conn, acemq.NoRetry())
		stamp := func(_ context.Context, m *acemq.Intercepted) error {
			sawType = m.Envelope().Type
			m.Headers["tenant"] = "acme"
			m.Body = bytes.ReplaceAll(m.Body, []byte(`"n":1`), []byte(`"n":2`))
			return nil
		}
		p, err := acemq.NewPublisher[item](conn, "", acemq.WithPublishInterceptors(ran.note("publisher"), stamp))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Publish(t.Context(), "nowhere", item{N: 1}, acemq.WithMessageType("order.new")); err != nil {
			t.Fatal(err)
		}
		if got, want := ran.seen(), []string{"conn 1", "conn 2", "publisher"}; !slices.Equal(got, want) {
			t.Errorf("the interceptors ran as %v, want %v", got, want)
		}
		if sawType != "order.new" {
			t.Errorf("an interceptor read the type %q, want order.new", sawType)
		}
		got := take(t, conn, q, 1)
		if len(got) != 1 {
			t.Fatalf("%s holds %d messages, want the one rerouted to it", q, len(got))
		}
		env := acemq.ReadEnvelope(got[0].Message)
		if string(got[0].Body) != `{"n":2}` || env.Headers["tenant"] != "acme" || env.Type != "order.new" || env.Attempt != 1 {
			t.Errorf("arrived %s with %+v; want the interceptors' body and header, the envelope as published", got[0].Body, env)
		}
	})
}

// The Conn's consume chain runs first, then the consumer's, before
// decoding: the handler sees their header and body; the message stays as
// it came on the broker.
func TestConsumeInterceptorsChangeWhatIsHandled(t *testing.T) {
	onBoth(t, func(t *testing.T, connect func(...acemq.ConnOption) *acemq.Conn, queue func(*acemq.Conn, acemq.RetryPolicy) string) {
		var ran order
		var sawQueue atomic.Value
		unwrap := func(_ context.Context, m *acemq.Intercepted) error {
			sawQueue.Store(m.Queue)
			m.Body = bytes.TrimPrefix(m.Body, []byte("wrapped:"))
			m.ContentType = "application/json"
			return nil
		}
		conn := connect(acemq.WithConsumeInterceptors(ran.note("conn"), unwrap))
		q := queue(conn, acemq.NoRetry())
		handled := newSeen()
		tag := func(_ context.Context, m *acemq.Intercepted) error {
			m.Headers["seen-by"] = "consumer"
			return nil
		}
		consume(t, conn, q, func(_ context.Context, m acemq.Message[item]) acemq.Decision {
			handled.add(m)
			return acemq.Accept()
		}, acemq.WithConsumeInterceptors(ran.note("consumer"), tag))
		raw, err := acemq.NewPublisher[[]byte](conn, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := raw.Publish(t.Context(), q, []byte(`wrapped:{"n":7}`)); err != nil {
			t.Fatal(err)
		}
		m := handled.next(t, 5*time.Second)
		if m.Body.N != 7 || m.Envelope.Headers["seen-by"] != "consumer" || string(m.Raw) != `wrapped:{"n":7}` {
			t.Errorf("the handler saw %+v, headers %v, raw %q; want n 7, the consumer's header, the raw body as delivered",
				m.Body, m.Envelope.Headers, m.Raw)
		}
		if got, want := ran.seen(), []string{"conn", "consumer"}; !slices.Equal(got, want) {
			t.Errorf("the interceptors ran as %v, want %v", got, want)
		}
		if got := sawQueue.Load(); got != q {
			t.Errorf("the interceptor saw the queue %v, want %s", got, q)
		}
	})
}

// A refused publish is not sent: a *PublishError wrapping the refusal,
// told to the Observer as failed; the chain stops at it. Conn.Publish goes
// through the Conn's chain; Conn.Republish goes around it.
func TestPublishRefused(t *testing.T) {
	onBoth(t, func(t *testing.T, connect func(...acemq.ConnOption) *acemq.Conn, queue func(*acemq.Conn, acemq.RetryPolicy) string) {
		obs := &publishes{}
		var after atomic.Int64
		refuse := func(_ context.Context, m *acemq.Intercepted) error {
			if m.Headers["tenant"] == "suspended" {
				return errSuspended
			}
			return nil
		}
		conn := connect(acemq.WithObserver(obs), acemq.WithPublishInterceptors(refuse, func(context.Context, *acemq.Intercepted) error {
			after.Add(1)
			return nil
		}))
		q := queue(conn, acemq.NoRetry())
		p, err := acemq.NewPublisher[item](conn, "")
		if err != nil {
			t.Fatal(err)
		}
		err = p.Publish(t.Context(), q, item{N: 1}, acemq.WithHeaders(transport.Table{"tenant": "suspended"}), acemq.WithMessageID("m-1"))
		var pe *acemq.PublishError
		if !errors.As(err, &pe) || !errors.Is(err, errSuspended) || pe.MessageID != "m-1" || pe.RoutingKey != q {
			t.Fatalf("Publish returned %v, want a *PublishError of m-1 to %s wrapping the refusal", err, q)
		}
		if !strings.Contains(err.Error(), "publish interceptor 1 of 2 refused it: tenant suspended") {
			t.Errorf("the error says %q, not which interceptor refused it", err)
		}
		if after.Load() != 0 {
			t.Error("the chain went on after the refusal")
		}

		suspended := transport.Message{MessageID: "m-2", Headers: transport.Table{"tenant": "suspended"}, Body: []byte(`{"n":2}`)}
		sent, err := conn.Publish(t.Context(), "", q, suspended)
		if sent != nil || !errors.As(err, &pe) || !errors.Is(err, errSuspended) || pe.MessageID != "m-2" {
			t.Fatalf("Conn.Publish returned %v, %v; want nothing sent and a *PublishError of m-2 wrapping the refusal", sent, err)
		}
		sent, err = conn.Republish(t.Context(), q, suspended)
		if err == nil {
			err = sent.Wait(t.Context())
		}
		if err != nil {
			t.Fatalf("Conn.Republish went through the chain: %v", err)
		}

		got := take(t, conn, q, 1)
		if len(got) != 1 || got[0].MessageID != "m-2" {
			t.Fatalf("%s holds %d messages (%v), want only the republished m-2", q, len(got), got)
		}
		want := []string{
			fmt.Sprintf("%q failed republish=false err=publish interceptor 1 of 2 refused it: tenant suspended", q),
			fmt.Sprintf("%q failed republish=false err=publish interceptor 1 of 2 refused it: tenant suspended", q),
			fmt.Sprintf("%q confirmed republish=true err=<nil>", q),
		}
		if got := obs.seen(); !slices.Equal(got, want) {
			t.Errorf("the Observer was told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// An interceptor refusing one message of a batch: the BatchError lists
// exactly it, and the others arrive.
func TestPublishBatchWithARefusal(t *testing.T) {
	onBoth(t, func(t *testing.T, connect func(...acemq.ConnOption) *acemq.Conn, queue func(*acemq.Conn, acemq.RetryPolicy) string) {
		conn := connect()
		q := queue(conn, acemq.NoRetry())
		p, err := acemq.NewPublisher[item](conn, "", acemq.WithPublishInterceptors(func(_ context.Context, m *acemq.Intercepted) error {
			if bytes.Contains(m.Body, []byte(`"n":2`)) {
				return errSuspended
			}
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		err = p.PublishBatch(t.Context(), []acemq.Outgoing[item]{
			{RoutingKey: q, Body: item{N: 1}}, {RoutingKey: q, Body: item{N: 2}}, {RoutingKey: q, Body: item{N: 3}},
		})
		var be *acemq.BatchError
		if !errors.As(err, &be) || be.Total != 3 || len(be.Failed) != 1 || be.Failed[0].Index != 1 || !errors.Is(be.Failed[0].Err, errSuspended) {
			t.Fatalf("PublishBatch returned %v, want a BatchError of 3 listing only number 1, refused", err)
		}
		var bodies []string
		for _, d := range take(t, conn, q, 2) {
			bodies = append(bodies, string(d.Body))
		}
		if want := []string{`{"n":1}`, `{"n":3}`}; !slices.Equal(bodies, want) {
			t.Errorf("%s holds %v, want %v", q, bodies, want)
		}
	})
}

// A consume interceptor's refusal is a failure of the handler, which is not
// called: a wait in the consumer, a wait on a rung, then Q.dlq as
// exhausted, with the body and headers as published (the interceptor
// before the refusal changed both). No retry goes through the publish
// chain. An error marked Fatal dead-letters at once; a panic is a
// handler's panic.
func TestConsumeRefusalTakesTheRetryPath(t *testing.T) {
	onBoth(t, func(t *testing.T, connect func(...acemq.ConnOption) *acemq.Conn, queue func(*acemq.Conn, acemq.RetryPolicy) string) {
		var published atomic.Int64
		conn := connect(acemq.WithPublishInterceptors(func(context.Context, *acemq.Intercepted) error {
			published.Add(1)
			return nil
		}))
		// 500ms in the consumer, 1s on a rung, then give up.
		policy := acemq.Exponential(3, 500*time.Millisecond, time.Minute).WaitInBrokerFrom(time.Second).WithJitter(0)
		q := queue(conn, policy)
		var handled atomic.Int64
		change := func(_ context.Context, m *acemq.Intercepted) error {
			m.Headers["tenant"] = "changed"
			m.Body = []byte(`{"n":99}`)
			return nil
		}
		refuse := func(context.Context, *acemq.Intercepted) error { return errSuspended }
		c := consume(t, conn, q, func(context.Context, acemq.Message[item]) acemq.Decision {
			handled.Add(1)
			return acemq.Accept()
		}, acemq.WithPolicy(policy), acemq.WithConsumeInterceptors(change, refuse))
		publish(t, conn, q, item{N: 1})
		waitFor(t, "the dead letter", 20*time.Second, func() bool { return c.Stats().DeadLettered == 1 })
		if s := c.Stats(); s.RetriedInConsumer != 1 || s.RetriedOnRung != 1 || handled.Load() != 0 {
			t.Errorf("counts %+v and %d handled; want one wait in the consumer, one on the rung, the handler never called", s, handled.Load())
		}
		dead := take(t, conn, contract.DeadLetterQueue(q), 1)
		if len(dead) != 1 {
			t.Fatalf("%s holds %d messages", contract.DeadLetterQueue(q), len(dead))
		}
		env := acemq.ReadEnvelope(dead[0].Message)
		if env.Error != "exhausted 3 attempts: tenant suspended" || env.Attempt != 3 || string(dead[0].Body) != `{"n":1}` || env.Headers["tenant"] != "acme" {
			t.Errorf("dead-lettered %s with %+v; want exhausted 3 attempts, attempt 3, the body and headers as published", dead[0].Body, env)
		}
		if n := published.Load(); n != 1 {
			t.Errorf("the publish chain ran %d times, want once: the retries and the set-aside go around it", n)
		}

		// Fatal: Q.dlq at once; a panic: Q.dlq at once, as a handler's.
		for _, c := range []struct {
			name      string
			intercept acemq.Interceptor
			reason    string
		}{
			{"fatal", func(context.Context, *acemq.Intercepted) error { return acemq.Fatal(errSuspended) }, "tenant suspended"},
			{"panic", func(context.Context, *acemq.Intercepted) error { panic("boom") }, "handler panicked: boom"},
		} {
			q := queue(conn, policy)
			cons := consume(t, conn, q, func(context.Context, acemq.Message[item]) acemq.Decision {
				handled.Add(1)
				return acemq.Accept()
			}, acemq.WithPolicy(policy), acemq.WithConsumeInterceptors(c.intercept))
			publish(t, conn, q, item{N: 1})
			waitFor(t, c.name+": the dead letter", 10*time.Second, func() bool { return cons.Stats().DeadLettered == 1 })
			dead := take(t, conn, contract.DeadLetterQueue(q), 1)
			if s := cons.Stats(); len(dead) != 1 || s.RetriedInConsumer+s.RetriedOnRung != 0 || handled.Load() != 0 {
				t.Fatalf("%s: %d dead letters, counts %+v, %d handled; want one at once, unhandled", c.name, len(dead), s, handled.Load())
			}
			if got := acemq.ReadEnvelope(dead[0].Message); got.Error != c.reason || got.Attempt != 1 {
				t.Errorf("%s: dead-lettered with reason %q, attempt %d; want %q, attempt 1", c.name, got.Error, got.Attempt, c.reason)
			}
		}
	})
}

// An interceptor may read the x-acemq-* headers but not set, change or
// remove one, in any case: the publish is refused with ErrReservedHeader
// and nothing is sent; a delivery is dead-lettered at once, unhandled.
func TestInterceptorsCannotTouchReservedHeaders(t *testing.T) {
	attempts := []struct {
		name   string
		touch  func(h transport.Table)
		header string
	}{
		{"set", func(h transport.Table) { h["X-AceMQ-Owner"] = "me" }, "X-AceMQ-Owner"},
		{"change", func(h transport.Table) { h[contract.HeaderAttempt] = int64(5) }, contract.HeaderAttempt},
		{"remove", func(h transport.Table) { delete(h, contract.HeaderID) }, contract.HeaderID},
	}
	onBoth(t, func(t *testing.T, connect func(...acemq.ConnOption) *acemq.Conn, queue func(*acemq.Conn, acemq.RetryPolicy) string) {
		conn := connect()
		q := queue(conn, acemq.NoRetry())
		for _, a := range attempts {
			p, err := acemq.NewPublisher[item](conn, "", acemq.WithPublishInterceptors(func(_ context.Context, m *acemq.Intercepted) error {
				a.touch(m.Headers)
				return nil
			}))
			if err != nil {
				t.Fatal(err)
			}
			err = p.Publish(t.Context(), q, item{N: 1})
			var pe *acemq.PublishError
			if !errors.As(err, &pe) || !errors.Is(err, acemq.ErrReservedHeader) || !strings.Contains(err.Error(), fmt.Sprintf("%q", a.header)) {
				t.Errorf("publish, %s %s: %v; want a *PublishError matching ErrReservedHeader naming it", a.name, a.header, err)
			}
		}
		if got := take(t, conn, q, 0); len(got) != 0 {
			t.Fatalf("%d messages were sent with a reserved header touched", len(got))
		}

		var handled atomic.Int64
		for _, a := range attempts {
			q := queue(conn, acemq.NoRetry())
			c := consume(t, conn, q, func(context.Context, acemq.Message[item]) acemq.Decision {
				handled.Add(1)
				return acemq.Accept()
			}, acemq.WithPolicy(acemq.Fixed(3, time.Millisecond)), acemq.WithConsumeInterceptors(func(_ context.Context, m *acemq.Intercepted) error {
				a.touch(m.Headers)
				return nil
			}))
			publish(t, conn, q, item{N: 1})
			waitFor(t, a.name+": the dead letter", 10*time.Second, func() bool { return c.Stats().DeadLettered == 1 })
			dead := take(t, conn, contract.DeadLetterQueue(q), 1)
			if len(dead) != 1 || c.Stats().RetriedInConsumer != 0 || handled.Load() != 0 {
				t.Fatalf("consume, %s: %d dead letters, counts %+v, %d handled; want one at once, unhandled", a.name, len(dead), c.Stats(), handled.Load())
			}
			want := fmt.Sprintf("consume interceptor 1 of 1 set, changed or removed the header %q: %v", a.header, acemq.ErrReservedHeader)
			if got := acemq.ReadEnvelope(dead[0].Message).Error; !strings.HasPrefix(got, want) {
				t.Errorf("consume, %s: reason %q, want it to start %q", a.name, got, want)
			}
		}
	})
}

// The options check their values.
func TestInterceptorOptions(t *testing.T) {
	mb := memory.NewBroker()
	t.Cleanup(mb.Close)
	conn, err := acemq.New(mb.Connect())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ok := func(context.Context, *acemq.Intercepted) error { return nil }
	if _, err := acemq.NewPublisher[item](conn, "", acemq.WithPublishInterceptors(ok, nil)); !errors.Is(err, acemq.ErrInvalidOption) ||
		!strings.Contains(err.Error(), "WithPublishInterceptors: invalid option: interceptor 2 of 2 is nil") {
		t.Errorf("a nil interceptor: %v", err)
	}
	// Where each belongs is TestMisplacedOptionsDoNotCompile's.
}
