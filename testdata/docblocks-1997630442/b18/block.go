package docblock

import "github.com/acemq-go/acemq"
import "github.com/acemq-go/acemq/acemqotel"
import "github.com/acemq-go/acemq/acemqprom"
import "github.com/acemq-go/acemq/actuator"
import "context"
import "log/slog"

//line /work/wt/pc/docs/observability.md:11
import "github.com/prometheus/client_golang/prometheus"
//line /work/wt/pc/docs/observability.md:12
import "github.com/prometheus/client_golang/prometheus/promhttp"
//line /work/wt/pc/docs/observability.md:13
import "go.opentelemetry.io/otel/trace"

//line /work/wt/pc/docs/observability.md:14
var tp trace.TracerProvider
//line /work/wt/pc/docs/observability.md:15
var url string


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/observability.md:19
reg := prometheus.NewRegistry()
//line /work/wt/pc/docs/observability.md:20
metrics, err := acemqprom.New(reg)
//line /work/wt/pc/docs/observability.md:21
tracer := acemqotel.New(acemqotel.WithTracerProvider(tp))
//line /work/wt/pc/docs/observability.md:22
conn, err := acemq.Connect(ctx, url,
//line /work/wt/pc/docs/observability.md:23
	acemq.WithObserver(acemq.Observers(metrics, tracer)),
//line /work/wt/pc/docs/observability.md:24
	acemq.WithLogger(slog.Default()))
//line /work/wt/pc/docs/observability.md:25

//line /work/wt/pc/docs/observability.md:26
h, err := actuator.New(conn, actuator.WithMetrics(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
//line /work/wt/pc/docs/observability.md:27
go actuator.ListenAndServe(ctx, "", h) // 127.0.0.1:9464, until ctx ends
_ = reg
_ = metrics
_ = err
_ = tracer
_ = conn
_ = err
_ = h
_ = err
return nil
}
