package acemq

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/acemq-go/acemq/contract"
)

// DefaultHealthTimeout bounds Health's round trip to the broker when its
// context has no deadline.
const DefaultHealthTimeout = 5 * time.Second

// Health is a Conn's state, for liveness and readiness checks and for
// operators.
type Health struct {
	// Broker is the URL in use, without its password.
	Broker string
	// Connected: a connection is open. False while the Conn reconnects
	// (publishes and consumers wait for it) and after Close.
	Connected bool
	Closed    bool
	// Answered: the broker answered a round trip (a channel opened and
	// closed) within Health's context, in RoundTrip. Health does not ask
	// while the broker blocks the connection's publishes: the block is the
	// broker's answer.
	Answered  bool
	RoundTrip time.Duration
	// Blocked: the broker blocks this connection's publishes for
	// BlockedReason (a memory or disk alarm); publishes wait, and fail with
	// ErrBlocked at their deadline. RabbitMQ tells a connection so only once
	// it publishes during the alarm. A blocked Conn is still ready (section
	// 21 of the family's contract): restarting into a blocked broker, or
	// taking every instance out of rotation for a broker-wide alarm, helps
	// nobody.
	Blocked       bool
	BlockedReason string
	// Draining: Conn.Shutdown has begun, its consumers are finishing what
	// they hold; the Conn is not ready, so that a load balancer sends the
	// service no more work.
	Draining bool
	// Consumers counts the consumers started on the Conn and not closed.
	Consumers int
	// PausedConsumers counts those of them paused (Consumer.Pause, or an
	// open circuit breaker): paused is not failing, and the Conn stays
	// ready.
	PausedConsumers int
	// Recoveries counts connections lost and opened again.
	Recoveries int
	// LastError is the last connection failure (a lost connection or a
	// failed reconnect), at LastErrorAt; nil when there has been none. It
	// stays after a recovery: Connected says whether it still matters.
	LastError   error
	LastErrorAt time.Time
}

// Live says the Conn is of use: it is not closed. A Conn that is
// reconnecting is live; restarting the process would not bring the broker
// back any sooner.
func (h Health) Live() bool { return !h.Closed }

// Ready says the Conn can take work now: connected and not draining, and
// the broker answered or blocks the connection (publishes wait for its
// alarm to clear by themselves).
func (h Health) Ready() bool {
	return h.Connected && !h.Closed && !h.Draining && (h.Answered || h.Blocked)
}

// Status is the family's word for Ready: up when ready, down otherwise.
func (h Health) Status() contract.HealthStatus {
	if h.Ready() {
		return contract.HealthUp
	}
	return contract.HealthDown
}

// Detail says in a sentence why h is ready or not; for a blocked
// connection, the family's sentence and the broker's reason
// (contract.BlockedDetail), which alert rules match.
func (h Health) Detail() string {
	switch {
	case h.Closed:
		return "the connection to " + h.Broker + " is closed"
	case h.Draining:
		return "draining: the service is shutting down, its consumers are finishing"
	case !h.Connected:
		return "reconnecting to " + h.Broker
	case h.Blocked:
		return contract.BlockedDetail(h.BlockedReason)
	case !h.Answered:
		return "connected to " + h.Broker + ", which did not answer a round trip"
	}
	return fmt.Sprintf("connected to %s, which answered a round trip in %s", h.Broker, h.RoundTrip)
}

// MarshalJSON writes h as ReadinessHandler serves it: status and detail
// first, then the fields in camelCase, the error as its text, live and ready
// included.
func (h Health) MarshalJSON() ([]byte, error) { return h.marshal(true) }

// liveness is what LivenessHandler serves: the Conn's state without a round
// trip to the broker, so neither ready nor answered, which it did not check.
type liveness Health

func (l liveness) MarshalJSON() ([]byte, error) { return Health(l).marshal(false) }

// marshal writes h; asked says whether Health asked the broker, without
// which ready, answered and the round trip are not known and are left out.
func (h Health) marshal(asked bool) ([]byte, error) {
	type view struct {
		Status           string     `json:"status,omitempty"`
		Detail           string     `json:"detail,omitempty"`
		Broker           string     `json:"broker"`
		Live             bool       `json:"live"`
		Ready            *bool      `json:"ready,omitempty"`
		Connected        bool       `json:"connected"`
		Closed           bool       `json:"closed"`
		Answered         *bool      `json:"answered,omitempty"`
		RoundTripSeconds float64    `json:"roundTripSeconds,omitempty"`
		Blocked          bool       `json:"blocked"`
		BlockedReason    string     `json:"blockedReason,omitempty"`
		Draining         bool       `json:"draining"`
		Consumers        int        `json:"consumers"`
		PausedConsumers  int        `json:"pausedConsumers"`
		Recoveries       int        `json:"recoveries"`
		LastError        string     `json:"lastError,omitempty"`
		LastErrorAt      *time.Time `json:"lastErrorAt,omitempty"`
	}
	v := view{Broker: h.Broker, Live: h.Live(), Connected: h.Connected, Closed: h.Closed,
		Blocked: h.Blocked, BlockedReason: h.BlockedReason, Draining: h.Draining, Consumers: h.Consumers, PausedConsumers: h.PausedConsumers, Recoveries: h.Recoveries}
	if asked {
		ready, answered := h.Ready(), h.Answered
		v.Ready, v.Answered, v.RoundTripSeconds = &ready, &answered, h.RoundTrip.Seconds()
		v.Status, v.Detail = string(h.Status()), h.Detail()
	}
	if h.LastError != nil {
		v.LastError, v.LastErrorAt = h.LastError.Error(), &h.LastErrorAt
	}
	return json.Marshal(v)
}

// Health reports the Conn's state and makes a round trip to the broker,
// bounded by ctx (by DefaultHealthTimeout when ctx has no deadline), unless
// the broker blocks the connection and would not answer.
func (c *Conn) Health(ctx context.Context) Health {
	h := c.state()
	if h.Closed || h.Blocked {
		return h
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultHealthTimeout)
		defer cancel()
	}
	start := time.Now()
	if c.transport.Ping(ctx) == nil {
		h.Answered, h.RoundTrip = true, time.Since(start)
	}
	// The round trip may have waited for a reconnect: read the state again.
	after := c.state()
	after.Answered, after.RoundTrip = h.Answered, h.RoundTrip
	return after
}

// state is what the Conn knows, without asking the broker.
func (c *Conn) state() Health {
	st := c.transport.State()
	return Health{
		Broker:    cmp.Or(st.Address, c.url),
		Connected: st.Connected, Closed: st.Closed,
		Blocked: st.Blocked, BlockedReason: st.BlockedReason,
		Draining:        c.draining.Load() && !st.Closed,
		Consumers:       c.consumers.count(),
		PausedConsumers: c.consumers.paused(),
		Recoveries:      max(st.Connects-1, 0),
		LastError:       st.LastError, LastErrorAt: st.LastErrorAt,
	}
}

// LivenessHandler answers a liveness probe: 200 while the Conn is not
// closed (reconnecting included), else 503, with the Conn's state as JSON.
// It asks the broker nothing, so its JSON has no ready nor answered.
func (c *Conn) LivenessHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := c.state()
		writeHealth(w, liveness(h), h.Live())
	})
}

// ReadinessHandler answers a readiness probe: 200 when the Conn is ready
// (Health.Ready: connected, not draining, and the broker answers within
// timeout or blocks the connection), else 503, with Health as JSON, its
// status (up or down) and detail first. Mount it where the platform
// probes, such as /readyz.
func (c *Conn) ReadinessHandler(timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		h := c.Health(ctx)
		writeHealth(w, h, h.Ready())
	})
}

func writeHealth(w http.ResponseWriter, h json.Marshaler, ok bool) {
	w.Header().Set("Content-Type", contract.ContentTypeJSON)
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(h)
}
