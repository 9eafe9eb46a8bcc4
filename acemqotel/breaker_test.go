package acemqotel_test

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// A breaker's transition is a span of its own, with its state and reason;
// other events make none.
func TestCircuitBreakerTransitionIsASpan(t *testing.T) {
	tr := newTracing(t)
	tracer := tr.tracer()
	tracer.Event(acemq.Event{Kind: acemq.EventConsumerStarted, Queue: "payments"})
	tracer.Event(acemq.Event{Kind: acemq.EventBreakerChanged, Queue: "payments", Consumer: "payments-worker", Breaker: acemq.BreakerOpen, Reason: "10 failures in a row"})
	spans := tr.recorder.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Name() != "payments circuit_breaker" || s.SpanKind() != trace.SpanKindInternal {
		t.Errorf("span %q kind %v", s.Name(), s.SpanKind())
	}
	want := map[attribute.Key]string{contract.AttrDestinationName: "payments", contract.AttrCircuitBreakerState: "open", contract.AttrConsumer: "payments-worker",
		contract.AttrReason: "10 failures in a row"}
	for _, a := range s.Attributes() {
		if w, ok := want[a.Key]; ok && a.Value.AsString() == w {
			delete(want, a.Key)
		}
	}
	if len(want) != 0 {
		t.Errorf("attributes %v lack %v", s.Attributes(), want)
	}
}
