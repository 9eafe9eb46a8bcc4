// Package actuator is the HTTP surface a fleet scrapes and probes (CONTRACT.md
// section 17): one http.Handler serving
//
//	/acemq-metrics  the metrics handler given (Prometheus text), when one is
//	/acemq-health   the health as JSON: 200 up or degraded, 503 down
//	/acemq-info     the library, its version, the transport, the capabilities
//	/livez          Conn.LivenessHandler
//	/readyz         Conn.ReadinessHandler
//
// to GET and HEAD only (405 with Allow otherwise); the consumer control
// (section 21 of the family's contract: consumers addressable by an id)
//
//	GET  /acemq-consumers              every consumer's status
//	GET  /acemq-consumers/{id}         one consumer's
//	POST /acemq-consumers/{id}/pause   stop taking deliveries
//	POST /acemq-consumers/{id}/resume  take them again
//	POST /acemq-consumers/{id}/scale   {"concurrency":8,"prefetch":40}
//
// each answering with the consumer's status, and let in only from this
// machine or with the control token (WithControlToken), never from
// another site's page; and a Server that
// listens on loopback, port 9464, unless told otherwise:
//
//	reg := prometheus.NewRegistry()
//	metrics, err := acemqprom.New(reg)
//	conn, err := acemq.Connect(ctx, url, acemq.WithObserver(metrics))
//	h, err := actuator.New(conn, actuator.WithMetrics(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
//	err = actuator.ListenAndServe(ctx, "", h) // 127.0.0.1:9464 until ctx ends
//
// The package takes the metrics as an http.Handler and links no telemetry
// SDK: a service that keeps OpenTelemetry metrics, or none, mounts the
// actuator without linking Prometheus. No response holds a secret: the
// broker's URL is the Conn's, without its password.
package actuator

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/option"
)

// The probes the root package's handlers answer, kept beside the family's
// paths.
const (
	LivenessPath  = "/livez"
	ReadinessPath = "/readyz"
)

// Defaults of the health check.
const (
	// DefaultHealthTimeout bounds the round trip to the broker that
	// /acemq-health and /readyz make; without an answer by then the broker
	// part is down.
	DefaultHealthTimeout = 2 * time.Second
	// DefaultSlowRoundTrip: a round trip slower than this makes the broker
	// part degraded. RabbitMQ answers in about a millisecond on a network
	// of its own.
	DefaultSlowRoundTrip = 500 * time.Millisecond
)

// Option configures New; one whose value is out of range is New's error.
type Option func(*config) error

type config struct {
	metrics       http.Handler
	controlToken  string
	healthTimeout time.Duration
	slowRoundTrip time.Duration
}

// WithMetrics serves h at /acemq-metrics, such as
// promhttp.HandlerFor(reg, promhttp.HandlerOpts{}) for the registry of
// package acemqprom. Without it /acemq-metrics is not found (404).
func WithMetrics(h http.Handler) Option {
	return func(c *config) error {
		if h == nil {
			return errors.New("WithMetrics: the handler is nil")
		}
		c.metrics = h
		return nil
	}
}

// WithControlToken lets a request with "Authorization: Bearer token" use
// the consumer control from anywhere the actuator listens; without it
// control answers only requests from this machine to a loopback address.
// Serve the actuator over TLS (a proxy's) beyond this machine: the token
// would cross the network in clear otherwise.
func WithControlToken(token string) Option {
	return func(c *config) error {
		if len(token) < minControlToken {
			return fmt.Errorf("WithControlToken: the token has %d characters; give at least %d (openssl rand -hex 32 makes one)", len(token), minControlToken)
		}
		c.controlToken = token
		return nil
	}
}

// minControlToken is the shortest control token taken: long enough that
// guessing it over HTTP is hopeless.
const minControlToken = 16

// WithHealthTimeout bounds the round trip of /acemq-health and /readyz
// (DefaultHealthTimeout).
func WithHealthTimeout(d time.Duration) Option {
	return func(c *config) error { c.healthTimeout = d; return nil } // New checks it
}

// WithSlowRoundTrip is the round trip above which the broker part is
// degraded (DefaultSlowRoundTrip); it must be shorter than the health
// timeout.
func WithSlowRoundTrip(d time.Duration) Option {
	return func(c *config) error { c.slowRoundTrip = d; return nil } // New checks it
}

// New returns the actuator of conn: the handler of every path in the
// package's doc, matched on the request's whole path, so mount it at "/"
// of a server of its own (Server), or at each of those paths on yours. Any
// other path is not found.
func New(conn *acemq.Conn, opts ...Option) (http.Handler, error) {
	if conn == nil {
		return nil, errors.New("actuator: the Conn is nil")
	}
	c := config{healthTimeout: DefaultHealthTimeout, slowRoundTrip: DefaultSlowRoundTrip}
	if err := option.ApplyFuncs(&c, opts); err != nil {
		return nil, fmt.Errorf("actuator: %w", err)
	}
	switch {
	case c.healthTimeout <= 0:
		return nil, fmt.Errorf("actuator: the health timeout is %s but must be positive", c.healthTimeout)
	case c.slowRoundTrip <= 0:
		return nil, fmt.Errorf("actuator: the slow round trip is %s but must be positive", c.slowRoundTrip)
	case c.slowRoundTrip >= c.healthTimeout:
		return nil, fmt.Errorf("actuator: the slow round trip (%s) must be shorter than the health timeout (%s)", c.slowRoundTrip, c.healthTimeout)
	}
	// A pattern with GET matches HEAD too, and the mux answers any other
	// method on these paths with 405 and Allow: GET, HEAD (POST on the
	// control's actions).
	mux := http.NewServeMux()
	get := func(path string, h http.Handler) { mux.Handle(http.MethodGet+" "+path, h) }
	if c.metrics != nil {
		get(contract.ActuatorMetricsPath, c.metrics)
	}
	get(contract.ActuatorHealthPath, healthHandler{conn: conn, timeout: c.healthTimeout, slow: c.slowRoundTrip})
	get(contract.ActuatorInfoPath, newInfoHandler(conn))
	get(LivenessPath, conn.LivenessHandler())
	get(ReadinessPath, conn.ReadinessHandler(c.healthTimeout))
	consumers{conn}.routes(mux, func(h http.Handler) http.Handler { return controlGuard{token: c.controlToken, next: h} })
	return mux, nil
}

// writeJSON answers v with status, never cached: a probe must see now.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", contract.ContentTypeJSON)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
