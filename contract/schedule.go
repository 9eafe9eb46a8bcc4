package contract

import "time"

// The scheduler's topology (section 12): delayed sends wait on rungs whose
// time-to-live is the wait, as retries do, and come back through
// ScheduleExchange to ScheduleDueQueue, where a forwarder sends each one on
// to the next rung or, when due, to its target.
const (
	// ScheduleExchange is direct and durable: it routes a message to a rung
	// under the rung's name, and a rung's expired messages to the due
	// queue under its name.
	ScheduleExchange = "acemq.schedule"
	// ScheduleDueSuffix names the due queue after the exchange:
	// acemq.schedule.due, classic, durable, no arguments.
	ScheduleDueSuffix = ".due"
	// ScheduleDueQueue is the queue the forwarder consumes.
	ScheduleDueQueue = ScheduleExchange + ScheduleDueSuffix

	// The rungs' waits, longest first: acemq.schedule.1h, .10m, .1m, .10s
	// and .1s, each classic and durable with exactly x-message-ttl,
	// x-dead-letter-exchange (the exchange) and x-dead-letter-routing-key
	// (the due queue).
	ScheduleRung1h  = time.Hour
	ScheduleRung10m = 10 * time.Minute
	ScheduleRung1m  = time.Minute
	ScheduleRung10s = 10 * time.Second
	ScheduleRung1s  = time.Second
)

// ScheduleRungDelays are the rungs' waits, longest first.
func ScheduleRungDelays() []time.Duration {
	return []time.Duration{ScheduleRung1h, ScheduleRung10m, ScheduleRung1m, ScheduleRung10s, ScheduleRung1s}
}

// ScheduleRungQueue names the rung of exchange for delay d:
// acemq.schedule.1h for an hour.
func ScheduleRungQueue(exchange string, d time.Duration) string {
	return exchange + "." + RenderDelay(d)
}

// The scheduler's headers (not reserved: a handler sees them): where a
// scheduled message goes, when, and as what content type. A hop carries the
// body as application/octet-stream; the delivery drops the four.
const (
	HeaderScheduleExchange   = "x-schedule-exchange"
	HeaderScheduleRoutingKey = "x-schedule-routing-key"
	// HeaderScheduleDueAt is epoch milliseconds, an integer.
	HeaderScheduleDueAt = "x-schedule-due-at"
	// HeaderScheduleContentType is the body's own content type, which
	// the delivery is sent with.
	HeaderScheduleContentType = "x-schedule-content-type"
)

const (
	// ScheduledMessageType is the type of the new envelope a due message
	// is delivered in.
	ScheduledMessageType = "ScheduledMessage"
	// DefaultScheduleContentType is a delivery's content type when
	// x-schedule-content-type is missing.
	DefaultScheduleContentType = ContentTypeJSON
	// ScheduleHopContentType is the content type of a message on its way:
	// its body is the original bytes, whatever they are.
	ScheduleHopContentType = ContentTypeBytes
	// ScheduleDeliverBelow: what remains under it is delivered now, not
	// sent to a rung. It is the shortest rung, so precision is about it.
	ScheduleDeliverBelow = ScheduleRung1s
)

// CapabilityScheduler: the build links package schedule.
const CapabilityScheduler Capability = "scheduler"
