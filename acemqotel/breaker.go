package acemqotel

import (
	"context"

	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// breakerSpan makes a span of a circuit breaker's transition: "Q
// circuit_breaker", internal, the root of a trace of its own, with the
// state entered and why.
func (t *Tracer) breakerSpan(e acemq.Event) {
	if e.Kind != acemq.EventBreakerChanged {
		return
	}
	_, span := t.tracer.Start(context.Background(), e.Queue+" "+contract.SpanCircuitBreaker,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithNewRoot(), trace.WithAttributes(semconv.MessagingSystemRabbitMQ,
			destinationKey.String(e.Queue), consumerKey.String(e.Consumer), breakerStateKey.String(string(e.Breaker)), reasonKey.String(e.Reason)))
	span.End()
}
