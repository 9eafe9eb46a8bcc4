package acemq_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// A publish to an exchange that does not exist was certainly not routed:
// its error matches ErrNotFound and says so, and does not match
// ErrNotConfirmed ("may or may not have been routed"), on memory:// as on
// RabbitMQ.
func TestPublishToMissingExchangeOnMemory(t *testing.T) {
	conn := acemqtest.NewBroker(t).Connect(t)
	publishToMissingExchange(t, conn, "acemq.test.missing", "acemq.test.after")
}

func TestPublishToMissingExchange(t *testing.T) {
	conn := connect(t)
	publishToMissingExchange(t, conn, brokertest.UniqueName(t, "acemq.test.missing"), brokertest.UniqueName(t, "acemq.test"))
}

func publishToMissingExchange(t *testing.T, conn *acemq.Conn, missing, queue string) {
	ctx := context.Background()
	wantNotRouted := func(what string, err error, id string) {
		t.Helper()
		var pe *acemq.PublishError
		if !errors.As(err, &pe) || pe.MessageID != id || pe.Exchange != missing {
			t.Errorf("%s: %v, want a *PublishError for %s to %s", what, err, id, missing)
		}
		if !errors.Is(err, acemq.ErrNotFound) || !strings.Contains(err.Error(), "the message was not routed") {
			t.Errorf("%s: %v, want an error matching ErrNotFound that says the message was not routed", what, err)
		}
		if errors.Is(err, acemq.ErrNotConfirmed) {
			t.Errorf("%s: %v matches ErrNotConfirmed; the message was certainly not routed", what, err)
		}
	}
	p := acemqtest.NewPublisher[item](t, conn, missing)
	wantNotRouted("Publish", p.Publish(ctx, "k", item{N: 1}, acemq.WithMessageID("m-1")), "m-1")

	// A batch: the failing message and every one after it, in flight on the
	// channel the broker closed or sent on the next one.
	ids := []string{"b-0", "b-1", "b-2", "b-3", "b-4", "b-5", "b-6", "b-7"}
	var batch []acemq.Outgoing[item]
	for i, id := range ids {
		batch = append(batch, acemq.Outgoing[item]{RoutingKey: "k", Body: item{N: i}, Options: []acemq.MessageOption{acemq.WithMessageID(id)}})
	}
	err := p.PublishBatch(ctx, batch)
	var be *acemq.BatchError
	if !errors.As(err, &be) || be.Total != len(ids) || len(be.Failed) != len(ids) {
		t.Fatalf("PublishBatch = %v, want a *BatchError with every one of %d failed", err, len(ids))
	}
	for i, f := range be.Failed {
		if f.Index != i {
			t.Errorf("failure %d is number %d", i, f.Index)
		}
		wantNotRouted("PublishBatch", f.Err, ids[i])
	}

	// The transport publishes on a new channel: the next publish is confirmed.
	tr := conn.Transport()
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: queue, Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = tr.DeleteQueue(context.Background(), queue) })
	if err := acemqtest.NewPublisher[item](t, conn, "").Publish(ctx, queue, item{N: 9}); err != nil {
		t.Fatalf("Publish after the failures: %v", err)
	}
	if st, err := tr.InspectQueue(ctx, queue); err != nil || st.Messages != 1 {
		t.Errorf("InspectQueue %s = %+v, %v; want the one message", queue, st, err)
	}
}
