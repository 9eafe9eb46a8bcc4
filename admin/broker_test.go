package admin

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// On a real broker: drift prepared with the transport is found, and once
// the drifted rung is gone and the topology applied, the broker is in sync.
func TestDiffOnBroker(t *testing.T) {
	url := brokertest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	exchange := brokertest.UniqueName(t, "diff")
	source := brokertest.UniqueName(t, "diff")
	rung := contract.RungQueue(source, time.Minute, contract.ContractRungs)
	leftover := contract.RungQueue(source, 5*time.Minute, contract.ContractRungs)
	policy := acemq.Fixed(2, time.Minute)
	top := acemq.Topology{
		Exchanges: []acemq.ExchangeSpec{{Name: exchange, Type: transport.Topic}},
		Queues: []acemq.QueueSpec{{Name: source, DeadLetter: true, Retry: &policy, Rungs: contract.ContractRungs,
			Bindings: []acemq.BindingSpec{{Exchange: exchange, RoutingKey: "order.*"}}}},
	}
	plan, err := top.Plan()
	if err != nil {
		t.Fatal(err)
	}

	conn, err := acemq.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tr := conn.Transport()
	t.Cleanup(func() {
		for _, q := range []string{rung, leftover, contract.DeadLetterQueue(source), contract.ParkedQueue(source)} {
			_, _ = tr.DeleteQueue(context.Background(), q)
		}
	})

	// The drift: the source queue as the file has it, but its rung waits 30s
	// instead of a minute, a rung of an older policy is left over, and
	// nothing else is there.
	for _, d := range plan {
		if q, ok := d.(transport.Queue); ok && q.Name == source {
			if err := tr.DeclareQueue(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, ttl := range map[string]int64{rung: 30000, leftover: 300000} {
		q := transport.Queue{Name: name, Type: transport.Classic, Durable: true, Arguments: transport.Table{
			"x-message-ttl": ttl, "x-dead-letter-exchange": contract.RetryExchange, "x-dead-letter-routing-key": source}}
		if err := tr.DeclareQueue(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	endpoint, err := EndpointFor(url, brokertest.ManagementURL())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"missing-exchange exchange " + exchange,
		"missing-dead-letter-queue queue " + source + ".dlq",
		"missing-parked-queue queue " + source + ".parked",
		"rung-drift queue " + rung,
		`missing-retry-binding binding acemq.retry -> ` + source + ` under "` + source + `"`,
		"leftover-rung queue " + leftover,
	}
	report := eventually(t, ctx, endpoint, plan, func(r Report) bool {
		got := kinds(r)
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false
			}
		}
		return true
	})
	t.Logf("findings: %q", kinds(report))

	// What the findings say to do: the rung is deleted and declared again by
	// Apply, the leftover deleted.
	for _, q := range []string{rung, leftover} {
		if _, err := tr.DeleteQueue(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, endpoint, plan, Report.InSync)
}

// eventually reads the broker until done(Diff) holds: the management API can
// lag a moment behind declarations.
func eventually(t *testing.T, ctx context.Context, e Endpoint, plan []transport.Declaration, done func(Report) bool) Report {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		live, err := Read(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		r := Diff(plan, live)
		if done(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 15s the findings are still %q", kinds(r))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Read reports each queue's depth and consumers, as the management API
// samples them (every few seconds: the test polls until they show).
func TestReadStatsOnBroker(t *testing.T) {
	url := brokertest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := acemq.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tr := conn.Transport()
	q := brokertest.UniqueName(t, "stats")
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = tr.DeleteQueue(context.Background(), q) })
	for range 3 {
		c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: q, Mandatory: true, Message: transport.Message{Body: []byte("x")}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	endpoint, err := EndpointFor(url, brokertest.ManagementURL())
	if err != nil {
		t.Fatal(err)
	}
	for {
		s, err := Read(ctx, endpoint)
		if err != nil {
			t.Fatal(err)
		}
		if st := s.Stats[q]; st.Messages == 3 && st.Consumers == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the management API never reported 3 messages in %s: %+v", q, s.Stats[q])
		case <-time.After(200 * time.Millisecond):
		}
	}
}
