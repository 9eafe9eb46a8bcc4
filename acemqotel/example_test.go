package acemqotel_test

import (
	"context"
	"log"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqotel"
)

// Trace every publish and delivery of a connection. The trace context
// travels in the messages' traceparent header, so a handler's spans join
// the publisher's trace, across every retry.
func Example() {
	ctx := context.Background()
	tp := sdktrace.NewTracerProvider( /* sdktrace.WithBatcher(an exporter), ... */ )
	defer tp.Shutdown(ctx)
	otel.SetTracerProvider(tp) // or acemqotel.WithTracerProvider(tp)

	tracer, err := acemqotel.New()
	if err != nil {
		log.Fatal(err)
	}
	conn, err := acemq.Connect(ctx, "amqp://guest:guest@localhost:5672/", acemq.WithObserver(tracer))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	// The publish is a child of the span in ctx, if any.
	orders, err := acemq.NewPublisher[string](conn, "")
	if err != nil {
		log.Fatal(err)
	}
	if err := orders.Publish(ctx, "orders", "hello"); err != nil {
		log.Fatal(err)
	}
	c, err := acemq.Consume(ctx, conn, "orders", func(ctx context.Context, m acemq.Message[string]) acemq.Decision {
		// ctx holds the delivery's span: start the handler's spans from it.
		_, span := otel.Tracer("orders").Start(ctx, "store order")
		defer span.End()
		return acemq.Accept()
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close(ctx)
}
