package acemqprom_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/stream"
	"github.com/acemq-go/acemq/transport/memory"
)

// A stream consumer's deliveries are counted in acemq_consume_total as any
// consumer's: accepted, a failure set aside, a body that does not decode.
func TestStreamConsumeCounted(t *testing.T) {
	reg, m := newMetrics(t)
	b := memory.NewBroker()
	t.Cleanup(b.Close)
	conn, err := acemq.New(b.Connect(), acemq.WithObserver(m))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	const name = "events"
	if err := (stream.Spec{Name: name, MaxAge: time.Hour}).Declare(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	pub, err := acemq.NewPublisher[item](conn, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, do := range []string{"accept", "reject", "accept"} {
		if err := pub.Publish(t.Context(), name, item{Do: do}); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := acemq.NewPublisher[[]byte](conn, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Publish(t.Context(), name, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	c, err := stream.Consume(t.Context(), conn, name, func(_ context.Context, m stream.Message[item]) acemq.Decision {
		if m.Body.Do == "reject" {
			return acemq.Reject(errors.New("rejected by the script"))
		}
		return acemq.Accept()
	}, stream.Options{Offset: stream.First(), OnFailure: stream.Skip})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	consumed := func(outcome, class string) string {
		return series("consume_total", "queue", name, "message_type", name, "outcome", outcome, "reason_class", class)
	}
	eventually(t, reg, "the stream's deliveries counted", including(map[string]float64{
		consumed("acked", "none"):         2,
		consumed("rejected", "rejected"):  1,
		consumed("parked", "undecodable"): 1,
		series("messages_dead_lettered_total", "queue", name, "target", contract.DeadLetterQueue(name), "reason_class", "rejected"): 1,
	}))
}
