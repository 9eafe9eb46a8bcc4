package acemqotel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// The attributes of the control spans.
const (
	consumerKey    = attribute.Key(contract.AttrConsumer)
	pauseCauseKey  = attribute.Key(contract.AttrPauseCause)
	concurrencyKey = attribute.Key(contract.AttrConcurrency)
	prefetchKey    = attribute.Key(contract.AttrPrefetch)
)

// controlSpans name the span of each control event after its queue:
// "Q pause", "Q resume", "Q rescale".
var controlSpans = map[acemq.EventKind]string{
	acemq.EventConsumerPaused:   "pause",
	acemq.EventConsumerResumed:  "resume",
	acemq.EventConsumerRescaled: "rescale",
}

// controlSpan records a consumer's pause, resume or rescale as a span of
// its own, kind Internal, the root of a trace: an operator's or a
// breaker's act, tied to no message, that a trace backend shows beside
// the deliveries it stopped or let through.
func (t *Tracer) controlSpan(e acemq.Event) {
	op, ok := controlSpans[e.Kind]
	if !ok {
		return
	}
	attrs := []attribute.KeyValue{semconv.MessagingSystemRabbitMQ, destinationKey.String(e.Queue), consumerKey.String(e.Consumer)}
	if e.Kind == acemq.EventConsumerRescaled {
		attrs = append(attrs, concurrencyKey.Int(e.Scale.Concurrency), prefetchKey.Int(e.Scale.Prefetch))
	} else {
		attrs = append(attrs, pauseCauseKey.String(e.Reason))
	}
	_, span := t.tracer.Start(context.Background(), e.Queue+" "+op,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithNewRoot(), trace.WithAttributes(attrs...))
	span.End()
}
