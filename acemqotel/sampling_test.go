package acemqotel_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqotel"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// A sampler decides when a span starts, by its name, its kind and the
// attributes the messaging conventions want at creation: the system, the
// destination, the operation. Each span of a destination starts with them,
// the first and the next (the Tracer keeps them by destination).
func TestSamplerSeesTheDestination(t *testing.T) {
	s := &seenBySampler{}
	tracer, err := acemqotel.New(acemqotel.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSampler(s))))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 2 {
		p := &acemq.PublishInfo{Exchange: "orders", RoutingKey: "order.new"}
		tracer.PublishEnd(tracer.PublishStart(ctx, p), p, acemq.PublishResult{Outcome: contract.PublishConfirmed})
		d := &acemq.DeliveryInfo{Queue: "billing", Headers: p.Headers}
		tracer.DeliveryEnd(tracer.DeliveryStart(ctx, d), d, acemq.SettleResult{Outcome: contract.Accepted})
		r := &acemq.RequestInfo{RoutingKey: "prices", CorrelationID: "c"}
		tracer.RequestEnd(tracer.RequestStart(ctx, r), r, acemq.RequestResult{Outcome: contract.TelemetryAnswered})
	}
	want := []string{
		"orders publish producer rabbitmq orders publish",
		"billing process consumer rabbitmq billing process",
		"prices request client rabbitmq prices request",
	}
	want = append(want, want...)
	if fmt.Sprint(s.seen) != fmt.Sprint(want) {
		t.Errorf("the sampler saw\n%q\nwant\n%q", s.seen, want)
	}
}

// seenBySampler keeps every span, noting its name, kind and the family's
// three sampling attributes as it starts.
type seenBySampler struct {
	mu   sync.Mutex
	seen []string
}

func (s *seenBySampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	a := map[attribute.Key]string{}
	for _, kv := range p.Attributes {
		a[kv.Key] = kv.Value.String()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, fmt.Sprintf("%s %s %s %s %s", p.Name, p.Kind,
		a[contract.AttrMessagingSystem], a[contract.AttrDestinationName], a[contract.AttrOperation]))
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
}

func (*seenBySampler) Description() string { return "seenBySampler" }

// A span the sampler dropped is only ended: nothing is built for it or
// written on it (a dropped span would throw it away), whatever the outcome.
// The trace context is still carried on, unsampled, so that the next
// process keeps the decision.
func TestDroppedSpansAreOnlyEnded(t *testing.T) {
	tp := &unrecorded{}
	tracer, err := acemqotel.New(acemqotel.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	boom := errors.New("boom")
	p := &acemq.PublishInfo{Exchange: "orders", RoutingKey: "order.new", Headers: transport.Table{}}
	tracer.PublishEnd(tracer.PublishStart(ctx, p), p, acemq.PublishResult{Outcome: contract.PublishFailed, Err: boom})
	if p.Headers["traceparent"] == nil {
		t.Errorf("no traceparent written for an unsampled publish: %v", p.Headers)
	}
	d := &acemq.DeliveryInfo{Queue: "orders", MessageID: "m", Headers: p.Headers}
	dctx := tracer.DeliveryStart(ctx, d)
	tracer.PipelineRunEnd(dctx, acemq.PipelineRun{Pipeline: "p", Step: "s", Outcome: contract.TelemetryCompleted})
	tracer.DeliveryEnd(dctx, d, acemq.SettleResult{Outcome: contract.DeadLettered, ReasonClass: contract.ReasonRejected, Reason: "no"})
	r := &acemq.RequestInfo{RoutingKey: "prices", CorrelationID: "c"}
	tracer.RequestEnd(tracer.RequestStart(ctx, r), r, acemq.RequestResult{Outcome: contract.TelemetryFailed, Err: boom})

	if tp.started != 3 || tp.ended != 3 || len(tp.written) > 0 {
		t.Errorf("%d spans started, %d ended, written on: %q; want 3, 3 and nothing", tp.started, tp.ended, tp.written)
	}
}

// unrecorded is a tracer provider whose every span is dropped by its
// sampler (not recording, its context valid and unsampled), counting what
// the Tracer does with them.
type unrecorded struct {
	noop.TracerProvider
	mu             sync.Mutex
	started, ended int
	written        []string
	nextID         byte
}

func (p *unrecorded) Tracer(string, ...trace.TracerOption) trace.Tracer {
	return unrecordedTracer{p: p}
}

func (p *unrecorded) note(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
}

type unrecordedTracer struct {
	noop.Tracer
	p *unrecorded
}

func (t unrecordedTracer) Start(ctx context.Context, _ string, _ ...trace.SpanStartOption) (context.Context, trace.Span) {
	var sc trace.SpanContext
	t.p.note(func() {
		t.p.started++
		t.p.nextID++
		sc = trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{t.p.nextID}})
	})
	s := unrecordedSpan{p: t.p, sc: sc}
	return trace.ContextWithSpan(ctx, s), s
}

type unrecordedSpan struct {
	noop.Span
	p  *unrecorded
	sc trace.SpanContext
}

func (s unrecordedSpan) SpanContext() trace.SpanContext { return s.sc }
func (s unrecordedSpan) IsRecording() bool              { return false }
func (s unrecordedSpan) End(...trace.SpanEndOption)     { s.p.note(func() { s.p.ended++ }) }

func (s unrecordedSpan) SetAttributes(kv ...attribute.KeyValue) {
	s.p.note(func() { s.p.written = append(s.p.written, fmt.Sprint("attributes ", kv)) })
}

func (s unrecordedSpan) SetStatus(c codes.Code, d string) {
	s.p.note(func() { s.p.written = append(s.p.written, fmt.Sprint("status ", c, d)) })
}

func (s unrecordedSpan) RecordError(err error, _ ...trace.EventOption) {
	s.p.note(func() { s.p.written = append(s.p.written, fmt.Sprint("error ", err)) })
}

func (s unrecordedSpan) AddEvent(name string, _ ...trace.EventOption) {
	s.p.note(func() { s.p.written = append(s.p.written, "event "+name) })
}

// Each destination's spans are named after it, past the number of
// destinations whose span starts are kept (1024) as before it.
func TestEveryDestinationNamesItsSpans(t *testing.T) {
	tr := newTracing(t)
	tracer := tr.tracer()
	const destinations = 1030
	for round := range 2 {
		for i := range destinations {
			p := &acemq.PublishInfo{RoutingKey: fmt.Sprint("q", i)}
			tracer.PublishEnd(tracer.PublishStart(context.Background(), p), p, acemq.PublishResult{Outcome: contract.PublishConfirmed})
			spans := tr.recorder.Ended()
			s := spans[len(spans)-1]
			if want := p.RoutingKey + " publish"; s.Name() != want || attr(s, contract.AttrDestinationName).AsString() != p.RoutingKey {
				t.Fatalf("round %d: span %q, destination %q; want %q", round, s.Name(), attr(s, contract.AttrDestinationName).AsString(), want)
			}
		}
	}
}
