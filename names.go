// Package acemq is RabbitMQ messaging in which no message disappears quietly:
// typed publishing with confirms, consuming with retries whose long waits are
// the broker's (the retry ladder), and a queue a person can see for every
// message that cannot be handled. Names, arguments and headers follow the
// AceMQ wire contract shared with the Java, .NET, Python and Ruby libraries.
package acemq

import (
	"strconv"
	"time"
)

// The exchanges every AceMQ library declares (CONTRACT.md section 1).
const (
	// RetryExchange is where an expired message leaves its rung: a direct
	// exchange that routes it home under its source queue's name.
	RetryExchange = "acemq.retry"
	// DeadLetterExchange routes dead letters and parked messages to their
	// queues. Consumers always use it, even when a topology renames its own.
	DeadLetterExchange = "acemq.dlx"
)

// DeadLetterQueue names the queue for messages from source that used every
// attempt, grew too old or were rejected: "Q.dlq".
func DeadLetterQueue(source string) string { return source + ".dlq" }

// ParkedQueue names the queue for messages from source that a person must
// look at, most often ones that could not be decoded: "Q.parked".
func ParkedQueue(source string) string { return source + ".parked" }

// RetryQueue names the rung of source that holds messages for delay:
// "Q.retry.<delay>" with the delay rendered by RenderDelay.
func RetryQueue(source string, delay time.Duration) string {
	return source + ".retry." + RenderDelay(delay)
}

// RenderDelay writes a delay the way every AceMQ library names a rung: whole
// seconds (truncated), in hours or minutes when they divide evenly, and no day
// unit. 500ms is "0s", 90s is "90s", 5400s is "90m", 86400s is "24h".
func RenderDelay(d time.Duration) string {
	s := int64(d / time.Second)
	switch {
	case s <= 0:
		return "0s"
	case s%3600 == 0:
		return strconv.FormatInt(s/3600, 10) + "h"
	case s%60 == 0:
		return strconv.FormatInt(s/60, 10) + "m"
	default:
		return strconv.FormatInt(s, 10) + "s"
	}
}
