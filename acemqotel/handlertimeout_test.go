package acemqotel_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
)

// A handler that hangs past its timeout: its delivery's span ends at the
// timeout, retried with reason class timeout, not an error; the handler's
// own span, ended when it returns at last, is still the delivery span's
// child, outlasting it: the trace shows the overrun.
func TestHandlerTimeoutEndsTheDeliverySpan(t *testing.T) {
	tr := newTracing(t)
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t, tr.observer())
	declare(t, conn, "orders")
	started, release := make(chan struct{}, 1), make(chan struct{})
	c, err := acemq.Consume(context.Background(), conn, "orders", func(ctx context.Context, _ acemq.Message[string]) acemq.Decision {
		_, span := tr.provider.Tracer("handler").Start(ctx, "handle")
		defer span.End()
		started <- struct{}{}
		<-release // ignores its context
		return acemq.Accept()
	}, acemq.WithPolicy(acemq.Fixed(2, time.Minute)), acemq.WithHandlerTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	if err := acemqtest.NewPublisher[string](t, conn, "").Publish(context.Background(), "orders", "hang"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("the handler did not start within 10s")
	}
	b.Advance(5 * time.Second)
	spans := tr.ended(t, 3) // the publish, the retry's republish, the delivery
	delivery := spans[2]
	if delivery.Name() != "orders process" {
		close(release)
		t.Fatalf("the spans ended are %s", names(spans))
	}
	wantAttrs(t, delivery, map[string]any{"messaging.acemq.outcome": "retried", "messaging.acemq.reason_class": "timeout",
		"messaging.acemq.retry.attempt": int64(2), "messaging.acemq.retry.delay": 60.0})
	if delivery.Status().Code != codes.Unset {
		t.Errorf("the delivery span's status is %+v, want unset: a retry is no error", delivery.Status())
	}

	close(release)
	handle := tr.ended(t, 4)[3]
	if handle.Name() != "handle" || handle.Parent().SpanID() != delivery.SpanContext().SpanID() || !handle.EndTime().After(delivery.EndTime()) {
		t.Errorf("the handler's span is %s, ended at %v; want the delivery's child, ended after it (%v)", handle.Name(), handle.EndTime(), delivery.EndTime())
	}
}
