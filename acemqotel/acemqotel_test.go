package acemqotel_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqotel"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/request"
	"github.com/acemq-go/acemq/transport"
)

// policy retries twice: first after a wait in the consumer (500ms), then
// on a rung (1s), so that the trace crosses both kinds of hop.
var policy = acemq.Exponential(3, 500*time.Millisecond, 0).WithJitter(0).WaitInBrokerFrom(time.Second)

// tracing is a tracer provider whose ended spans the test reads.
type tracing struct {
	t        *testing.T
	provider *sdktrace.TracerProvider
	recorder *tracetest.SpanRecorder
}

func newTracing(t *testing.T) tracing {
	r := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tracing{t: t, provider: tp, recorder: r}
}

func (tr tracing) observer() acemq.ConnOption {
	return acemq.WithObserver(tr.tracer())
}

// tracer is a Tracer on tr's provider, with opts besides.
func (tr tracing) tracer(opts ...acemqotel.Option) *acemqotel.Tracer {
	t, err := acemqotel.New(append([]acemqotel.Option{acemqotel.WithTracerProvider(tr.provider)}, opts...)...)
	if err != nil {
		tr.t.Fatal(err)
	}
	return t
}

// An option out of range is New's error, not a nil dereference later.
func TestOptionsOutOfRangeAreErrors(t *testing.T) {
	for _, opt := range []acemqotel.Option{acemqotel.WithTracerProvider(nil), acemqotel.WithPropagator(nil), nil} {
		if tracer, err := acemqotel.New(opt); err == nil || tracer != nil || !strings.HasPrefix(err.Error(), "acemqotel: ") {
			t.Errorf("New = %v, %v; want an error", tracer, err)
		}
	}
}

// ended waits until n spans have ended: a delivery's span ends just after
// the consumer counts its settlement.
func (tr tracing) ended(t *testing.T, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		spans := tr.recorder.Ended()
		if len(spans) >= n {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spans ended within 10s, not %d: %s", len(spans), n, names(spans))
		}
		time.Sleep(time.Millisecond)
	}
}

func names(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "[%s %s parent %s] ", s.SpanKind(), s.Name(), s.Parent().SpanID())
	}
	return b.String()
}

func attr(s sdktrace.ReadOnlySpan, key string) attribute.Value {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// wantAttrs fails t for each of want that s does not have.
func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got := attr(s, k).AsInterface(); got != v {
			t.Errorf("%s: %s = %v (%T), want %v (%T)", s.Name(), k, got, got, v, v)
		}
	}
}

// handler fails the first two attempts and accepts the third, each in a
// span of its own started from the handler's context.
func handler(tp trace.TracerProvider) acemq.Handler[string] {
	return func(ctx context.Context, m acemq.Message[string]) acemq.Decision {
		_, span := tp.Tracer("handler").Start(ctx, "handle")
		span.SetAttributes(attribute.Int("attempt", m.Envelope.Attempt))
		span.End()
		if m.Envelope.Attempt < 3 {
			return acemq.Retry(errors.New("not yet"))
		}
		return acemq.Accept()
	}
}

// retried publishes a message under a parent span to q, whose consumer (on
// conn, traced by tr) retries it in the consumer and then on a rung; settle
// lets the retries happen. It checks the trace: one trace, and a parent at
// every hop.
func retried(t *testing.T, tr tracing, conn *acemq.Conn, q string, settle func(*acemq.Consumer)) {
	ctx := context.Background()
	c, err := acemq.Consume(ctx, conn, q, handler(tr.provider), acemq.WithPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	pctx, parent := tr.provider.Tracer("test").Start(ctx, "parent")
	if err := acemqtest.NewPublisher[string](t, conn, "").Publish(pctx, q, "hello", acemq.WithMessageID("m-1")); err != nil {
		t.Fatal(err)
	}
	parent.End()
	settle(c)
	acemqtest.WaitFor(t, c, "the accept", func(s acemq.Stats) bool { return s.Accepted == 1 })

	// parent, publish, 3 × (process, handle), 2 republishes.
	spans := tr.ended(t, 10)
	if len(spans) != 10 {
		t.Fatalf("%d spans: %s", len(spans), names(spans))
	}
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	var root sdktrace.ReadOnlySpan
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
		children[s.Parent().SpanID()] = append(children[s.Parent().SpanID()], s)
		if s.Name() == "parent" {
			root = s
		}
		if s.SpanContext().TraceID() != parent.SpanContext().TraceID() {
			t.Errorf("%s is in trace %s, not the publisher's %s", s.Name(), s.SpanContext().TraceID(), parent.SpanContext().TraceID())
		}
	}
	// only returns the single child of s of the given kind.
	only := func(s sdktrace.ReadOnlySpan, kind trace.SpanKind) sdktrace.ReadOnlySpan {
		t.Helper()
		var found []sdktrace.ReadOnlySpan
		for _, c := range children[s.SpanContext().SpanID()] {
			if c.SpanKind() == kind {
				found = append(found, c)
			}
		}
		if len(found) != 1 {
			t.Fatalf("%s has %d children of kind %s: %s", s.Name(), len(found), kind, names(found))
		}
		return found[0]
	}

	publish := only(root, trace.SpanKindProducer)
	if publish.Name() != q+" publish" {
		t.Errorf("the publish span is named %q", publish.Name())
	}
	wantAttrs(t, publish, map[string]any{"messaging.system": "rabbitmq", "messaging.operation": "publish",
		"messaging.destination.name": q, "messaging.rabbitmq.destination.routing_key": q,
		"messaging.message.id": "m-1", "messaging.message.conversation_id": "m-1", "messaging.acemq.message_type": q,
		"messaging.acemq.republish": false, "messaging.acemq.outcome": "confirmed"})

	rung := contract.RungQueue(q, time.Second, contract.DefaultRungKind)
	hops := []struct {
		outcome string
		target  string  // republished to
		delay   float64 // seconds
	}{
		{"retried", q, 0.5},
		{"retried", rung, 1},
		{"acked", "", 0},
	}
	from := publish // the producer span each delivery came from
	for i, hop := range hops {
		attempt := int64(i + 1)
		process := only(from, trace.SpanKindConsumer)
		if process.Name() != q+" process" {
			t.Errorf("attempt %d: the delivery span is named %q", attempt, process.Name())
		}
		if links := process.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != from.SpanContext().SpanID() {
			t.Errorf("attempt %d: links %+v, want one to its producer span", attempt, links)
		}
		wantAttrs(t, process, map[string]any{"messaging.system": "rabbitmq", "messaging.operation": "process",
			"messaging.destination.name": q, "messaging.message.id": "m-1", "messaging.message.conversation_id": "m-1",
			"messaging.message.body.size": int64(len("hello")), "messaging.acemq.message_type": q,
			"messaging.acemq.attempt": attempt, "messaging.acemq.outcome": hop.outcome})
		// A retry is no error for the family: its outcome says what it is.
		if process.Status().Code != codes.Unset || attr(process, "error.type").Type() != attribute.EMPTY {
			t.Errorf("attempt %d: status %+v, error.type %v; want neither", attempt, process.Status(), attr(process, "error.type").AsInterface())
		}
		if h := only(process, trace.SpanKindInternal); h.Name() != "handle" || attr(h, "attempt").AsInt64() != attempt {
			t.Errorf("attempt %d: the handler's span is %s, attempt %d", attempt, h.Name(), attr(h, "attempt").AsInt64())
		}
		if hop.target == "" {
			if n := len(children[process.SpanContext().SpanID()]); n != 1 {
				t.Errorf("the accepted delivery has %d child spans, want the handler's only", n)
			}
			break
		}
		wantAttrs(t, process, map[string]any{"messaging.acemq.target": hop.target, "messaging.acemq.retry.attempt": attempt + 1,
			"messaging.acemq.retry.delay": hop.delay, "messaging.acemq.reason_class": "retry"})
		republish := only(process, trace.SpanKindProducer)
		if republish.Name() != hop.target+" publish" {
			t.Errorf("attempt %d: the republish span is named %q", attempt, republish.Name())
		}
		wantAttrs(t, republish, map[string]any{"messaging.acemq.republish": true, "messaging.acemq.republish.kind": "retry", "messaging.destination.name": hop.target,
			"messaging.rabbitmq.destination.routing_key": hop.target, "messaging.message.id": "m-1",
			"messaging.acemq.outcome": "confirmed"})
		if republish.Status().Code != codes.Unset {
			t.Errorf("attempt %d: the republish span's status is %+v", attempt, republish.Status())
		}
		from = republish
	}
}

// A message retried in the consumer and on a rung is one trace, with a
// parent link at every hop, on memory://.
func TestRetriedMessageIsOneTrace(t *testing.T) {
	tr := newTracing(t)
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t, tr.observer())
	declare(t, conn, "orders")
	retried(t, tr, conn, "orders", func(c *acemq.Consumer) {
		acemqtest.WaitFor(t, c, "the wait in the consumer", func(s acemq.Stats) bool { return s.Waiting == 1 })
		b.Advance(500 * time.Millisecond)
		acemqtest.WaitFor(t, c, "the retry on the rung", func(s acemq.Stats) bool { return s.RetriedOnRung == 1 })
		b.Advance(time.Second)
	})
}

// The same on RabbitMQ, with real waits.
func TestRetriedMessageIsOneTraceOnRabbitMQ(t *testing.T) {
	url := brokertest.URL(t)
	tr := newTracing(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := acemq.Connect(ctx, url, tr.observer())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	q := brokertest.UniqueName(t, "acemqotel")
	declare(t, conn, q)
	t.Cleanup(func() {
		ladder, _ := retry.NewLadder(q, policy, contract.DefaultRungKind)
		for _, name := range append([]string{q, contract.DeadLetterQueue(q), contract.ParkedQueue(q)}, ladder.Queues()...) {
			_, _ = conn.Transport().DeleteQueue(context.Background(), name)
		}
	})
	retried(t, tr, conn, q, func(*acemq.Consumer) {})
}

func declare(t *testing.T, conn *acemq.Conn, q string) {
	t.Helper()
	if err := conn.Transport().DeclareQueue(context.Background(), transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
}

// A message that comes without a trace context starts a trace of its own.
func TestUntracedMessageStartsATrace(t *testing.T) {
	tr := newTracing(t)
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t, tr.observer())
	declare(t, conn, "orders")
	ctx := context.Background()
	if err := acemqtest.NewPublisher[string](t, b.Connect(t), "").Publish(ctx, "orders", "hello"); err != nil {
		t.Fatal(err)
	}
	if m := b.Messages(t, "orders"); len(m) != 1 || m[0].Headers["traceparent"] != nil {
		t.Fatalf("the queue holds %+v", m)
	}
	c, err := acemq.Consume(ctx, conn, "orders", func(ctx context.Context, m acemq.Message[string]) acemq.Decision {
		_, span := tr.provider.Tracer("handler").Start(ctx, "handle")
		span.End()
		return acemq.Accept()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	spans := tr.ended(t, 2)
	var process, handle sdktrace.ReadOnlySpan
	for _, s := range spans {
		switch s.Name() {
		case "orders process":
			process = s
		case "handle":
			handle = s
		}
	}
	if process == nil || handle == nil {
		t.Fatalf("spans %s", names(spans))
	}
	if process.Parent().IsValid() || len(process.Links()) != 0 || process.SpanKind() != trace.SpanKindConsumer {
		t.Errorf("the delivery span has parent %v, links %v, kind %s; want a new root", process.Parent(), process.Links(), process.SpanKind())
	}
	wantAttrs(t, process, map[string]any{"messaging.acemq.outcome": "acked", "messaging.acemq.attempt": int64(1), "messaging.acemq.redelivered": false})
	if process.Status().Code != codes.Unset {
		t.Errorf("status %+v", process.Status())
	}
	if handle.Parent().SpanID() != process.SpanContext().SpanID() {
		t.Errorf("the handler's span is not the delivery span's child")
	}
}

// A publish the broker returns is an error span, and the message carries
// the span's context.
func TestUnroutablePublish(t *testing.T) {
	tr := newTracing(t)
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t, tr.observer())
	err := acemqtest.NewPublisher[string](t, conn, "").Publish(context.Background(), "nowhere", "hello")
	if !errors.Is(err, acemq.ErrUnroutable) {
		t.Fatalf("publish: %v", err)
	}
	spans := tr.ended(t, 1)
	s := spans[0]
	if s.Name() != "nowhere publish" || s.SpanKind() != trace.SpanKindProducer || s.Status().Code != codes.Error {
		t.Errorf("span %s, kind %s, status %+v", s.Name(), s.SpanKind(), s.Status())
	}
	wantAttrs(t, s, map[string]any{"error.type": "unroutable", "messaging.acemq.outcome": "unroutable", "messaging.acemq.republish": false})
	if len(s.Events()) != 1 || s.Events()[0].Name != "exception" {
		t.Errorf("events %+v, want the error recorded", s.Events())
	}
}

// PublishStart writes the trace context as string headers, into a table
// it makes when there is none, and never into a reserved header.
func TestPublishStartInjects(t *testing.T) {
	tr := newTracing(t)
	tracer := tr.tracer(
		acemqotel.WithPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, reserved{})))
	p := &acemq.PublishInfo{Exchange: "orders", RoutingKey: "order.new"}
	ctx := tracer.PublishStart(context.Background(), p)
	tracer.PublishEnd(ctx, p, acemq.PublishResult{Outcome: contract.PublishConfirmed})
	s := tr.ended(t, 1)[0]
	want := fmt.Sprintf("00-%s-%s-01", s.SpanContext().TraceID(), s.SpanContext().SpanID())
	if got := p.Headers["traceparent"]; got != want {
		t.Errorf("traceparent %#v, want %q", got, want)
	}
	if _, ok := p.Headers["X-AceMQ-Id"]; ok {
		t.Errorf("a propagator wrote X-AceMQ-Id")
	}
	if s.Name() != "orders publish" {
		t.Errorf("span %q", s.Name())
	}
	wantAttrs(t, s, map[string]any{"messaging.destination.name": "orders", "messaging.rabbitmq.destination.routing_key": "order.new"})
}

// reserved is a propagator that tries to write a header of the library's.
type reserved struct{}

func (reserved) Inject(_ context.Context, c propagation.TextMapCarrier) {
	c.Set("X-AceMQ-Id", "stolen")
}
func (reserved) Extract(ctx context.Context, _ propagation.TextMapCarrier) context.Context {
	return ctx
}
func (reserved) Fields() []string { return []string{"X-AceMQ-Id"} }

// messaging.destination.name is the span's destination, as its name says
// it: the exchange, else the routing key, else amq.default; the queue of a
// delivery.
func TestDestinationName(t *testing.T) {
	tr := newTracing(t)
	tracer := tr.tracer()
	for _, c := range []struct {
		exchange, key, queue, want string
	}{
		{"", "", "", "amq.default"},
		{"", "orders", "", "orders"},
		{"events", "", "", "events"},
		{"events", "order.new", "", "events"},
		{"", "orders", "orders", "orders"},
		{"events", "order.new", "orders", "orders"},
		{"events", "", "orders", "orders"},
	} {
		if c.queue == "" {
			p := &acemq.PublishInfo{Exchange: c.exchange, RoutingKey: c.key}
			tracer.PublishEnd(tracer.PublishStart(context.Background(), p), p, acemq.PublishResult{Outcome: contract.PublishConfirmed})
		} else {
			d := &acemq.DeliveryInfo{Queue: c.queue, Exchange: c.exchange, RoutingKey: c.key}
			tracer.DeliveryEnd(tracer.DeliveryStart(context.Background(), d), d, acemq.SettleResult{Outcome: contract.Accepted})
		}
		spans := tr.recorder.Ended()
		last := spans[len(spans)-1]
		if got := attr(last, "messaging.destination.name").AsString(); got != c.want || !strings.HasPrefix(last.Name(), c.want+" ") {
			t.Errorf("exchange %q, routing key %q, queue %q: %q in a span %q, want %q", c.exchange, c.key, c.queue, got, last.Name(), c.want)
		}
	}
}

// A request and its reply (package request) are one trace: the request's
// client span around the round trip, its publish under it, the
// responder's delivery under that, and the reply's publish under that. A
// request that fails is an error span; one that times out is not, its
// outcome says so.
func TestRequestReplyIsOneTrace(t *testing.T) {
	tr := newTracing(t)
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t, tr.observer())
	ctx := context.Background()
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "quotes", DeadLetter: true}, {Name: "idle"}}}
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	r, err := request.Serve(ctx, conn, "quotes", func(_ context.Context, m acemq.Message[string]) (string, error) {
		return "priced " + m.Body, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	c, err := request.NewClient(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if got, err := request.Do[string, string](ctx, c, "", "quotes", "sku-1", acemq.WithMessageType("quote")); err != nil || got != "priced sku-1" {
		t.Fatalf("reply %q, %v", got, err)
	}
	spans := tr.ended(t, 4)
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byName[s.Name()] = s
	}
	do, req, process, reply := byName["quotes request"], byName["quotes publish"], byName["quotes process"], byName[c.ReplyQueue()+" publish"]
	if do == nil || req == nil || process == nil || reply == nil {
		t.Fatalf("spans %s", names(spans))
	}
	if do.SpanKind() != trace.SpanKindClient || do.Parent().IsValid() || req.Parent().SpanID() != do.SpanContext().SpanID() ||
		process.Parent().SpanID() != req.SpanContext().SpanID() || reply.Parent().SpanID() != process.SpanContext().SpanID() {
		t.Errorf("spans %s: want the request, its publish under it, its delivery under that, the reply's publish under that", names(spans))
	}
	if do.SpanContext().TraceID() != reply.SpanContext().TraceID() {
		t.Errorf("the reply's trace %s is not the request's %s", reply.SpanContext().TraceID(), do.SpanContext().TraceID())
	}
	corr := attr(req, "messaging.message.conversation_id").AsString()
	wantAttrs(t, do, map[string]any{"messaging.system": "rabbitmq", "messaging.operation": "request",
		"messaging.destination.name": "quotes", "messaging.rabbitmq.destination.routing_key": "quotes",
		"messaging.message.conversation_id": corr, "messaging.acemq.message_type": "quote", "messaging.acemq.outcome": "answered"})
	if corr == "" || do.Status().Code != codes.Unset {
		t.Errorf("the request's correlation %q, status %+v", corr, do.Status())
	}

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := request.Do[string, string](short, c, "", "idle", "sku-2"); !errors.Is(err, acemq.ErrTimeout) {
		t.Fatalf("a request nobody answers: %v", err)
	}
	if _, err := request.Do[string, string](ctx, c, "", "nowhere", "sku-3"); !errors.Is(err, acemq.ErrUnroutable) {
		t.Fatalf("a request no queue takes: %v", err)
	}
	spans = tr.ended(t, 8)
	for _, s := range spans {
		switch s.Name() {
		case "idle request":
			wantAttrs(t, s, map[string]any{"messaging.acemq.outcome": "timed_out"})
			if s.Status().Code != codes.Unset {
				t.Errorf("the timed-out request's status is %+v, want unset", s.Status())
			}
		case "nowhere request":
			wantAttrs(t, s, map[string]any{"messaging.acemq.outcome": "failed", "error.type": "failed"})
			if s.Status().Code != codes.Error || len(s.Events()) != 1 {
				t.Errorf("the failed request's status is %+v, events %+v; want an error, recorded", s.Status(), s.Events())
			}
		}
	}
}

// Of the deliveries set aside, the dead-lettered one is an error, with its
// reason class as error.type; the parked one and the handler's rejection
// (the family's rejected, though it lands in Q.dlq too) are not (the
// family's rule: dead-lettered is an error).
func TestDeadLetteredIsAnError(t *testing.T) {
	tr := newTracing(t)
	tracer := tr.tracer()
	for _, c := range []struct {
		outcome contract.Outcome
		class   contract.ReasonClass
		family  string
		status  codes.Code
	}{
		{contract.DeadLettered, contract.ReasonExhausted, "dead_lettered", codes.Error},
		{contract.Parked, contract.ReasonUndecodable, "parked", codes.Unset},
		{contract.DeadLettered, contract.ReasonRejected, "rejected", codes.Unset},
		{contract.DeadLettered, contract.ReasonFatal, "rejected", codes.Unset},
		{contract.Requeued, contract.ReasonShutdown, "in_progress", codes.Unset},
		{contract.PutBack, contract.ReasonRequeue, "in_progress", codes.Unset},
	} {
		d := &acemq.DeliveryInfo{Queue: "orders"}
		tracer.DeliveryEnd(tracer.DeliveryStart(context.Background(), d), d, acemq.SettleResult{Outcome: c.outcome, ReasonClass: c.class, Reason: "why"})
		spans := tr.recorder.Ended()
		s := spans[len(spans)-1]
		wantAttrs(t, s, map[string]any{"messaging.acemq.outcome": c.family, "messaging.acemq.reason_class": string(c.class), "messaging.acemq.reason": "why"})
		if s.Status().Code != c.status {
			t.Errorf("%s (%s): status %+v, want %s", c.outcome, c.class, s.Status(), c.status)
		}
		if c.status == codes.Error && attr(s, "error.type").AsString() != string(c.class) {
			t.Errorf("%s: error.type %v, want %s", c.outcome, attr(s, "error.type").AsInterface(), c.class)
		}
	}
}

// A pipeline run's end is an event on the span of the delivery it ended
// at, with the pipeline, the step, the family's outcome and its duration.
func TestPipelineRunIsAnEventOfItsDelivery(t *testing.T) {
	tr := newTracing(t)
	tracer := tr.tracer()
	d := &acemq.DeliveryInfo{Queue: "orders.store"}
	ctx := tracer.DeliveryStart(context.Background(), d)
	tracer.PipelineRunEnd(ctx, acemq.PipelineRun{Pipeline: "orders", Step: "store", Outcome: contract.TelemetryCompleted, Duration: 1500 * time.Millisecond, MessageID: "m"})
	tracer.DeliveryEnd(ctx, d, acemq.SettleResult{Outcome: contract.Accepted})
	s := tr.ended(t, 1)[0]
	if len(s.Events()) != 1 || s.Events()[0].Name != "acemq.pipeline.run" {
		t.Fatalf("the delivery's span has the events %+v, want one acemq.pipeline.run", s.Events())
	}
	got := map[string]any{}
	for _, kv := range s.Events()[0].Attributes {
		got[string(kv.Key)] = kv.Value.AsInterface()
	}
	want := map[string]any{"messaging.acemq.pipeline": "orders", "messaging.acemq.pipeline.step": "store",
		"messaging.acemq.outcome": "completed", "messaging.acemq.pipeline.duration": 1.5}
	if !maps.Equal(got, want) {
		t.Errorf("the event's attributes are %v, want %v", got, want)
	}
}
