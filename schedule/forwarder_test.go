package schedule_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/schedule"
	"github.com/acemq-go/acemq/transport"
)

// recorder is an Observer noting the publishes and the settled deliveries
// it is told of, as a metrics adapter would count them.
type recorder struct {
	acemq.NopObserver
	mu        sync.Mutex
	published []string // exchange/routing key, confirmed
	settled   []string // queue/outcome
}

func (r *recorder) PublishEnd(_ context.Context, p *acemq.PublishInfo, res acemq.PublishResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.published = append(r.published, p.Exchange+"/"+p.RoutingKey+"/"+string(res.Outcome))
}

func (r *recorder) DeliveryEnd(_ context.Context, d *acemq.DeliveryInfo, s acemq.SettleResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settled = append(r.settled, d.Queue+"/"+string(s.Outcome))
}

func (r *recorder) has(list *[]string, want string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range *list {
		if s == want {
			return true
		}
	}
	return false
}

// The forwarder is a consumer like any other: the Conn's Observer is told
// of its deliveries and of its hops and deliveries as publishes, and Close
// hands back what it holds (a delivery waiting for its retry) to the due
// queue, where it stays.
func TestForwarderIsAConsumer(t *testing.T) {
	b := acemqtest.NewBroker(t)
	rec := &recorder{}
	conn := b.Connect(t, acemq.WithObserver(rec))
	sched, err := schedule.New(t.Context(), conn, schedule.WithClock(b.Clock))
	if err != nil {
		t.Fatal(err)
	}
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: "reminders", Type: transport.Classic}}}).Apply(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	f, err := sched.Forward(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.PublishIn(t.Context(), 10*time.Second, "", "reminders", Reminder{Order: "o-1"}); err != nil {
		t.Fatal(err)
	}
	b.Advance(10 * time.Second)
	settled(t, f, 1)
	// The delivery counts as forwarded before it is acked; the accept is
	// counted after the observer is told of it.
	acemqtest.WaitFor(t, f.Consumer, "the accept", func(s acemq.Stats) bool { return s.Accepted >= 1 })
	for _, want := range []string{"acemq.schedule/acemq.schedule.10s/" + string(contract.PublishConfirmed),
		"/reminders/" + string(contract.PublishConfirmed)} {
		if !rec.has(&rec.published, want) {
			t.Errorf("the observer was not told of the publish %s: %v", want, rec.published)
		}
	}
	if want := "acemq.schedule.due/" + string(contract.Accepted); !rec.has(&rec.settled, want) {
		t.Errorf("the observer was not told of the delivery %s: %v", want, rec.settled)
	}

	// A delivery to an exchange that does not exist waits for its retry
	// in the consumer; Close hands it back to the due queue.
	if err := sched.PublishIn(t.Context(), 0, "nowhere", "remind", Reminder{Order: "o-2"}); err != nil {
		t.Fatal(err)
	}
	acemqtest.WaitFor(t, f.Consumer, "the failed delivery waiting", func(s acemq.Stats) bool { return s.Waiting == 1 })
	report, err := f.Close(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if report.WaitsCutShort != 1 {
		t.Errorf("Close: %+v, want the waiting delivery handed back", report)
	}
	if held := b.Messages(t, sched.DueQueue()); len(held) != 1 || held[0].Headers[contract.HeaderScheduleExchange] != "nowhere" {
		t.Errorf("the due queue holds %+v after Close, want the message handed back", held)
	}
}

// ticking is a clock that moves on a microsecond every time it is read.
type ticking struct {
	transport.Clock
	now atomic.Int64
}

func (c *ticking) Now() time.Time { return time.Unix(0, c.now.Add(int64(time.Microsecond))) }

// PublishIn reads the clock once: a delay of exactly a rung's waits on that
// rung, not on the next shorter one (nor, at 1s, none).
func TestPublishInReadsTheClockOnce(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	clock := &ticking{Clock: b.Clock}
	clock.now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	sched, err := schedule.New(t.Context(), conn, schedule.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{time.Second, 10 * time.Second, time.Hour} {
		if err := sched.PublishIn(t.Context(), d, "", "reminders", Reminder{}); err != nil {
			t.Fatal(err)
		}
		if got := b.Messages(t, contract.ScheduleRungQueue(contract.ScheduleExchange, d)); len(got) != 1 {
			t.Errorf("PublishIn(%v): its rung holds %d messages, want it", d, len(got))
		}
	}
}

// Options are checked; that each belongs to one constructor is
// TestOptionsBelongToOneConstructor's.
func TestOptions(t *testing.T) {
	conn := acemqtest.NewBroker(t).Connect(t)
	for _, c := range []struct {
		opts []schedule.Option
		want string
	}{
		{[]schedule.Option{schedule.WithExchange(" ")}, "the exchange name is blank"},
		{[]schedule.Option{schedule.WithExchange("amq.sched")}, "starts with amq."},
		{[]schedule.Option{schedule.WithClock(nil)}, "the clock is nil"},
		{[]schedule.Option{schedule.WithCodec(nil)}, "the codec is nil"},
		{[]schedule.Option{nil}, "a nil option"},
	} {
		if _, err := schedule.New(t.Context(), conn, c.opts...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New: %v, want %q", err, c.want)
		}
	}
	sched, err := schedule.New(t.Context(), conn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sched.Forward(t.Context(), schedule.WithLogger(nil)); err == nil || !strings.Contains(err.Error(), "schedule: Forward: WithLogger: the logger is nil") {
		t.Errorf("Forward: %v", err)
	}
	if _, err := schedule.New(t.Context(), nil); err == nil {
		t.Error("New on a nil connection")
	}
	// Unencodable: refused before anything is sent.
	if err := sched.PublishIn(t.Context(), time.Minute, "", "q", func() {}); err == nil || errors.Is(err, acemq.ErrUnroutable) {
		t.Errorf("PublishIn of a func: %v", err)
	}
}

// A step-form routing slip (another library's) goes on with the message,
// over a hop and into the delivery, so that a scheduled step of a
// pipeline carries on.
func TestRoutingSlipKept(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	sched, err := schedule.New(t.Context(), conn, schedule.WithClock(b.Clock))
	if err != nil {
		t.Fatal(err)
	}
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: "reminders", Type: transport.Classic}}}).Apply(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	f := forward(t, sched)
	due := b.Clock.Now().Add(2 * time.Second).UnixMilli()
	msg := transport.Message{Body: []byte(`{}`), MessageID: "m-1", ContentType: "application/octet-stream", Headers: transport.Table{
		"x-acemq-id": "m-1", "x-acemq-route": "check,remind, ship", "x-acemq-route-position": int64(1), "x-acemq-route-id": "run-7",
		"x-schedule-exchange": "", "x-schedule-routing-key": "reminders", "x-schedule-due-at": due}}
	c, err := conn.Publish(t.Context(), "", sched.DueQueue(), msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	acemqtest.WaitFor(t, f.Consumer, "the hop", func(acemq.Stats) bool { return f.Forwarded().Hops == 1 })
	hop := b.Messages(t, "acemq.schedule.1s")
	b.Advance(time.Second)
	acemqtest.WaitFor(t, f.Consumer, "the second hop", func(acemq.Stats) bool { return f.Forwarded().Hops == 2 })
	b.Advance(time.Second)
	settled(t, f, 1)
	got := b.Messages(t, "reminders")
	if len(hop) != 1 || len(got) != 1 {
		t.Fatalf("the 1s rung held %d messages and reminders %d, want one each", len(hop), len(got))
	}
	for _, m := range []acemqtest.Message{hop[0], got[0]} {
		if r := m.Envelope.Route; strings.Join(r.Steps, "|") != "check|remind|ship" || r.Position != 1 || r.ID != "run-7" {
			t.Errorf("the slip became %+v (type %s)", r, m.Envelope.Type)
		}
	}
}
