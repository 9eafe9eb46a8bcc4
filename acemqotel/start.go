package acemqotel

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/acemq-go/acemq/internal/kept"
)

// spanStart is how every span of one operation on one destination starts:
// its name ("D publish"), its kind, and the attributes a sampler decides by
// (those the messaging conventions want at creation: the system, the
// destination, the operation). Built once per destination and kept, so that
// starting a span, sampled or not, builds none of them again.
type spanStart struct {
	name string
	opts []trace.SpanStartOption
}

// maxStarts bounds each operation's spanStarts. Destinations are exchanges
// and queues, a bounded set, but a service replying to many short-lived
// reply queues would name a new one again and again: past the bound a
// spanStart is built for its span alone.
const maxStarts = 1024

// starts are the spanStarts of one operation, by destination, kept
// (internal/kept): a span's start reads them without a lock.
type starts struct {
	kind trace.SpanKind
	op   string
	m    kept.Map[string, *spanStart]
}

func newStarts(kind trace.SpanKind, op string) *starts {
	s := &starts{kind: kind, op: op}
	s.m.Limit = maxStarts
	return s
}

// get is the spanStart of dest, made and kept the first time.
func (s *starts) get(dest string) *spanStart {
	return s.m.Get(dest, func(dest string) *spanStart {
		return &spanStart{name: dest + " " + s.op, opts: []trace.SpanStartOption{
			trace.WithSpanKind(s.kind),
			trace.WithAttributes(
				semconv.MessagingSystemRabbitMQ, // contract.AttrMessagingSystem
				destinationKey.String(dest),
				operationKey.String(s.op),
			),
		}}
	})
}

// attrPool holds the slices a span's per-message attributes are gathered
// in: the span copies what SetAttributes gives it, so one slice serves span
// after span, and a span's end allocates none.
var attrPool = sync.Pool{New: func() any {
	s := make([]attribute.KeyValue, 0, 16)
	return &s
}}

// setAttributes sets attrs on span, then hands the slice back to the pool
// it came from (buf, from attrPool), emptied so that it keeps no string
// alive.
func setAttributes(span trace.Span, buf *[]attribute.KeyValue, attrs []attribute.KeyValue) {
	span.SetAttributes(attrs...)
	clear(attrs)
	*buf = attrs[:0]
	attrPool.Put(buf)
}

// attrsFor is a slice from attrPool to gather attributes in, and the pool's
// handle on it for setAttributes.
func attrsFor() (*[]attribute.KeyValue, []attribute.KeyValue) {
	buf := attrPool.Get().(*[]attribute.KeyValue)
	return buf, (*buf)[:0]
}
