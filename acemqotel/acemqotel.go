// Package acemqotel traces AceMQ with OpenTelemetry: an acemq.Observer that
// makes a producer span for every publish and a consumer span for every
// delivery, and carries the trace from one to the other in the message's
// traceparent and tracestate headers (W3C trace context, CONTRACT.md section
// 6).
//
//	tracer := acemqotel.New(acemqotel.WithTracerProvider(tp))
//	conn, err := acemq.Connect(ctx, url, acemq.WithObserver(tracer))
//
// # Spans
//
// A publish, the application's or the library's own republish (a retry or
// a set-aside), is a span "publish D" of kind Producer, D being the
// exchange, or the queue for the default exchange. It is a child of the
// span in the publish's context and ends when the broker has answered; a
// publish the broker did not confirm has status Error, with error.type set
// to the contract.PublishOutcome and the error recorded.
//
// A delivery is a span "process Q" of kind Consumer, Q being the consumed
// queue. Its parent, and a link, is the context in the message's headers;
// without one it is a new root. Its context is the handler's, so spans the
// handler starts nest under it, and so are its republishes. It ends when the
// delivery is settled; a delivery that was not accepted has status Error,
// with error.type set to the contract.ReasonClass.
//
// Attributes follow the OpenTelemetry messaging conventions for RabbitMQ
// (messaging.system, messaging.operation.name and .type,
// messaging.destination.name, messaging.rabbitmq.destination.routing_key,
// messaging.message.id, messaging.message.body.size), plus acemq.* ones:
// acemq.message.type, acemq.republish (publishes); acemq.attempt,
// acemq.redelivered, acemq.outcome, acemq.reason_class, acemq.reason (why
// a message was set aside: per message, so fit for a span though never for
// a metric), acemq.target (the queue it was republished to),
// acemq.retry.attempt and acemq.retry.delay_ms (a retry's next attempt and
// its wait), acemq.handler.duration_ms (deliveries).
//
// # Retries
//
// A republish replaces the delivery's traceparent with its own span's
// context, so that the next delivery's span is the republish span's child:
// one trace, with a parent at every hop, from the first publish through
// every rung and consumer wait to the last delivery. See PublishStart.
//
// Event is not traced: what it reports is already on the spans.
package acemqotel

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// ScopeName is the instrumentation scope of the spans.
const ScopeName = "github.com/acemq-go/acemq/acemqotel"

const (
	attemptKey         = attribute.Key("acemq.attempt")
	redeliveredKey     = attribute.Key("acemq.redelivered")
	messageTypeKey     = attribute.Key("acemq.message.type")
	republishKey       = attribute.Key("acemq.republish")
	outcomeKey         = attribute.Key("acemq.outcome")
	reasonClassKey     = attribute.Key("acemq.reason_class")
	reasonKey          = attribute.Key("acemq.reason")
	targetKey          = attribute.Key("acemq.target")
	retryAttemptKey    = attribute.Key("acemq.retry.attempt")
	retryDelayKey      = attribute.Key("acemq.retry.delay_ms")
	handlerDurationKey = attribute.Key("acemq.handler.duration_ms")
)

// Tracer is an acemq.Observer that makes OpenTelemetry spans; set it on a
// Conn with acemq.WithObserver. It is safe for concurrent use.
type Tracer struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
}

var _ acemq.Observer = (*Tracer)(nil)

// Option configures a Tracer.
type Option func(*options)

type options struct {
	provider   trace.TracerProvider
	propagator propagation.TextMapPropagator
}

// WithTracerProvider makes the spans with tp instead of the global provider
// (otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.provider = tp }
}

// WithPropagator writes and reads the trace context in message headers with
// p instead of W3C trace context (propagation.TraceContext). Pass
// otel.GetTextMapPropagator() to use the global one.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(o *options) { o.propagator = p }
}

// New makes a Tracer. By default it uses the global tracer provider, and W3C
// trace context as propagator rather than the global one: the headers are
// part of the wire contract (traceparent and tracestate, read by the AceMQ
// libraries of other languages), so they must not depend on what a process
// has installed globally, and the global propagator, unless set, propagates
// nothing.
func New(opts ...Option) *Tracer {
	o := options{provider: otel.GetTracerProvider(), propagator: propagation.TraceContext{}}
	for _, opt := range opts {
		opt(&o)
	}
	return &Tracer{
		tracer:     o.provider.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		propagator: o.propagator,
	}
}

// spanKey finds a Tracer's own span in a context: the span in it may be
// another observer's, when several are combined.
type spanKey uint8

const (
	publishSpan spanKey = iota
	deliverySpan
)

func withSpan(ctx context.Context, k spanKey, span trace.Span) context.Context {
	return context.WithValue(ctx, k, span)
}

func spanOf(ctx context.Context, k spanKey) trace.Span {
	if s, ok := ctx.Value(k).(trace.Span); ok {
		return s
	}
	// Not started by this Tracer (it joined the Conn late, say): the span
	// in ctx is someone else's to end.
	return trace.SpanFromContext(context.Background())
}

// PublishStart starts the publish's span, a child of ctx's, and writes its
// context into p.Headers.
//
// A republish carries the delivery's headers, the delivery's trace context
// among them; it is replaced by the republish span's (whose trace is the
// same). W3C trace context asks as much of everything that forwards a
// message on, and it makes every hop, to a rung or back to the queue after
// a wait in the consumer, a parent link: publish, process, republish,
// process... Keeping the first producer's context instead would make every
// delivery of a retried message a sibling, losing which attempt led to
// which.
func (t *Tracer) PublishStart(ctx context.Context, p *acemq.PublishInfo) context.Context {
	attrs := []attribute.KeyValue{
		semconv.MessagingSystemRabbitMQ,
		semconv.MessagingOperationName("publish"),
		semconv.MessagingOperationTypeSend,
		semconv.MessagingDestinationName(destinationName(p.Exchange, p.RoutingKey, "")),
		republishKey.Bool(p.Republish),
	}
	attrs = appendMessage(attrs, p.RoutingKey, p.MessageID, p.Type)
	dest := p.Exchange
	if dest == "" {
		dest = p.RoutingKey
	}
	if dest == "" {
		dest = defaultExchange
	}
	ctx, span := t.tracer.Start(ctx, "publish "+dest, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
	if p.Headers == nil {
		p.Headers = transport.Table{}
	}
	if p.Republish && span.SpanContext().IsValid() {
		// Drop the delivery's context whole: what the propagator does not
		// write this time (an empty tracestate) must not linger beside it.
		// Without a valid span nothing is written, and the delivery's stays.
		for _, f := range t.propagator.Fields() {
			if !reserved(f) {
				delete(p.Headers, f)
			}
		}
	}
	t.propagator.Inject(ctx, headers(p.Headers))
	return withSpan(ctx, publishSpan, span)
}

// PublishEnd ends the publish's span, an error unless the broker confirmed
// the message.
func (t *Tracer) PublishEnd(ctx context.Context, _ *acemq.PublishInfo, r acemq.PublishResult) {
	span := spanOf(ctx, publishSpan)
	if r.Outcome != contract.PublishConfirmed {
		desc := string(r.Outcome)
		if r.Err != nil {
			span.RecordError(r.Err)
			desc = r.Err.Error()
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(string(r.Outcome)))
		span.SetStatus(codes.Error, desc)
	}
	span.End()
}

// DeliveryStart starts the delivery's span, whose parent is the trace
// context in its headers, and returns a context holding it.
func (t *Tracer) DeliveryStart(ctx context.Context, d *acemq.DeliveryInfo) context.Context {
	ctx = t.propagator.Extract(ctx, headers(d.Headers))
	attrs := []attribute.KeyValue{
		semconv.MessagingSystemRabbitMQ,
		semconv.MessagingOperationName("process"),
		semconv.MessagingOperationTypeProcess,
		semconv.MessagingDestinationName(destinationName(d.Exchange, d.RoutingKey, d.Queue)),
		semconv.MessagingMessageBodySize(d.BodySize),
		attemptKey.Int(d.Attempt),
		redeliveredKey.Bool(d.Redelivered),
	}
	attrs = appendMessage(attrs, d.RoutingKey, d.MessageID, d.Type)
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...)}
	// The messaging conventions require a link to the creation context;
	// making it the parent too is their option for a single message.
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && sc.IsRemote() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	ctx, span := t.tracer.Start(ctx, "process "+d.Queue, opts...)
	return withSpan(ctx, deliverySpan, span)
}

// DeliveryEnd ends the delivery's span with how it was settled, an error
// unless it was accepted.
func (t *Tracer) DeliveryEnd(ctx context.Context, _ *acemq.DeliveryInfo, s acemq.SettleResult) {
	span := spanOf(ctx, deliverySpan)
	attrs := []attribute.KeyValue{outcomeKey.String(string(s.Outcome))}
	if s.ReasonClass != contract.ReasonNone {
		attrs = append(attrs, reasonClassKey.String(string(s.ReasonClass)))
	}
	if s.Reason != "" {
		attrs = append(attrs, reasonKey.String(s.Reason))
	}
	if s.Target != "" {
		attrs = append(attrs, targetKey.String(s.Target))
	}
	if s.Outcome == contract.RetriedOnRung || s.Outcome == contract.RetriedInConsumer {
		attrs = append(attrs, retryAttemptKey.Int(s.Attempt), retryDelayKey.Int64(s.Delay.Milliseconds()))
	}
	if s.HandlerDuration > 0 {
		attrs = append(attrs, handlerDurationKey.Float64(float64(s.HandlerDuration.Microseconds())/1000))
	}
	if s.Outcome != contract.Accepted {
		class, desc := string(s.ReasonClass), s.Reason
		if class == "" {
			class = string(s.Outcome)
		}
		if desc == "" {
			desc = string(s.Outcome)
		}
		attrs = append(attrs, semconv.ErrorTypeKey.String(class))
		span.SetStatus(codes.Error, desc)
	}
	span.SetAttributes(attrs...)
	span.End()
}

// Event does nothing: events are not tied to a delivery's context, and what
// they report is on the spans already. A missing rung is a republish span
// with error.type unroutable followed by a wait in the consumer; a failed
// set-aside, a republish span in error and a delivery requeued with reason
// class republish_failed; a wait in the consumer, the length of its
// delivery's span.
func (t *Tracer) Event(acemq.Event) {}

// defaultExchange is how the RabbitMQ conventions name the default exchange
// when there is nothing else to name a destination by.
const defaultExchange = "amq.default"

// destinationName is messaging.destination.name as the RabbitMQ conventions
// build it: exchange, routing key and, for a consumer, queue, the empty ones
// left out and a queue named as its routing key once, joined by ":".
func destinationName(exchange, routingKey, queue string) string {
	if queue == routingKey {
		queue = ""
	}
	parts := make([]string, 0, 3)
	for _, p := range []string{exchange, routingKey, queue} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return defaultExchange
	}
	return strings.Join(parts, ":")
}

// appendMessage adds the attributes a publish and a delivery share, those
// of them that are set.
func appendMessage(attrs []attribute.KeyValue, routingKey, id, typ string) []attribute.KeyValue {
	if routingKey != "" {
		attrs = append(attrs, semconv.MessagingRabbitMQDestinationRoutingKey(routingKey))
	}
	if id != "" {
		attrs = append(attrs, semconv.MessagingMessageID(id))
	}
	if typ != "" {
		attrs = append(attrs, messageTypeKey.String(typ))
	}
	return attrs
}

// headers carries a trace context in message headers, as strings (CONTRACT.md
// section 6: values are written as strings and integers).
type headers transport.Table

// Get reads key, a string; other AMQP clients may send it as bytes.
func (h headers) Get(key string) string {
	switch v := h[key].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// Set writes key, unless it is reserved.
func (h headers) Set(key, value string) {
	if !reserved(key) {
		h[key] = value
	}
}

// reserved reports whether key is one of the library's own headers, which a
// propagator has no business writing (acemq.PublishInfo).
func reserved(key string) bool {
	n := len(contract.ReservedHeaderPrefix)
	return len(key) >= n && strings.EqualFold(key[:n], contract.ReservedHeaderPrefix)
}

// Keys lists every header.
func (h headers) Keys() []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	return keys
}
