package acemqtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// A five-minute rung expires when the test says so.
func TestBroker(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	ctx := context.Background()
	policy := acemq.Fixed(2, 5*time.Minute)
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "jobs", Retry: &policy}}}
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	c, err := acemq.Consume(ctx, conn, "jobs", func(_ context.Context, m acemq.Message[string]) acemq.Decision {
		if m.Envelope.Attempt == 1 {
			return acemq.Retry(errors.New("later"))
		}
		return acemq.Accept()
	}, acemq.WithPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if err := mustPublisher[string](t, conn, "").Publish(ctx, "jobs", "build", acemq.WithHeaders(transport.Table{"team": "a"})); err != nil {
		t.Fatal(err)
	}
	acemqtest.WaitFor(t, c, "the retry on the rung", func(s acemq.Stats) bool { return s.RetriedOnRung == 1 })
	waiting := b.Messages(t, "jobs.retry.5m")
	if len(waiting) != 1 || string(waiting[0].Body) != "build" || waiting[0].Envelope.Attempt != 2 || waiting[0].Envelope.Headers["team"] != "a" {
		t.Fatalf("the rung holds %+v", waiting)
	}
	b.Advance(5 * time.Minute)
	acemqtest.WaitFor(t, c, "the accept", func(s acemq.Stats) bool { return s.Accepted == 1 })
	if left := b.Messages(t, "jobs.retry.5m"); len(left) != 0 {
		t.Errorf("the rung still holds %d", len(left))
	}
}

// Each test gets a broker of its own.
func TestBrokersAreSeparate(t *testing.T) {
	one, two := acemqtest.NewBroker(t), acemqtest.NewBroker(t)
	if one.URL == two.URL {
		t.Fatal("two brokers share a URL")
	}
	ctx := context.Background()
	if err := one.Connect(t).Transport().DeclareQueue(ctx, transport.Queue{Name: "q", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := two.Connect(t).Transport().InspectQueue(ctx, "q"); !errors.Is(err, acemq.ErrNotFound) {
		t.Errorf("the second broker sees the first's queue: %v", err)
	}
}

// A broker behaves as RabbitMQ 4.0 unless told otherwise, and says so.
func TestBrokerVersion(t *testing.T) {
	for _, tt := range []struct {
		opts []memory.Option
		want string
	}{
		{nil, "4.0.5"},
		{[]memory.Option{memory.WithRabbitMQVersion("3.10")}, "3.10.8"},
	} {
		b := acemqtest.NewBroker(t, tt.opts...)
		if got := b.Connect(t).Transport().State().ServerVersion; got != tt.want {
			t.Errorf("NewBroker(%d options): ServerVersion %q, want %q", len(tt.opts), got, tt.want)
		}
	}
}

// mustPublisher is acemq.NewPublisher, failing the test on an error.
func mustPublisher[T any](t testing.TB, c *acemq.Conn, exchange string, opts ...acemq.Option) *acemq.Publisher[T] {
	t.Helper()
	p, err := acemq.NewPublisher[T](c, exchange, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The package's example test runs as it is shown.
func TestTheExampleRuns(t *testing.T) { checkoutTest(t) }
