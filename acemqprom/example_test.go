package acemqprom_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqprom"
)

// A service registers the metrics, has its Conn observed, and serves them
// on /metrics.
func Example() {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	metrics, err := acemqprom.New(reg)
	if err != nil {
		log.Fatal(err)
	}
	conn, err := acemq.Connect(ctx, "amqp://guest:guest@localhost:5672/", acemq.WithObserver(metrics))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	// Publishers and consumers of conn are observed from now on.
	consumer, err := acemq.Consume(ctx, conn, "orders", func(context.Context, acemq.Message[map[string]any]) acemq.Decision {
		return acemq.Accept()
	}, acemq.WithPolicy(acemq.Exponential(6, 10*time.Second, 5*time.Minute)))
	if err != nil {
		log.Fatal(err)
	}
	defer consumer.Close(ctx)

	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	log.Fatal(http.ListenAndServe(":9090", nil))
}
