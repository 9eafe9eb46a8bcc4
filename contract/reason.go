package contract

import (
	"fmt"
	"strings"
	"time"
)

// ReasonClass sorts the reasons a message was set aside or handed back into
// a few kinds, fit for a metric label; the reason itself is free text. The
// classes after ReasonAckFailed are never this library's settlements: they
// are what set-aside messages say when another AceMQ library (an
// interceptor), the broker itself, or nobody says why.
type ReasonClass string

const (
	ReasonNone            ReasonClass = ""                 // accepted
	ReasonRetry           ReasonClass = "retry"            // the handler asked for a retry
	ReasonUndecodable     ReasonClass = "undecodable"      // the body did not decode
	ReasonRejected        ReasonClass = "rejected"         // the handler rejected it; in x-death, a consumer rejected it without requeue
	ReasonFatal           ReasonClass = "fatal"            // the handler failed with a fatal error
	ReasonPanicked        ReasonClass = "panicked"         // the handler panicked
	ReasonParked          ReasonClass = "parked"           // the handler parked it
	ReasonExhausted       ReasonClass = "exhausted"        // the policy's attempts were used
	ReasonTooOld          ReasonClass = "too_old"          // older than the policy allows
	ReasonNoDecision      ReasonClass = "no_decision"      // the handler returned no decision
	ReasonRepublishFailed ReasonClass = "republish_failed" // its republish failed; handed back
	ReasonShutdown        ReasonClass = "shutdown"         // handed back as the consumer closed
	ReasonAckFailed       ReasonClass = "ack_failed"       // its ack failed; the broker delivers it again

	ReasonInterceptor   ReasonClass = "interceptor"    // an interceptor refused it (the .NET library and the Go peer have them)
	ReasonDeliveryLimit ReasonClass = "delivery_limit" // the broker dead-lettered it: returned to its quorum queue more often than x-delivery-limit allows
	ReasonMaxLength     ReasonClass = "maxlen"         // the broker dead-lettered it: its queue was at its length limit
	ReasonExpired       ReasonClass = "expired"        // the broker dead-lettered it: its time-to-live ran out in the queue
	ReasonUnknown       ReasonClass = "unknown"        // set aside, but nothing on it says why
)

// The x-acemq-error texts this library writes (section 7), each followed by
// the handler's error where there is one.
const (
	ReasonTextUndecodable = "could not be decoded: "
	ReasonTextNoDecision  = "the handler returned no decision"
	ReasonTextPanicked    = "handler panicked: "
)

// ExhaustedReason is the reason of a message that used the policy's
// maxAttempts attempts, to be followed by ": " and the handler's error.
func ExhaustedReason(maxAttempts int) string {
	return fmt.Sprintf("exhausted %d attempts", maxAttempts)
}

// TooOldReason is the reason of a message older than the policy's
// maxMessageAge, to be followed by ": " and the handler's error.
func TooOldReason(maxAge time.Duration) string {
	return "exceeded the maximum message age of " + FormatDuration(maxAge)
}

// FormatDuration writes a duration as the policy notation (section 3) and
// the too-old reason do: Go's syntax without zero trailing units, "2m"
// rather than "2m0s", "1h30m" rather than "1h30m0s".
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
