package contract

import "strings"

// The message headers of the envelope (section 6).
const (
	HeaderID          = "x-acemq-id"
	HeaderType        = "x-acemq-type"
	HeaderVersion     = "x-acemq-version"
	HeaderCorrelation = "x-acemq-correlation"
	HeaderCausation   = "x-acemq-causation"
	HeaderAttempt     = "x-acemq-attempt"
	HeaderFirstSeen   = "x-acemq-first-seen"
	HeaderOrigin      = "x-acemq-origin"
	HeaderError       = "x-acemq-error"
	HeaderClaim       = "x-acemq-claim"

	// The routing-slip step form the Java library writes (section 13):
	// reserved, and readable by a handler.
	HeaderRoute         = "x-acemq-route"
	HeaderRoutePosition = "x-acemq-route-position"
	HeaderRouteID       = "x-acemq-route-id"

	// The replay headers are application headers: a replay tool sets them
	// and handlers may read them.
	HeaderReplayedFrom = "acemq-replayed-from"
	HeaderReplayedAt   = "acemq-replayed-at"
	HeaderReplayCount  = "acemq-replay-count"

	// W3C trace context, carried as application headers.
	HeaderTraceParent = "traceparent"
	HeaderTraceState  = "tracestate"
)

// ReservedHeaderPrefix starts every header the library owns. Applications
// cannot set such headers and handlers never see them; the prefix is
// compared case-insensitively.
const ReservedHeaderPrefix = "x-acemq-"

// The envelope's defaults (section 6).
const (
	// DefaultType is the message type when there is no routing key to use.
	DefaultType = "message"
	// DefaultVersion is the schema version of a message that names none.
	DefaultVersion = 1
	// DefaultOriginService is the service part of the default origin,
	// acemq@<hostname>.
	DefaultOriginService = "acemq"
	// ReplayedAtLayout is how acemq-replayed-at is written: RFC 3339 UTC
	// with milliseconds.
	ReplayedAtLayout = "2006-01-02T15:04:05.000Z"
)

// Headers the broker writes, which the library reads.
const (
	// HeaderDeath is RabbitMQ's dead-lettering history, newest first.
	HeaderDeath = "x-death"
	// HeaderFirstDeathPrefix and HeaderLastDeathPrefix start the headers
	// (-reason, -queue, -exchange) RabbitMQ sets beside x-death.
	HeaderFirstDeathPrefix = "x-first-death-"
	HeaderLastDeathPrefix  = "x-last-death-"
	// HeaderDeliveryCount is how often a quorum queue delivered the message
	// before: of the delivery, not of the message, so never republished.
	HeaderDeliveryCount = "x-delivery-count"
	// HeaderAcquiredCount is how often a quorum queue had the message back
	// by any return, a nack's too (RabbitMQ 4.3, where x-delivery-count
	// counts only the failed deliveries: rejects and closing channels).
	// Like x-delivery-count, of the delivery, never republished.
	HeaderAcquiredCount = "x-acquired-count"
)

// IsDeathHeader reports whether name (in any case) is one of the headers of
// the broker's dead-lettering history: x-death, x-first-death-*,
// x-last-death-*.
func IsDeathHeader(name string) bool {
	n := strings.ToLower(name)
	return n == HeaderDeath || strings.HasPrefix(n, HeaderFirstDeathPrefix) || strings.HasPrefix(n, HeaderLastDeathPrefix)
}

// The reasons RabbitMQ gives in x-death and x-first-death-reason (section
// 20: what a message the broker dead-lettered itself says).
const (
	// DeathReasonRejected: a consumer rejected it without requeueing it.
	DeathReasonRejected = "rejected"
	// DeathReasonExpired: its time-to-live ran out in the queue.
	DeathReasonExpired = "expired"
	// DeathReasonMaxLength: its queue was at its length limit.
	DeathReasonMaxLength = "maxlen"
	// DeathReasonDeliveryLimit: returned to its quorum queue more often than
	// x-delivery-limit allows.
	DeathReasonDeliveryLimit = "delivery_limit"
)
