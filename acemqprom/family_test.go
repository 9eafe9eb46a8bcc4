package acemqprom_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/pipeline"
	"github.com/acemq-go/acemq/request"
	"github.com/acemq-go/acemq/transport"
)

// scraped is what a scrape shows: the values of each metric's outcome
// label, by metric name ("" for a metric without one).
func scraped(t *testing.T, g prometheus.Gatherer) map[string][]string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, mf := range mfs {
		got[mf.GetName()] = nil
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == contract.TagOutcome && !slices.Contains(got[mf.GetName()], l.GetValue()) {
					got[mf.GetName()] = append(got[mf.GetName()], l.GetValue())
				}
			}
		}
		slices.Sort(got[mf.GetName()])
	}
	return got
}

// TestFamilyNamesInAScrape pins the scrape of a demo-like run on memory://
// to section 17 as package contract holds it: every metric of the
// family's is there by its rendered name, each outcome label says only the
// family's words, and the run's outcomes are all seen: a publish confirmed,
// unroutable and failed; deliveries acked, retried, rejected (the
// handler's Reject), dead-lettered (a panic), parked and in progress (a
// put-back, and a set-aside that failed); requests answered,
// timed out and failed; outbox records published and failed (a relay
// watched, its table on SQLite); pipeline runs completed and ended early.
func TestFamilyNamesInAScrape(t *testing.T) {
	reg, m := newMetrics(t)
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t, acemq.WithObserver(m))
	ctx := context.Background()
	tr := conn.Transport()
	for _, q := range []string{"orders", "payments", "quotes", "idle", "outboxed"} {
		if err := tr.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.DeclareExchange(ctx, transport.Exchange{Name: "events", Type: transport.Direct, Durable: true}); err != nil {
		t.Fatal(err)
	}

	// orders: acked, rejected into Q.dlq, dead-lettered by a panic, parked,
	// retried in the consumer, and put back once (in progress).
	var mu sync.Mutex
	seen := map[string]int{}
	sight := func(id string) int {
		mu.Lock()
		defer mu.Unlock()
		seen[id]++
		return seen[id]
	}
	orders, err := acemq.Consume(ctx, conn, "orders", func(ctx context.Context, msg acemq.Message[item]) acemq.Decision {
		switch msg.Body.Do {
		case "panic":
			panic("the script panics")
		case "requeue":
		default:
			return handle(ctx, msg)
		}
		if sight(msg.Envelope.ID) == 1 {
			return acemq.Requeue(errors.New("held by another consumer"))
		}
		return acemq.Accept()
	}, acemq.WithPolicy(acemq.Fixed(3, 10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = orders.Close(context.Background()) })

	// payments: its rung and its Q.dlq gone, so a retry waits in the
	// consumer (the rung missing) and the dead letter fails to be set
	// aside, going back to its queue (in progress); its third sight is
	// accepted.
	payRung := contract.RungQueue("payments", 20*time.Second, contract.DefaultRungKind)
	payments, err := acemq.Consume(ctx, conn, "payments", func(_ context.Context, msg acemq.Message[item]) acemq.Decision {
		if sight(msg.Envelope.ID) < 3 {
			return acemq.Retry(errors.New("declined"))
		}
		return acemq.Accept()
	}, acemq.WithPolicy(acemq.Fixed(2, 20*time.Second).WaitInBrokerFrom(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = payments.Close(context.Background()) })
	for _, q := range []string{payRung, contract.DeadLetterQueue("payments")} {
		if _, err := tr.DeleteQueue(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	responder, err := request.Serve(ctx, conn, "quotes", func(_ context.Context, msg acemq.Message[string]) (string, error) {
		return "quoted " + msg.Body, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = responder.Close(context.Background()) })
	client, err := request.NewClient(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close(context.Background()) })

	pub := acemqtest.NewPublisher[item](t, conn, "")
	for _, do := range []string{"accept", "reject", "panic", "park", "flaky", "requeue"} {
		if err := pub.Publish(ctx, "orders", item{Do: do}); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Publish(ctx, "payments", item{Do: "retry"}); err != nil {
		t.Fatal(err)
	}
	if err := acemqtest.NewPublisher[item](t, conn, "events").Publish(ctx, "nowhere", item{}); !errors.Is(err, acemq.ErrUnroutable) {
		t.Fatalf("a publish no queue takes: %v, want ErrUnroutable", err)
	}
	if err := acemqtest.NewPublisher[item](t, conn, "no-such-exchange").Publish(ctx, "x", item{}); err == nil {
		t.Fatal("a publish to an exchange that does not exist succeeded")
	}
	if got, err := request.Do[string, string](ctx, client, "", "quotes", "a"); err != nil || got != "quoted a" {
		t.Fatalf("a request: %q, %v", got, err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := request.Do[string, string](short, client, "", "idle", "b"); !errors.Is(err, acemq.ErrTimeout) {
		t.Fatalf("a request nobody answers: %v, want ErrTimeout", err)
	}
	if _, err := request.Do[string, string](ctx, client, "", "nowhere", "c"); !errors.Is(err, acemq.ErrUnroutable) {
		t.Fatalf("a request no queue takes: %v, want ErrUnroutable", err)
	}

	// The waits in the consumer, each seen held before the clock moves:
	// the put-back (1s), the retry of orders (10s), that of payments (20s).
	acemqtest.WaitFor(t, orders, "orders waiting", func(s acemq.Stats) bool {
		return s.Accepted == 1 && s.DeadLettered == 2 && s.Parked == 1 && s.Waiting == 2
	})
	acemqtest.WaitFor(t, payments, "the payment waiting", func(s acemq.Stats) bool { return s.RungMissing == 1 && s.Waiting == 1 })
	b.Advance(contract.RequeueDelay)
	acemqtest.WaitFor(t, orders, "the put-back accepted", func(s acemq.Stats) bool { return s.Accepted == 2 && s.Waiting == 1 })
	b.Advance(10*time.Second - contract.RequeueDelay)
	acemqtest.WaitFor(t, orders, "the retry accepted", func(s acemq.Stats) bool { return s.Accepted == 3 && s.Waiting == 0 })
	b.Advance(10 * time.Second)
	// Its dead letter failed: it is held a moment before it goes back.
	acemqtest.WaitFor(t, payments, "the failed set-aside held", func(s acemq.Stats) bool { return s.SetAsideFailed == 1 && s.Waiting == 1 })
	b.Advance(time.Minute)
	acemqtest.WaitFor(t, payments, "the payment accepted", func(s acemq.Stats) bool { return s.Accepted == 1 })

	// A pipeline: a run ended early at its first step, one completed.
	runs(t, conn)

	// An outbox relay: a record published, one failed.
	s, relay, clock := anOutbox(t, conn, "relay")
	watch(t, m, relay)
	publishedAndFailed(t, s, relay, clock, "outboxed", time.Minute)

	got := scraped(t, reg)
	for _, metric := range contract.Metrics() {
		if !metric.Family {
			continue
		}
		name := metric.Prometheus()
		values, ok := got[name]
		if !ok {
			t.Errorf("the scrape has no %s (%s)", name, metric.Name)
			continue
		}
		for _, v := range values {
			if !slices.Contains(metric.Outcomes, contract.TelemetryOutcome(v)) {
				t.Errorf("%s has outcome=%q, which is not among the family's %q", name, v, metric.Outcomes)
			}
		}
	}
	want := map[string][]string{
		"acemq_publish_total": {"confirmed", "failed", "unroutable"},
		"acemq_consume_total": {"acked", "dead_lettered", "in_progress", "parked", "rejected", "retried"},
		"acemq_request_total": {"answered", "failed", "timed_out"},
		"acemq_outbox_total":  {"failed", "published"},

		"acemq_pipeline_run_total":            {"completed", "ended_early"},
		"acemq_pipeline_run_duration_seconds": {"completed", "ended_early"},
	}
	for name, values := range want {
		if !slices.Equal(got[name], values) {
			t.Errorf("%s has the outcomes %q, want %q", name, got[name], values)
		}
	}
}

// runs runs a pipeline of two steps on conn until one run has ended early
// at the first and one has completed at the second.
func runs(t *testing.T, conn *acemq.Conn) {
	t.Helper()
	ctx := context.Background()
	p := pipeline.Pipeline{Name: "checkout", Steps: []string{"price", "charge"}}
	if err := p.Declare(ctx, conn); err != nil {
		t.Fatal(err)
	}
	var steps []*pipeline.Consumer
	for _, step := range p.Steps {
		c, err := pipeline.Run(ctx, conn, p, step, func(ctx context.Context, m acemq.Message[item]) acemq.Decision {
			if m.Body.Do == "end" {
				return pipeline.End(ctx)
			}
			return pipeline.Next(ctx, m.Body)
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = c.Close(context.Background()) })
		steps = append(steps, c)
	}
	for _, do := range []string{"end", "go"} {
		if err := p.Start(ctx, conn, item{Do: do}); err != nil {
			t.Fatal(err)
		}
	}
	acemqtest.WaitFor(t, steps[0].Consumer, "the first step's two runs", func(s acemq.Stats) bool { return s.Accepted == 2 })
	acemqtest.WaitFor(t, steps[1].Consumer, "the run completed", func(s acemq.Stats) bool { return s.Accepted == 1 })
}
