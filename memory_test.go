package acemq_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// The retry ladder end to end on memory://, on the test's clock: two waits
// in the consumer, one on a rung that expires home through acemq.retry, then
// the dead-letter queue; an undecodable message is parked.
func TestLadderOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	ctx := context.Background()
	policy := acemq.Exponential(4, 10*time.Second, 5*time.Minute).WithJitter(0) // 10s, 20s in the consumer; 40s on a rung
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "orders", Type: transport.Classic, Retry: &policy}}}
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	c := consume(t, conn, "orders", func(_ context.Context, m acemq.Message[item]) acemq.Decision {
		return acemq.Retry(fmt.Errorf("attempt %d failed", m.Envelope.Attempt))
	}, acemq.WithPolicy(policy))
	if err := acemqtest.NewPublisher[item](t, conn, "").Publish(ctx, "orders", item{N: 1}); err != nil {
		t.Fatal(err)
	}

	acemqtest.WaitFor(t, c, "the first wait in the consumer", func(s acemq.Stats) bool { return s.Waiting == 1 })
	b.Advance(10 * time.Second)
	acemqtest.WaitFor(t, c, "the second wait", func(s acemq.Stats) bool { return s.RetriedInConsumer == 1 && s.Waiting == 1 })
	b.Advance(20 * time.Second)
	acemqtest.WaitFor(t, c, "the rung", func(s acemq.Stats) bool { return s.RetriedOnRung == 1 })

	rung := b.Messages(t, "orders.retry.quorum.40s")
	if len(rung) != 1 || rung[0].Envelope.Attempt != 4 || c.Stats().Waiting != 0 {
		t.Fatalf("the rung holds %+v and the consumer %d; want the message, attempt 4, in the rung only", rung, c.Stats().Waiting)
	}
	b.Advance(39 * time.Second)
	if len(b.Messages(t, "orders.retry.quorum.40s")) != 1 {
		t.Fatal("the rung let the message go before its 40s")
	}
	b.Advance(time.Second)
	acemqtest.WaitFor(t, c, "the dead letter", func(s acemq.Stats) bool { return s.DeadLettered == 1 })

	dead := b.Messages(t, "orders.dlq")
	if len(dead) != 1 {
		t.Fatalf("orders.dlq holds %d messages", len(dead))
	}
	if got := dead[0].Envelope.Error; got != "exhausted 4 attempts: attempt 4 failed" {
		t.Errorf("reason %q", got)
	}
	deaths, _ := dead[0].Headers["x-death"].([]any)
	if len(deaths) != 1 || !strings.Contains(fmt.Sprint(deaths[0]), "orders.retry.quorum.40s") || !strings.Contains(fmt.Sprint(deaths[0]), "expired") {
		t.Errorf("x-death %v, want the expiry from the rung", dead[0].Headers["x-death"])
	}
}

func TestParkedOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	ctx := context.Background()
	if err := conn.Transport().DeclareQueue(ctx, transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	c := consume(t, conn, "orders", func(context.Context, acemq.Message[item]) acemq.Decision {
		return acemq.Reject(errors.New("unreachable: the body does not decode"))
	})
	raw := acemqtest.NewPublisher[[]byte](t, conn, "", acemq.WithCodec(jsonClaim{acemq.Bytes}))
	if err := raw.Publish(ctx, "orders", []byte("{oops")); err != nil {
		t.Fatal(err)
	}
	acemqtest.WaitFor(t, c, "the parked message", func(s acemq.Stats) bool { return s.Parked == 1 })
	parked := b.Messages(t, "orders.parked")
	if len(parked) != 1 || string(parked[0].Body) != "{oops" || !strings.HasPrefix(parked[0].Envelope.Error, "could not be decoded: ") {
		t.Errorf("orders.parked holds %+v", parked)
	}
}

// A routing slip in Java's step form reaches the handler as Envelope.Route,
// and every republish (a retry, then a park) keeps its three headers as they
// came, so that the slip survives the detour.
func TestRouteOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	ctx := context.Background()
	if err := conn.Transport().DeclareQueue(ctx, transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	route := transport.Table{contract.HeaderRoute: "validate,enrich,store", contract.HeaderRoutePosition: int32(1), contract.HeaderRouteID: "run-1"}
	want := acemq.Route{Steps: []string{"validate", "enrich", "store"}, Position: 1, ID: "run-1"}
	seen := make(chan acemq.Route, 2)
	policy := acemq.Fixed(2, time.Second)
	c := consume(t, conn, "orders", func(_ context.Context, m acemq.Message[item]) acemq.Decision {
		seen <- m.Envelope.Route
		if m.Envelope.Attempt == 1 {
			return acemq.Retry(errors.New("again"))
		}
		return acemq.Park(errors.New("look at it"))
	}, acemq.WithPolicy(policy))
	msg := transport.Message{ContentType: "application/json", Headers: maps.Clone(route), MessageID: "m-1", Body: []byte(`{"n":1}`), Persistent: true}
	conf, err := conn.Transport().Publish(ctx, transport.Publishing{RoutingKey: "orders", Mandatory: true, Message: msg})
	if err == nil {
		err = conf.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	acemqtest.WaitFor(t, c, "the wait", func(s acemq.Stats) bool { return s.Waiting == 1 })
	b.Advance(time.Second)
	acemqtest.WaitFor(t, c, "the park", func(s acemq.Stats) bool { return s.Parked == 1 })
	for i := range 2 {
		if got := <-seen; !reflect.DeepEqual(got, want) {
			t.Errorf("delivery %d: the handler saw Route %#v, want %#v", i+1, got, want)
		}
	}
	parked := b.Messages(t, "orders.parked")
	if len(parked) != 1 {
		t.Fatalf("orders.parked holds %d messages", len(parked))
	}
	for k, v := range route {
		if got := parked[0].Headers[k]; !reflect.DeepEqual(got, v) {
			t.Errorf("the parked message has %s %#v, want %#v", k, got, v)
		}
	}
	if !reflect.DeepEqual(parked[0].Envelope.Route, want) {
		t.Errorf("the parked message reads Route %#v", parked[0].Envelope.Route)
	}
}
