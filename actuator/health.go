package actuator

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// healthHandler answers /acemq-health: 503 when the health is down (the
// connection, or the service draining), 200 when it is up or degraded (the
// Conn still works, or waits for the broker by itself: restarting or
// unrouting the service would not help).
type healthHandler struct {
	conn          *acemq.Conn
	timeout, slow time.Duration
}

func (h healthHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.timeout)
	defer cancel()
	if !h.conn.State().Connected {
		// The round trip would wait for a reconnect: say down at once.
		cancel()
	}
	rep := assess(h.conn.Health(ctx), h.timeout, h.slow)
	rep.checked = time.Now().UTC()
	status := http.StatusOK
	if rep.status == contract.HealthDown {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, rep)
}

// report is the health as /acemq-health serves it.
type report struct {
	status  contract.HealthStatus
	detail  string
	checked time.Time
	parts   []part
	// blocked and blockedReason are written beside the parts, as the Go
	// peer writes them (parts.blocked, parts.blockedReason).
	blocked       bool
	blockedReason string
	// pausedConsumers is written beside them too (parts.pausedConsumers),
	// this library's: the family names none.
	pausedConsumers int
}

type part struct {
	name   string
	status contract.HealthStatus
	detail string
}

func (r report) MarshalJSON() ([]byte, error) {
	parts := make(object, 0, len(r.parts))
	for _, p := range r.parts {
		parts = append(parts, member{p.name, object{
			{contract.HealthFieldStatus, p.status},
			{contract.HealthFieldDetail, p.detail},
		}})
	}
	parts = append(parts, member{contract.HealthPartBlocked, r.blocked})
	if r.blocked {
		parts = append(parts, member{contract.HealthPartBlockedReason, r.blockedReason})
	}
	parts = append(parts, member{contract.HealthPartPausedConsumers, r.pausedConsumers})
	return object{
		{contract.HealthFieldStatus, r.status},
		{contract.HealthFieldDetail, r.detail},
		{contract.HealthFieldChecked, r.checked},
		{contract.HealthFieldParts, parts},
	}.MarshalJSON()
}

// rank orders the statuses from best to worst.
var rank = map[contract.HealthStatus]int{contract.HealthUp: 0, contract.HealthDegraded: 1, contract.HealthDown: 2}

// assess judges h, a Health whose round trip was bounded by timeout: the
// status is its worst part's, and the detail that part's (every part's
// when all are up, but the family's sentence alone for a blocked
// connection, as alert rules match it).
func assess(h acemq.Health, timeout, slow time.Duration) report {
	parts := []part{connectionPart(h), brokerPart(h, timeout, slow), consumersPart(h)}
	worst := contract.HealthUp
	for _, p := range parts {
		if rank[p.status] > rank[worst] {
			worst = p.status
		}
	}
	var details []string
	for _, p := range parts {
		if p.status == worst {
			details = append(details, p.detail)
		}
	}
	detail := strings.Join(details, "; ")
	if h.Blocked && worst == contract.HealthUp {
		detail = contract.BlockedDetail(h.BlockedReason)
	}
	return report{status: worst, detail: detail, parts: parts, blocked: h.Blocked, blockedReason: h.BlockedReason, pausedConsumers: h.PausedConsumers}
}

// connectionPart: up while connected, the broker blocking it (a resource
// alarm: publishes wait) included, with the family's sentence (section 21);
// down while reconnecting and once closed.
func connectionPart(h acemq.Health) part {
	p := part{name: contract.HealthPartConnection}
	switch {
	case h.Closed:
		p.status, p.detail = contract.HealthDown, "the connection to "+h.Broker+" is closed"
	case !h.Connected:
		p.status, p.detail = contract.HealthDown, "reconnecting to "+h.Broker
		if h.LastError != nil {
			p.detail += fmt.Sprintf(", lost at %s: %v", h.LastErrorAt.UTC().Format(time.RFC3339), h.LastError)
		}
	case h.Blocked:
		p.status, p.detail = contract.HealthUp, contract.BlockedDetail(h.BlockedReason)
	default:
		p.status, p.detail = contract.HealthUp, "connected to "+h.Broker
		if h.Recoveries > 0 {
			p.detail += fmt.Sprintf(" (recovered %d time%s)", h.Recoveries, plural(h.Recoveries))
		}
	}
	return p
}

// brokerPart: up when the broker answered a round trip, or blocks the
// connection (it is not asked then: it would read nothing); degraded when
// it answered slower than slow; down otherwise.
func brokerPart(h acemq.Health, timeout, slow time.Duration) part {
	p := part{name: contract.HealthPartBroker}
	switch {
	case h.Answered && h.RoundTrip > slow:
		p.status, p.detail = contract.HealthDegraded, fmt.Sprintf("answered a round trip in %s, slower than %s", roundTrip(h.RoundTrip), slow)
	case h.Answered:
		p.status, p.detail = contract.HealthUp, "answered a round trip in "+roundTrip(h.RoundTrip)
	case h.Closed:
		p.status, p.detail = contract.HealthDown, "not asked: the connection is closed"
	case !h.Connected:
		p.status, p.detail = contract.HealthDown, "not asked: the connection is down"
	case h.Blocked:
		p.status, p.detail = contract.HealthUp, "not asked: it blocks this connection, and reads nothing from it until the alarm clears"
	default:
		// The round trip timed out, or failed at once as the connection
		// was lost before the Conn knew it.
		p.status, p.detail = contract.HealthDown, fmt.Sprintf("no answer to a round trip within %s", timeout)
	}
	return p
}

// consumersPart counts the consumers running and paused: up, since a
// service may have none (it only publishes) and a paused consumer is
// paused, not failing (an operator's pause, or a circuit breaker waiting
// for a dependency: restarting the service would help neither); but down
// while the service drains (Shutdown: they are finishing), so that a load
// balancer sends it no more work, as the readiness probe says too.
func consumersPart(h acemq.Health) part {
	if h.Draining && !h.Closed {
		return part{name: contract.HealthPartConsumers, status: contract.HealthDown,
			detail: fmt.Sprintf("draining: the service is shutting down, %d consumer%s finishing", h.Consumers, plural(h.Consumers))}
	}
	running := h.Consumers - h.PausedConsumers
	detail := fmt.Sprintf("%d consumer%s running", running, plural(running))
	if h.PausedConsumers > 0 {
		detail += fmt.Sprintf(", %d paused", h.PausedConsumers)
	}
	return part{name: contract.HealthPartConsumers, status: contract.HealthUp, detail: detail}
}

func roundTrip(d time.Duration) string { return d.Round(time.Microsecond).String() }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
