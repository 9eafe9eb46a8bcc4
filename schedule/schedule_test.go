package schedule_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/conntest"
	"github.com/acemq-go/acemq/schedule"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// section12 is CONTRACT.md section 12's table, spelled out here rather than
// built from package contract, so that a change there fails this test:
// exchange acemq.schedule (direct, durable); rungs .1h, .10m, .1m, .10s and
// .1s, classic and durable with exactly three arguments, each bound under
// its own name; acemq.schedule.due, classic, no arguments, bound under its
// name.
func section12() []transport.Declaration {
	plan := []transport.Declaration{transport.Exchange{Name: "acemq.schedule", Type: transport.Direct, Durable: true}}
	var bindings []transport.Declaration
	for _, r := range []struct {
		name string
		ttl  int64
	}{{"acemq.schedule.1h", 3600000}, {"acemq.schedule.10m", 600000}, {"acemq.schedule.1m", 60000},
		{"acemq.schedule.10s", 10000}, {"acemq.schedule.1s", 1000}} {
		plan = append(plan, transport.Queue{Name: r.name, Type: transport.Classic, Durable: true, Arguments: transport.Table{
			"x-message-ttl": r.ttl, "x-dead-letter-exchange": "acemq.schedule", "x-dead-letter-routing-key": "acemq.schedule.due"}})
		bindings = append(bindings, transport.Binding{Queue: r.name, Exchange: "acemq.schedule", RoutingKey: r.name})
	}
	plan = append(plan, transport.Queue{Name: "acemq.schedule.due", Type: transport.Classic, Durable: true})
	bindings = append(bindings, transport.Binding{Queue: "acemq.schedule.due", Exchange: "acemq.schedule", RoutingKey: "acemq.schedule.due"})
	return append(plan, bindings...)
}

func strs(plan []transport.Declaration) []string {
	var out []string
	for _, d := range plan {
		out = append(out, d.String())
	}
	return out
}

// The scheduler declares exactly section 12's table: names, kinds, types,
// durability and exactly three arguments on each rung (the TTL an AMQP
// long), none on the due queue. On memory:// the table redeclares without
// a PRECONDITION_FAILED (and another TTL is refused); on RabbitMQ the
// management API shows it as declared, nothing more.
func TestDeclarationsPinned(t *testing.T) {
	want := section12()
	eachBroker(t, func(t *testing.T, b target) {
		sched, err := schedule.New(t.Context(), b.conn, schedule.WithClock(b.clock))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := sched.Topology().Plan()
		if err != nil {
			t.Fatal(err)
		}
		if got := strs(plan); !slices.Equal(got, strs(want)) {
			t.Fatalf("the plan is\n  %s\nwant section 12's\n  %s", strings.Join(got, "\n  "), strings.Join(strs(want), "\n  "))
		}
		for _, d := range plan {
			if q, ok := d.(transport.Queue); ok && q.Name != "acemq.schedule.due" {
				if _, long := q.Arguments["x-message-ttl"].(int64); !long || len(q.Arguments) != 3 {
					t.Errorf("%s: arguments %v, want exactly three, x-message-ttl an AMQP long", q.Name, q.Arguments)
				}
			}
		}
		for _, q := range []string{"acemq.schedule.1h", "acemq.schedule.10m", "acemq.schedule.1m", "acemq.schedule.10s", "acemq.schedule.1s", "acemq.schedule.due"} {
			t.Cleanup(func() { _, _ = b.conn.DeleteQueue(context.Background(), q) })
		}
		if b.url == "" {
			// The table as another library declares it, through a driver
			// connection of its own.
			tr, err := memory.Dial(t.Context(), b.memoryURL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tr.Close() })
			if err := transport.DeclareAll(t.Context(), tr, want); err != nil {
				t.Fatalf("section 12's table redeclared on memory://: %v", err)
			}
			other := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "acemq.schedule.1m", Type: transport.Classic, Arguments: acemq.Table{
				"x-message-ttl": int64(60001), "x-dead-letter-exchange": "acemq.schedule", "x-dead-letter-routing-key": "acemq.schedule.due"}}}}
			if err := other.Apply(t.Context(), b.conn); !errors.Is(err, transport.ErrPreconditionFailed) {
				t.Fatalf("a rung redeclared with another TTL: %v, want PRECONDITION_FAILED", err)
			}
			return
		}
		endpoint, err := admin.EndpointFor(b.url, brokertest.ManagementURL())
		if err != nil {
			t.Fatal(err)
		}
		live, err := admin.Read(t.Context(), endpoint)
		if err != nil {
			t.Fatal(err)
		}
		if report := admin.Diff(want, live); !report.InSync() {
			t.Errorf("the broker differs from section 12's table: %+v", report.Findings)
		}
	})
}

// target is a broker a test runs on: memory:// on a manual clock the test
// moves (advance), or the RabbitMQ of ACEMQ_TEST_URL (url) in real time
// (advance nil).
type target struct {
	conn      *acemq.Conn
	clock     transport.Clock
	advance   func(time.Duration)
	url       string // RabbitMQ's, or "" on memory://
	memoryURL string
}

func eachBroker(t *testing.T, test func(t *testing.T, b target)) {
	t.Run("memory", func(t *testing.T) {
		m := acemqtest.NewBroker(t)
		test(t, target{conn: m.Connect(t), clock: m.Clock, advance: m.Advance, memoryURL: m.URL})
	})
	t.Run("rabbitmq", func(t *testing.T) {
		url := brokertest.URL(t)
		test(t, target{conn: conntest.Connect(t, url, t.Name()), clock: transport.SystemClock, url: url})
	})
}

// scheduler is a Scheduler on b, on an exchange of the test's own on
// RabbitMQ, whose queues are deleted when the test ends.
func (b target) scheduler(t *testing.T) *schedule.Scheduler {
	t.Helper()
	opts := []schedule.Option{schedule.WithClock(b.clock)}
	exchange := contract.ScheduleExchange
	if b.url != "" {
		exchange = brokertest.UniqueName(t, "sched")
		opts = append(opts, schedule.WithExchange(exchange))
	}
	sched, err := schedule.New(t.Context(), b.conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	due := sched.DueQueue()
	queues := []string{due, contract.DeadLetterQueue(due), contract.ParkedQueue(due)}
	for _, d := range contract.ScheduleRungDelays() {
		queues = append(queues, contract.ScheduleRungQueue(exchange, d))
	}
	t.Cleanup(func() {
		for _, q := range queues {
			_, _ = b.conn.DeleteQueue(context.Background(), q)
		}
	})
	return sched
}

// targetQueue declares a queue bound to the default exchange's name only
// (a queue is reachable there by its name), deleted when the test ends.
func (b target) targetQueue(t *testing.T) string {
	t.Helper()
	name := "reminders"
	if b.url != "" {
		name = brokertest.UniqueName(t, "sched-target")
	}
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: name, Type: transport.Classic, DeadLetter: true}}}).Apply(t.Context(), b.conn); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{name, contract.DeadLetterQueue(name), contract.ParkedQueue(name)} {
		t.Cleanup(func() { _, _ = b.conn.DeleteQueue(context.Background(), q) })
	}
	return name
}

func forward(t *testing.T, sched *schedule.Scheduler, opts ...schedule.ForwardOption) *schedule.Forwarder {
	t.Helper()
	f, err := sched.Forward(t.Context(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = f.Close(context.Background()) })
	return f
}

type arrival struct {
	m  acemq.Message[Reminder]
	at time.Time
}

// receive consumes queue and hands over each message with the time it came.
func receive(t *testing.T, b target, queue string) <-chan arrival {
	t.Helper()
	got := make(chan arrival, 100)
	c, err := acemq.Consume(t.Context(), b.conn, queue, func(_ context.Context, m acemq.Message[Reminder]) acemq.Decision {
		got <- arrival{m, b.clock.Now()}
		return acemq.Accept()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	return got
}

func next(t *testing.T, got <-chan arrival, within time.Duration) arrival {
	t.Helper()
	select {
	case a := <-got:
		return a
	case <-time.After(within):
		t.Fatalf("no delivery within %v", within)
	}
	panic("unreachable")
}

type Reminder struct {
	Order string `json:"order"`
}

// A delayed send of 90s goes through the 1m rung, then three times the 10s
// one, each hop confirmed, then is delivered; on RabbitMQ, a send of three
// seconds arrives after its three hops of a second, about on time.
func TestDelayedSend(t *testing.T) {
	eachBroker(t, func(t *testing.T, b target) {
		sched := b.scheduler(t)
		queue := b.targetQueue(t)
		got := receive(t, b, queue)
		f := forward(t, sched)
		delay := 90 * time.Second
		if b.advance == nil {
			delay = 3 * time.Second
		}
		sent := b.clock.Now()
		if err := sched.PublishIn(t.Context(), delay, "", queue, Reminder{Order: "o-1"}, acemq.WithMessageID("m-1")); err != nil {
			t.Fatal(err)
		}
		if b.advance == nil {
			a := next(t, got, delay+10*time.Second)
			if a.m.Body.Order != "o-1" || a.m.Envelope.Type != contract.ScheduledMessageType {
				t.Errorf("delivered %+v", a.m)
			}
			// Three hops of a second each, or two when the second arrival
			// has under a second left: the rule delivers then.
			settled(t, f, 1)
			if s := f.Forwarded(); s.Hops < 1 || s.Hops > 2 || s.Delivered != 1 {
				t.Errorf("forwarded %+v, want 1 or 2 hops after the first rung and the delivery", s)
			}
			if early := sent.Add(delay).Sub(a.at); early >= time.Second {
				t.Errorf("delivered %v early; the rule allows under a second", early)
			}
			t.Logf("due after %v, delivered after %v", delay, a.at.Sub(sent))
			return
		}
		steps := []struct {
			advance time.Duration
			rung    string
		}{{0, "acemq.schedule.1m"}, {time.Minute, "acemq.schedule.10s"}, {10 * time.Second, "acemq.schedule.10s"}, {10 * time.Second, "acemq.schedule.10s"}}
		for i, s := range steps {
			b.advance(s.advance)
			acemqtest.WaitFor(t, f.Consumer, fmt.Sprintf("hop %d", i), func(st acemq.Stats) bool { return st.Accepted == int64(i) })
			if n := depth(t, b, s.rung); n != 1 {
				t.Fatalf("after %v more, %s holds %d messages, want the one", s.advance, s.rung, n)
			}
		}
		b.advance(9 * time.Second)
		if n := depth(t, b, "acemq.schedule.10s"); n != 1 {
			t.Fatalf("a second before it is due, the last rung holds %d messages, want the one", n)
		}
		b.advance(time.Second)
		a := next(t, got, 10*time.Second)
		settled(t, f, 1)
		if late := a.at.Sub(sent) - delay; late != 0 {
			t.Errorf("delivered %v late on memory://'s clock, want on time", late)
		}
		if s := f.Forwarded(); s.Hops != 3 || s.Delivered != 1 || s.Foreign != 0 {
			t.Errorf("forwarded %+v, want 3 hops and the delivery", s)
		}
	})
}

func depth(t *testing.T, b target, queue string) int {
	t.Helper()
	s, err := b.conn.InspectQueue(t.Context(), queue)
	if err != nil {
		t.Fatal(err)
	}
	return s.Messages
}

// settled waits until the forwarder has counted n deliveries: it counts one
// once the publish is confirmed, which the target's consumer may see first.
func settled(t *testing.T, f *schedule.Forwarder, n int64) {
	t.Helper()
	acemqtest.WaitFor(t, f.Consumer, fmt.Sprintf("%d deliveries", n), func(acemq.Stats) bool { return f.Forwarded().Delivered >= n })
}

// A message in the due queue without the scheduler's headers, or with
// unreadable ones, is parked in the due queue's .parked with the reason:
// nobody can know where it was meant to go, so a person must look.
func TestForeignMessageParked(t *testing.T) {
	eachBroker(t, func(t *testing.T, b target) {
		sched := b.scheduler(t)
		f := forward(t, sched)
		foreign := []struct {
			headers transport.Table
			reason  string
		}{
			{nil, "x-schedule-exchange is missing or not a string"},
			{transport.Table{"x-schedule-exchange": "orders", "x-schedule-routing-key": int64(7)}, "x-schedule-routing-key is missing or not a string"},
			{transport.Table{"x-schedule-exchange": "orders", "x-schedule-routing-key": "k", "x-schedule-due-at": "soon"}, "x-schedule-due-at is missing or not an integer"},
		}
		for i, m := range foreign {
			msg := transport.Message{Body: []byte(`{}`), ContentType: "application/json", MessageID: fmt.Sprint("foreign-", i), Headers: m.headers}
			if err := publishRaw(t, b, sched.DueQueue(), msg); err != nil {
				t.Fatal(err)
			}
		}
		acemqtest.WaitFor(t, f.Consumer, "the foreign messages parked", func(s acemq.Stats) bool { return s.Parked == int64(len(foreign)) })
		if s := f.Forwarded(); s.Foreign != int64(len(foreign)) || s.Hops != 0 || s.Delivered != 0 {
			t.Errorf("forwarded %+v", s)
		}
		parked := take(t, b, contract.ParkedQueue(sched.DueQueue()), len(foreign))
		// Forwarded many at a time, they may be parked in any order.
		slices.SortFunc(parked, func(x, y transport.Message) int { return strings.Compare(x.MessageID, y.MessageID) })
		for i, m := range parked {
			reason := acemq.ReadEnvelope(m).Error
			if m.MessageID != fmt.Sprint("foreign-", i) || !strings.HasPrefix(reason, "not a scheduled message") || !strings.Contains(reason, foreign[i].reason) {
				t.Errorf("parked %s with %q, want it to say %q", m.MessageID, reason, foreign[i].reason)
			}
		}
	})
}

// The delivery: a new envelope of type ScheduledMessage (a new id, the
// original's as its causation, the original's correlation), the content
// type x-schedule-content-type names (application/json when it is
// missing), the application's headers kept and the scheduler's dropped,
// the body byte for byte.
func TestDeliveryShape(t *testing.T) {
	eachBroker(t, func(t *testing.T, b target) {
		sched := b.scheduler(t)
		queue := b.targetQueue(t)
		f := forward(t, sched)
		text, err := schedule.New(t.Context(), b.conn, schedule.WithClock(b.clock), schedule.WithExchange(sched.Exchange()), schedule.WithCodec(acemq.Text))
		if err != nil {
			t.Fatal(err)
		}
		if err := text.PublishIn(t.Context(), 0, "", queue, "remind o-1", acemq.WithMessageID("m-1"), acemq.WithCorrelation("c-1"),
			acemq.WithHeaders(transport.Table{"tenant": "t-9"})); err != nil {
			t.Fatal(err)
		}
		// Another library's message without x-schedule-content-type.
		other := transport.Message{Body: []byte(`{"order":"o-2"}`), ContentType: "application/octet-stream", MessageID: "m-2", Headers: transport.Table{
			"x-acemq-id": "m-2", "x-schedule-exchange": "", "x-schedule-routing-key": queue, "x-schedule-due-at": int32(0)}}
		if err := publishRaw(t, b, sched.DueQueue(), other); err != nil {
			t.Fatal(err)
		}
		settled(t, f, 2)
		got := take(t, b, queue, 2)
		slices.SortFunc(got, func(x, y transport.Message) int {
			return strings.Compare(acemq.ReadEnvelope(x).Causation, acemq.ReadEnvelope(y).Causation)
		})
		for i, want := range []struct {
			causation, correlation, contentType, body string
			headers                                   transport.Table
		}{
			{"m-1", "c-1", "text/plain; charset=utf-8", "remind o-1", transport.Table{"tenant": "t-9"}},
			{"m-2", "m-2", "application/json", `{"order":"o-2"}`, transport.Table{}},
		} {
			m := got[i]
			env := acemq.ReadEnvelope(m)
			if env.Type != "ScheduledMessage" || env.Causation != want.causation || env.Correlation != want.correlation ||
				env.ID == want.causation || env.ID == "" || env.Attempt != 1 {
				t.Errorf("delivery %d: envelope %+v", i, env)
			}
			if m.ContentType != want.contentType || string(m.Body) != want.body {
				t.Errorf("delivery %d: %q as %q, want %q as %q", i, m.Body, m.ContentType, want.body, want.contentType)
			}
			if fmt.Sprint(env.Headers) != fmt.Sprint(want.headers) {
				t.Errorf("delivery %d: application headers %v, want %v (the scheduler's dropped)", i, env.Headers, want.headers)
			}
		}
	})
}

// A delivery that fails (no queue takes it) is retried under the
// forwarder's policy, in the consumer, and never acked until a publish is
// confirmed: once a queue is bound, the next attempt delivers it.
func TestFailedDeliveryRetried(t *testing.T) {
	eachBroker(t, func(t *testing.T, b target) {
		sched := b.scheduler(t)
		exchange := "reminders"
		if b.url != "" {
			exchange = brokertest.UniqueName(t, "sched-unbound")
		}
		if err := (acemq.Topology{Exchanges: []acemq.ExchangeSpec{{Name: exchange, Type: transport.Direct}}}).Apply(t.Context(), b.conn); err != nil {
			t.Fatal(err)
		}
		wait := time.Second // long enough on RabbitMQ for the bind below to come first
		f := forward(t, sched, schedule.WithConsumeOptions(acemq.WithPolicy(acemq.Fixed(5, wait))))
		if err := sched.PublishIn(t.Context(), 0, exchange, "remind", Reminder{Order: "o-1"}); err != nil {
			t.Fatal(err)
		}
		acemqtest.WaitFor(t, f.Consumer, "the first failure", func(s acemq.Stats) bool { return s.Waiting == 1 })
		queue := b.targetQueue(t)
		bound := acemq.Topology{Exchanges: []acemq.ExchangeSpec{{Name: exchange, Type: transport.Direct}},
			Queues: []acemq.QueueSpec{{Name: queue, Type: transport.Classic, DeadLetter: true, Bindings: []acemq.BindingSpec{{Exchange: exchange, RoutingKey: "remind"}}}}}
		if err := bound.Apply(t.Context(), b.conn); err != nil {
			t.Fatal(err)
		}
		if b.advance != nil {
			b.advance(wait)
		}
		settled(t, f, 1)
		// The retry's copy can be delivered and accepted before the
		// original's ack is counted: wait for both counts.
		acemqtest.WaitFor(t, f.Consumer, "a retry in the consumer, then the accept", func(s acemq.Stats) bool { return s.RetriedInConsumer >= 1 && s.Accepted == 1 })
		if s := f.Stats(); s.Accepted != 1 || s.DeadLettered != 0 {
			t.Errorf("the forwarder's stats %+v, want a retry in the consumer, then the accept", s)
		}
		if got := take(t, b, queue, 1); acemq.ReadEnvelope(got[0]).Type != "ScheduledMessage" {
			t.Errorf("delivered %+v", got[0])
		}
	})
}

// publishRaw publishes msg as it is to queue through the default exchange,
// as another library (or a mistake) would put it there.
func publishRaw(t *testing.T, b target, queue string, msg transport.Message) error {
	t.Helper()
	c, err := b.conn.Publish(t.Context(), "", queue, msg)
	if err != nil {
		return err
	}
	return c.Wait(t.Context())
}

// take takes n messages from queue (acked), waiting for them to arrive.
func take(t *testing.T, b target, queue string, n int) []transport.Message {
	t.Helper()
	var got []transport.Message
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n {
		d, ok, err := b.conn.Get(t.Context(), queue)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if time.Now().After(deadline) {
				t.Fatalf("%s holds %d messages after 10s, want %d", queue, len(got), n)
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err := d.Ack(); err != nil {
			t.Fatal(err)
		}
		got = append(got, d.Message)
	}
	return got
}

// A message that waited on rungs carries the broker's dead-lettering
// history (x-death, x-first-death-*, x-last-death-*) into the due queue:
// the hops are the scheduler's own business, and the target gets the
// message without them, its application's headers kept.
func TestDeliveredWithoutDeathHeaders(t *testing.T) {
	eachBroker(t, func(t *testing.T, b target) {
		sched := b.scheduler(t)
		queue := b.targetQueue(t)
		f := forward(t, sched)
		if err := sched.PublishIn(t.Context(), 2*time.Second, "", queue, Reminder{Order: "o-1"},
			acemq.WithHeaders(transport.Table{"tenant": "t-9"})); err != nil {
			t.Fatal(err)
		}
		if b.advance != nil {
			b.advance(time.Second) // off the first rung, onto the next
			acemqtest.WaitFor(t, f.Consumer, "the hop", func(s acemq.Stats) bool { return s.Accepted == 1 })
			b.advance(time.Second)
		}
		// Two seconds ahead it went onto the 1s rung at once, and waited
		// there at least (on memory://, a hop onto it again).
		settled(t, f, 1)
		m := take(t, b, queue, 1)[0]
		for name := range m.Headers {
			if name == contract.HeaderDeath || strings.HasPrefix(name, contract.HeaderFirstDeathPrefix) || strings.HasPrefix(name, contract.HeaderLastDeathPrefix) {
				t.Errorf("delivered with the broker's header %s = %v", name, m.Headers[name])
			}
		}
		if m.Headers["tenant"] != "t-9" {
			t.Errorf("delivered with the headers %v, want the application's tenant kept", m.Headers)
		}
	})
}
