// Package acemqotel traces AceMQ with OpenTelemetry, by the span names and
// attributes the AceMQ family shares (CONTRACT.md section 17): an
// acemq.Observer (and an acemq.RequestObserver, for package request, and an
// acemq.PipelineObserver, for package pipeline) that
// makes a producer span for every publish, a consumer span for every
// delivery and a client span for every request, and carries the trace from
// one to the other in the message's traceparent and tracestate headers (W3C
// trace context, section 6).
//
//	tracer, err := acemqotel.New(acemqotel.WithTracerProvider(tp))
//	conn, err := acemq.Connect(ctx, url, acemq.WithObserver(tracer))
//
// # Spans
//
// A publish, the application's or the library's own republish (a retry, a
// set-aside, a put-back, a replay, the scheduler's hops and deliveries), is
// a span "D publish" of kind Producer, D being the
// exchange, or the routing key (the queue) on the default exchange. It is
// a child of the span in the publish's context and ends when the broker has
// answered.
//
// A delivery is a span "Q process" of kind Consumer, Q being the consumed
// queue. Its parent, and a link, is the context in the message's headers;
// without one it is a new root. Its context is the handler's, so spans the
// handler starts nest under it, and so are its republishes. It ends when the
// delivery is settled.
//
// A request (request.Do) is a span "D request" of kind Client, around the
// whole round trip: its publish is its child, and so the responder's
// delivery and its reply's publish are in its trace.
//
// # Attributes
//
// The family's: messaging.system (rabbitmq), messaging.destination.name (D
// or Q, as in the span's name), messaging.operation (publish, process,
// request), messaging.message.id, messaging.message.conversation_id (the
// x-acemq-correlation; a request's correlation id),
// messaging.rabbitmq.destination.routing_key, messaging.acemq.message_type,
// messaging.acemq.attempt (deliveries) and messaging.acemq.outcome, the
// family's word for how it ended (contract.TelemetryOutcome: confirmed,
// unroutable, failed; acked, retried, rejected, dead_lettered, parked,
// in_progress; answered, timed_out). Where Java and the Go peer name one
// differently (the routing key, the message type) these are the Go peer's
// (docs/contract.md says why).
//
// This library's own, in the same namespace: messaging.acemq.republish
// and messaging.acemq.republish.kind (publishes: contract.RepublishKind), messaging.acemq.redelivered, messaging.acemq.reason_class,
// messaging.acemq.reason (why a message was set aside: per message, so fit
// for a span though never for a metric), messaging.acemq.target (the queue
// it was republished to), messaging.acemq.retry.attempt and
// messaging.acemq.retry.delay (a retry's next attempt and its wait, in
// seconds), messaging.acemq.handler.duration (in seconds), and
// OpenTelemetry's messaging.message.body.size (deliveries).
//
// A sampler decides by a span's name, its kind and the attributes it starts
// with: messaging.system, messaging.destination.name and
// messaging.operation, those the messaging conventions want at a span's
// creation, built once per destination. The message's own attributes, and
// the outcome, are added when the span ends, and only to a span that
// records: a span the sampler dropped is only started and ended, its trace
// context carried on (unsampled) all the same.
//
// The status is Error where the family has it: a publish unroutable or
// failed (error.type the contract.PublishOutcome, the error recorded), a
// delivery dead-lettered (error.type its contract.ReasonClass), a request
// failed (error.type failed, the error recorded). A retried, parked,
// rejected (by its handler: in Q.dlq, but the handler's decision) or
// in-progress delivery and a timed-out request are not errors:
// messaging.acemq.outcome says what they are.
//
// # Pipeline runs
//
// A pipeline run's end (acemq.PipelineObserver) is an event
// acemq.pipeline.run on the span of the delivery it ended at, with
// messaging.acemq.pipeline, messaging.acemq.pipeline.step,
// messaging.acemq.outcome (completed, ended_early) and
// messaging.acemq.pipeline.duration (seconds). The Tracer makes spans only:
// the family's metrics, the pipeline runs' among them, are package
// acemqprom's.
//
// # Retries
//
// A republish replaces the delivery's traceparent with its own span's
// context, so that the next delivery's span is the republish span's child:
// one trace, with a parent at every hop, from the first publish through
// every rung and consumer wait to the last delivery. See PublishStart.
//
// # Consumer control
//
// A consumer's pause, resume and rescale (acemq.Consumer.Pause, Resume,
// Rescale, by an operator or a circuit breaker) are each a span "Q pause",
// "Q resume", "Q rescale" of kind Internal, the root of a trace of its
// own, with messaging.destination.name, messaging.acemq.consumer (its id),
// and messaging.acemq.pause.cause (operator, circuit breaker) or
// messaging.acemq.concurrency and messaging.acemq.prefetch.
//
// # Circuit breakers
//
// A consumer's circuit breaker's transition (acemq.WithCircuitBreaker) is a
// span "Q circuit_breaker" of kind Internal, the root of a trace of its
// own, with messaging.destination.name, messaging.acemq.consumer,
// messaging.acemq.circuit_breaker.state
// (open, half-open, closed) and messaging.acemq.reason ("10 failures in a
// row"). The messages it puts back while open are delivery spans with
// reason class circuit_open.
//
// The other events are not traced: what they report is already on the spans.
package acemqotel

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/option"
	"github.com/acemq-go/acemq/transport"
)

// ScopeName is the instrumentation scope of the spans.
const ScopeName = "github.com/acemq-go/acemq/acemqotel"

// The attributes' keys: the family's and this library's (package contract).
const (
	destinationKey     = attribute.Key(contract.AttrDestinationName)
	operationKey       = attribute.Key(contract.AttrOperation)
	messageIDKey       = attribute.Key(contract.AttrMessageID)
	conversationKey    = attribute.Key(contract.AttrConversationID)
	routingKeyKey      = attribute.Key(contract.AttrRoutingKey)
	outcomeKey         = attribute.Key(contract.AttrOutcome)
	attemptKey         = attribute.Key(contract.AttrAttempt)
	messageTypeKey     = attribute.Key(contract.AttrMessageType)
	redeliveredKey     = attribute.Key(contract.AttrRedelivered)
	republishKey       = attribute.Key(contract.AttrRepublish)
	reasonClassKey     = attribute.Key(contract.AttrReasonClass)
	reasonKey          = attribute.Key(contract.AttrReason)
	targetKey          = attribute.Key(contract.AttrTarget)
	retryAttemptKey    = attribute.Key(contract.AttrRetryAttempt)
	retryDelayKey      = attribute.Key(contract.AttrRetryDelay)
	handlerDurationKey = attribute.Key(contract.AttrHandlerDuration)
	republishKindKey   = attribute.Key(contract.AttrRepublishKind)
	pipelineKey        = attribute.Key(contract.AttrPipeline)
	pipelineStepKey    = attribute.Key(contract.AttrPipelineStep)
	pipelineTookKey    = attribute.Key(contract.AttrPipelineDuration)
	breakerStateKey    = attribute.Key(contract.AttrCircuitBreakerState)
)

// Tracer is an acemq.Observer that makes OpenTelemetry spans; set it on a
// Conn with acemq.WithObserver. It is safe for concurrent use.
type Tracer struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	// fields are the propagator's headers, which a republish replaces.
	fields []string
	// How spans start, by destination (start.go).
	publishes, deliveries, requests *starts
}

var (
	_ acemq.Observer         = (*Tracer)(nil)
	_ acemq.RequestObserver  = (*Tracer)(nil)
	_ acemq.PipelineObserver = (*Tracer)(nil)
)

// Option configures a Tracer; one whose value is out of range is New's
// error.
type Option func(*options) error

type options struct {
	provider   trace.TracerProvider
	propagator propagation.TextMapPropagator
}

// WithTracerProvider makes the spans with tp instead of the global provider
// (otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) error {
		if tp == nil {
			return errors.New("WithTracerProvider: the provider is nil")
		}
		o.provider = tp
		return nil
	}
}

// WithPropagator writes and reads the trace context in message headers with
// p instead of W3C trace context (propagation.TraceContext). Pass
// otel.GetTextMapPropagator() to use the global one.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(o *options) error {
		if p == nil {
			return errors.New("WithPropagator: the propagator is nil")
		}
		o.propagator = p
		return nil
	}
}

// New makes a Tracer. By default it uses the global tracer provider, and W3C
// trace context as propagator rather than the global one: the headers are
// part of the wire contract (traceparent and tracestate, read by the AceMQ
// libraries of other languages), so they must not depend on what a process
// has installed globally, and the global propagator, unless set, propagates
// nothing. It fails only on an option out of range.
func New(opts ...Option) (*Tracer, error) {
	o := options{provider: otel.GetTracerProvider(), propagator: propagation.TraceContext{}}
	if err := option.ApplyFuncs(&o, opts); err != nil {
		return nil, fmt.Errorf("acemqotel: %w", err)
	}
	return &Tracer{
		tracer:     o.provider.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		propagator: o.propagator,
		fields:     o.propagator.Fields(),
		publishes:  newStarts(trace.SpanKindProducer, contract.SpanPublish),
		deliveries: newStarts(trace.SpanKindConsumer, contract.SpanProcess),
		requests:   newStarts(trace.SpanKindClient, contract.SpanRequest),
	}, nil
}

// spanKey finds a Tracer's own span in a context: the span in it may be
// another observer's, when several are combined.
type spanKey uint8

const (
	publishSpan spanKey = iota
	deliverySpan
	requestSpan
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
	start := t.publishes.get(destination(p.Exchange, p.RoutingKey))
	ctx, span := t.tracer.Start(ctx, start.name, start.opts...)
	if p.Headers == nil {
		p.Headers = transport.Table{}
	}
	if p.Republish && span.SpanContext().IsValid() {
		// Drop the delivery's context whole: what the propagator does not
		// write this time (an empty tracestate) must not linger beside it.
		// Without a valid span nothing is written, and the delivery's stays.
		for _, f := range t.fields {
			if !reserved(f) {
				delete(p.Headers, f)
			}
		}
	}
	t.propagator.Inject(ctx, headers(p.Headers))
	return withSpan(ctx, publishSpan, span)
}

// PublishEnd ends the publish's span with the family's outcome, an error
// when the broker did not take the message (unroutable, failed).
func (t *Tracer) PublishEnd(ctx context.Context, p *acemq.PublishInfo, r acemq.PublishResult) {
	span := spanOf(ctx, publishSpan)
	defer span.End()
	if !span.IsRecording() {
		return // dropped by the sampler: nothing to add
	}
	buf, attrs := attrsFor()
	attrs = append(attrs, republishKey.Bool(p.Republish))
	if p.Republish {
		attrs = append(attrs, republishKindKey.String(string(p.RepublishKind)))
	}
	attrs = appendMessage(attrs, p.RoutingKey, p.MessageID, p.Correlation, p.Type)
	outcome := r.Outcome.Telemetry()
	attrs = append(attrs, outcomeKey.String(string(outcome)))
	if outcome != contract.TelemetryConfirmed {
		desc := string(r.Outcome)
		if r.Err != nil {
			span.RecordError(r.Err)
			desc = r.Err.Error()
		}
		attrs = append(attrs, semconv.ErrorTypeKey.String(string(r.Outcome)))
		span.SetStatus(codes.Error, desc)
	}
	setAttributes(span, buf, attrs)
}

// DeliveryStart starts the delivery's span, whose parent is the trace
// context in its headers, and returns a context holding it.
func (t *Tracer) DeliveryStart(ctx context.Context, d *acemq.DeliveryInfo) context.Context {
	ctx = t.propagator.Extract(ctx, headers(d.Headers))
	start := t.deliveries.get(d.Queue)
	opts := start.opts
	// The messaging conventions require a link to the creation context;
	// making it the parent too is their option for a single message.
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && sc.IsRemote() {
		opts = append(opts[:len(opts):len(opts)], trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	ctx, span := t.tracer.Start(ctx, start.name, opts...)
	return withSpan(ctx, deliverySpan, span)
}

// DeliveryEnd ends the delivery's span with how it was settled, in the
// family's word, an error when it was dead-lettered.
func (t *Tracer) DeliveryEnd(ctx context.Context, d *acemq.DeliveryInfo, s acemq.SettleResult) {
	span := spanOf(ctx, deliverySpan)
	defer span.End()
	if !span.IsRecording() {
		return // dropped by the sampler: nothing to add
	}
	buf, attrs := attrsFor()
	attrs = append(attrs,
		semconv.MessagingMessageBodySize(d.BodySize),
		attemptKey.Int(d.Attempt),
		redeliveredKey.Bool(d.Redelivered),
	)
	attrs = appendMessage(attrs, d.RoutingKey, d.MessageID, d.Correlation, d.Type)
	outcome := s.Outcome.Telemetry(s.ReasonClass)
	attrs = append(attrs, outcomeKey.String(string(outcome)))
	if s.ReasonClass != contract.ReasonNone {
		attrs = append(attrs, reasonClassKey.String(string(s.ReasonClass)))
	}
	if s.Reason != "" {
		attrs = append(attrs, reasonKey.String(s.Reason))
	}
	if s.Target != "" {
		attrs = append(attrs, targetKey.String(s.Target))
	}
	if outcome == contract.TelemetryRetried {
		attrs = append(attrs, retryAttemptKey.Int(s.Attempt), retryDelayKey.Float64(s.Delay.Seconds()))
	}
	if s.HandlerDuration > 0 {
		attrs = append(attrs, handlerDurationKey.Float64(s.HandlerDuration.Seconds()))
	}
	if outcome == contract.TelemetryDeadLettered {
		desc := s.Reason
		if desc == "" {
			desc = string(s.Outcome)
		}
		attrs = append(attrs, semconv.ErrorTypeKey.String(string(s.ReasonClass)))
		span.SetStatus(codes.Error, desc)
	}
	setAttributes(span, buf, attrs)
}

// RequestStart starts the request's span, a child of ctx's; the request's
// publish is made in the context it returns, and so is the span's child.
func (t *Tracer) RequestStart(ctx context.Context, r *acemq.RequestInfo) context.Context {
	start := t.requests.get(destination(r.Exchange, r.RoutingKey))
	ctx, span := t.tracer.Start(ctx, start.name, start.opts...)
	return withSpan(ctx, requestSpan, span)
}

// RequestEnd ends the request's span with its outcome, an error when it
// failed.
func (t *Tracer) RequestEnd(ctx context.Context, r *acemq.RequestInfo, res acemq.RequestResult) {
	span := spanOf(ctx, requestSpan)
	defer span.End()
	if !span.IsRecording() {
		return // dropped by the sampler: nothing to add
	}
	buf, attrs := attrsFor()
	attrs = appendMessage(attrs, r.RoutingKey, "", r.CorrelationID, r.Type)
	attrs = append(attrs, outcomeKey.String(string(res.Outcome)))
	if res.Outcome == contract.TelemetryFailed {
		desc := string(res.Outcome)
		if res.Err != nil {
			span.RecordError(res.Err)
			desc = res.Err.Error()
		}
		attrs = append(attrs, semconv.ErrorTypeKey.String(string(res.Outcome)))
		span.SetStatus(codes.Error, desc)
	}
	setAttributes(span, buf, attrs)
}

// PipelineRunEnd adds an event acemq.pipeline.run to the span of the
// delivery the run ended at (ctx is its handler's), with the pipeline, the
// step, the family's outcome (completed, ended_early) and the run's
// duration in seconds: a span per run would have no start in this process
// when the run began in another.
func (t *Tracer) PipelineRunEnd(ctx context.Context, r acemq.PipelineRun) {
	span := spanOf(ctx, deliverySpan)
	if !span.IsRecording() {
		return
	}
	span.AddEvent(contract.EventPipelineRun, trace.WithAttributes(
		pipelineKey.String(r.Pipeline), pipelineStepKey.String(r.Step),
		outcomeKey.String(string(r.Outcome)), pipelineTookKey.Float64(r.Duration.Seconds())))
}

// Event makes a span of a consumer's pause, resume or rescale (control.go)
// and of a circuit breaker's transition (breaker.go), and nothing of the
// other events: they are not tied to a delivery's
// context, and what they report is on the spans already. A missing rung is
// a republish span with error.type unroutable followed by a wait in the
// consumer; a failed set-aside, a republish span in error and a delivery
// requeued with reason class republish_failed; a wait in the consumer, the
// length of its delivery's span; a handler's timeout
// (acemq.WithHandlerTimeout), a delivery span ended at the timeout, retried
// with reason class timeout, which the handler's own spans outlast when it
// returns later (the overrun: acemqprom counts it).
func (t *Tracer) Event(e acemq.Event) {
	t.controlSpan(e)
	t.breakerSpan(e)
}

// defaultExchange names the destination of a publish to the default
// exchange without a routing key, as the RabbitMQ conventions of
// OpenTelemetry name the default exchange.
const defaultExchange = "amq.default"

// destination is what a publish or a request goes to, for its span's name
// and messaging.destination.name: the exchange, else (the default
// exchange) the routing key, which names the queue.
func destination(exchange, routingKey string) string {
	switch {
	case exchange != "":
		return exchange
	case routingKey != "":
		return routingKey
	}
	return defaultExchange
}

// appendMessage adds the attributes publishes, deliveries and requests
// share, those of them that are set.
func appendMessage(attrs []attribute.KeyValue, routingKey, id, correlation, typ string) []attribute.KeyValue {
	if routingKey != "" {
		attrs = append(attrs, routingKeyKey.String(routingKey))
	}
	if id != "" {
		attrs = append(attrs, messageIDKey.String(id))
	}
	if correlation != "" {
		attrs = append(attrs, conversationKey.String(correlation))
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
