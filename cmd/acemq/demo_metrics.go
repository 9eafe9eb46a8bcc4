package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqprom"
	"github.com/acemq-go/acemq/contract"
)

// demoMetrics serves the demo's metrics and health over HTTP while it runs.
type demoMetrics struct {
	registry *prometheus.Registry
	observer acemq.Observer
	server   *http.Server
	listener net.Listener
}

// newDemoMetrics listens on addr and keeps the metrics of acemqprom; serve
// starts answering once the Conn exists.
func newDemoMetrics(addr string) (*demoMetrics, error) {
	reg := prometheus.NewRegistry()
	m, err := acemqprom.New(reg)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	return &demoMetrics{registry: reg, observer: m, listener: l}, nil
}

// URL is where the metrics are served.
func (d *demoMetrics) URL() string { return "http://" + d.listener.Addr().String() + "/metrics" }

// serve answers /metrics, /livez and /readyz for conn until stop.
func (d *demoMetrics) serve(conn *acemq.Conn) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(d.registry, promhttp.HandlerOpts{}))
	mux.Handle("/livez", conn.LivenessHandler())
	mux.Handle("/readyz", conn.ReadinessHandler(2*time.Second))
	d.server = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = d.server.Serve(d.listener) }()
}

// stop closes the server, or the listener when it never served.
func (d *demoMetrics) stop() {
	if d.server == nil {
		_ = d.listener.Close()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = d.server.Shutdown(ctx)
}

// write prints the metrics named (contract.Metric names), as a scrape
// shows them.
func (d *demoMetrics) write(w io.Writer, metrics ...string) error {
	families, err := d.registry.Gather()
	if err != nil {
		return err
	}
	var names []string
	for _, m := range contract.Metrics() {
		if slices.Contains(metrics, m.Name) {
			names = append(names, m.Prometheus())
		}
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if slices.Contains(names, f.GetName()) {
			if err := enc.Encode(f); err != nil {
				return err
			}
		}
	}
	if c, ok := enc.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
