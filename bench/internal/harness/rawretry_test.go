package harness

import (
	"maps"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/contract"
)

// raw+retry is a fair baseline only if it republishes what AceMQ's retry
// republishes: the delivery's properties and body, its headers with the
// next attempt, persistent, without a per-message expiration.
func TestRawRetryRepublishesWhatARetryDoes(t *testing.T) {
	p, err := acemqPublishing(7)
	if err != nil {
		t.Fatal(err)
	}
	p.Headers["tenant"] = "acme"
	d := amqp.Delivery{Headers: maps.Clone(p.Headers), ContentType: p.ContentType, DeliveryMode: amqp.Transient,
		MessageId: p.MessageId, CorrelationId: "c-1", Expiration: "60000", Priority: 3, Body: p.Body}
	if got := attemptOf(d); got != 1 {
		t.Fatalf("attempt of a first delivery %d, want 1", got)
	}
	r := retried(d, 2)
	if got := attemptOf(amqp.Delivery{Headers: r.Headers}); got != 2 {
		t.Errorf("attempt of the republish %d, want 2", got)
	}
	want := maps.Clone(p.Headers)
	want[contract.HeaderAttempt] = int64(2)
	if !maps.Equal(r.Headers, want) {
		t.Errorf("headers %v, want %v", r.Headers, want)
	}
	if d.Headers[contract.HeaderAttempt] != int64(1) {
		t.Errorf("the delivery's own headers changed: attempt %v", d.Headers[contract.HeaderAttempt])
	}
	if r.DeliveryMode != amqp.Persistent || r.Expiration != "" || r.MessageId != d.MessageId || r.CorrelationId != "c-1" ||
		r.Priority != 3 || r.ContentType != d.ContentType || string(r.Body) != string(d.Body) {
		t.Errorf("properties %+v", r)
	}
	if attemptOf(amqp.Delivery{}) != 1 {
		t.Error("a delivery without the header is not a first attempt")
	}
}
