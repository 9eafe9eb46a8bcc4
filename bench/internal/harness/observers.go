package harness

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqotel"
	"github.com/acemq-go/acemq/acemqprom"
)

// Observers are both telemetry adapters as a service would run them: the
// Prometheus metrics on a registry of their own, and the spans sampled
// (every one at ratio 1, else a ParentBased TraceIDRatioBased sampler's
// share of the traces) and handed to a batching processor, whose exporter
// drops them (exporting is the collector's cost, not the library's). stop
// shuts the tracing down.
func Observers(ratio float64) (o acemq.Observer, stop func(), err error) {
	metrics, err := acemqprom.New(prometheus.NewRegistry())
	if err != nil {
		return nil, nil, err
	}
	sampler := sdktrace.AlwaysSample()
	if ratio < 1 {
		sampler = sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithBatcher(discard{}))
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = tp.Shutdown(ctx)
	}
	tracer, err := acemqotel.New(acemqotel.WithTracerProvider(tp))
	if err != nil {
		stop()
		return nil, nil, err
	}
	return acemq.Observers(metrics, tracer), stop, nil
}

// discard is a span exporter that keeps nothing.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }
