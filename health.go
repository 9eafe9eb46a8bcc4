package acemq

import (
	"context"
	"encoding/json"
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
	// closed) within Health's context, in RoundTrip. It does not while the
	// Conn reconnects, nor while the broker blocks it: RabbitMQ then reads
	// nothing more from a connection that publishes.
	Answered  bool
	RoundTrip time.Duration
	// Blocked: the broker blocks this connection's publishes for
	// BlockedReason (a memory or disk alarm); publishes wait, and fail with
	// ErrBlocked at their deadline. RabbitMQ tells a connection so only once
	// it publishes during the alarm.
	Blocked       bool
	BlockedReason string
	// Consumers counts the consumers started on the Conn and not closed.
	Consumers int
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

// Ready says the Conn can work now: connected, and the broker answered.
func (h Health) Ready() bool { return h.Connected && h.Answered && !h.Closed }

// MarshalJSON writes h as ReadinessHandler serves it: the fields in
// camelCase, the error as its text, live and ready included.
func (h Health) MarshalJSON() ([]byte, error) { return h.marshal(true) }

// liveness is what LivenessHandler serves: the Conn's state without a round
// trip to the broker, so neither ready nor answered, which it did not check.
type liveness Health

func (l liveness) MarshalJSON() ([]byte, error) { return Health(l).marshal(false) }

// marshal writes h; asked says whether Health asked the broker, without
// which ready, answered and the round trip are not known and are left out.
func (h Health) marshal(asked bool) ([]byte, error) {
	type view struct {
		Broker           string     `json:"broker"`
		Live             bool       `json:"live"`
		Ready            *bool      `json:"ready,omitempty"`
		Connected        bool       `json:"connected"`
		Closed           bool       `json:"closed"`
		Answered         *bool      `json:"answered,omitempty"`
		RoundTripSeconds float64    `json:"roundTripSeconds,omitempty"`
		Blocked          bool       `json:"blocked"`
		BlockedReason    string     `json:"blockedReason,omitempty"`
		Consumers        int        `json:"consumers"`
		Recoveries       int        `json:"recoveries"`
		LastError        string     `json:"lastError,omitempty"`
		LastErrorAt      *time.Time `json:"lastErrorAt,omitempty"`
	}
	v := view{Broker: h.Broker, Live: h.Live(), Connected: h.Connected, Closed: h.Closed,
		Blocked: h.Blocked, BlockedReason: h.BlockedReason, Consumers: h.Consumers, Recoveries: h.Recoveries}
	if asked {
		ready, answered := h.Ready(), h.Answered
		v.Ready, v.Answered, v.RoundTripSeconds = &ready, &answered, h.RoundTrip.Seconds()
	}
	if h.LastError != nil {
		v.LastError, v.LastErrorAt = h.LastError.Error(), &h.LastErrorAt
	}
	return json.Marshal(v)
}

// Health reports the Conn's state and makes a round trip to the broker,
// bounded by ctx (by DefaultHealthTimeout when ctx has no deadline).
func (c *Conn) Health(ctx context.Context) Health {
	h := c.state()
	if h.Closed {
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
		Broker:    c.url,
		Connected: st.Connected, Closed: st.Closed,
		Blocked: st.Blocked, BlockedReason: st.BlockedReason,
		Consumers:  int(c.consumers.Load()),
		Recoveries: max(st.Connects-1, 0),
		LastError:  st.LastError, LastErrorAt: st.LastErrorAt,
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

// ReadinessHandler answers a readiness probe: 200 when the Conn is
// connected and the broker answers within timeout, else 503, with Health
// as JSON. Mount it where the platform probes, such as /readyz.
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
