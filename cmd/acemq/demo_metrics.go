package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqprom"
	"github.com/acemq-go/acemq/actuator"
	"github.com/acemq-go/acemq/contract"
)

// demoMetrics serves the demo's actuator (package actuator: its metrics,
// health and info, and the probes /livez and /readyz) over HTTP while it
// runs.
type demoMetrics struct {
	registry *prometheus.Registry
	observer acemq.Observer
	server   *actuator.Server
	stopped  context.CancelFunc
	served   chan error
}

// newDemoMetrics listens on addr and keeps the metrics of acemqprom; serve
// starts answering once the Conn exists.
func newDemoMetrics(addr string) (*demoMetrics, error) {
	reg := prometheus.NewRegistry()
	m, err := acemqprom.New(reg)
	if err != nil {
		return nil, err
	}
	s, err := actuator.Listen(addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	return &demoMetrics{registry: reg, observer: m, server: s}, nil
}

// URL is where the actuator listens, such as http://127.0.0.1:9464.
func (d *demoMetrics) URL() string { return d.server.URL() }

// serve answers the actuator's paths for conn until stop.
func (d *demoMetrics) serve(conn *acemq.Conn) error {
	h, err := actuator.New(conn, actuator.WithMetrics(promhttp.HandlerFor(d.registry, promhttp.HandlerOpts{})))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.stopped, d.served = cancel, make(chan error, 1)
	go func() { d.served <- d.server.Serve(ctx, h) }()
	return nil
}

// stop shuts the server down, or closes its listener when it never served.
func (d *demoMetrics) stop() {
	if d.stopped == nil {
		_ = d.server.Close()
		return
	}
	d.stopped()
	<-d.served
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
