package contract

import (
	"fmt"
	"regexp"
	"slices"
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
	ReasonTimeout         ReasonClass = "timeout"          // the handler ran past its timeout; retried
	ReasonUndecodable     ReasonClass = "undecodable"      // the body did not decode
	ReasonRejected        ReasonClass = "rejected"         // the handler rejected it; in x-death, a consumer rejected it without requeue
	ReasonFatal           ReasonClass = "fatal"            // the handler failed with a fatal error
	ReasonPanicked        ReasonClass = "panicked"         // the handler panicked
	ReasonParked          ReasonClass = "parked"           // the handler parked it
	ReasonExhausted       ReasonClass = "exhausted"        // the policy's attempts were used
	ReasonTooOld          ReasonClass = "too_old"          // older than the policy allows
	ReasonNoDecision      ReasonClass = "no_decision"      // the handler returned no decision
	ReasonRequeue         ReasonClass = "requeue"          // the handler put it back unchanged (acemq.Requeue)
	ReasonRepublishFailed ReasonClass = "republish_failed" // its republish failed; handed back
	ReasonShutdown        ReasonClass = "shutdown"         // handed back as the consumer closed
	ReasonPaused          ReasonClass = "paused"           // handed back unstarted as the consumer paused
	ReasonCircuitOpen     ReasonClass = "circuit_open"     // failed while its consumer's circuit breaker was open; put back, no attempt spent
	ReasonAckFailed       ReasonClass = "ack_failed"       // its ack failed; the broker delivers it again

	ReasonInterceptor   ReasonClass = "interceptor"    // an interceptor refused it (the .NET library and the Go peer have them)
	ReasonDeliveryLimit ReasonClass = "delivery_limit" // the broker dead-lettered it: returned to its quorum queue more often than x-delivery-limit allows
	ReasonMaxLength     ReasonClass = "maxlen"         // the broker dead-lettered it: its queue was at its length limit
	ReasonExpired       ReasonClass = "expired"        // the broker dead-lettered it: its time-to-live ran out in the queue
	ReasonUnknown       ReasonClass = "unknown"        // set aside, but nothing on it says why
)

// IsRetry reports whether c is the class of a retry the policy schedules:
// the handler's (ReasonRetry) or its timeout's (ReasonTimeout).
func (c ReasonClass) IsRetry() bool { return c == ReasonRetry || c == ReasonTimeout }

// IsUnhandled says whether c is that of a delivery a consumer handed back
// without handling it (it closed or paused): no failure of the message.
func (c ReasonClass) IsUnhandled() bool { return c == ReasonShutdown || c == ReasonPaused }

// The x-acemq-error texts this library writes (section 7), each followed by
// the handler's error where there is one.
const (
	ReasonTextUndecodable = "could not be decoded: "
	ReasonTextNoDecision  = "the handler returned no decision"
	ReasonTextPanicked    = "handler panicked: "
	// ReasonTextFatal is the error of a Fatal decision made without one.
	ReasonTextFatal = "fatal error"
	// ReasonTextTimedOut is the error of a handler that ran past its
	// timeout (acemq.WithHandlerTimeout), followed by the timeout
	// (FormatDuration): a dead letter that exhausted its attempts so reads
	// "exhausted 3 attempts: the handler timed out after 5s".
	ReasonTextTimedOut = "the handler timed out after "
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

// SetAsideText is how an AceMQ library starts the x-acemq-error text of a
// message it set aside for a class of reason: the table of section 20, and
// this library's own texts.
type SetAsideText struct {
	Start   *regexp.Regexp // matches the start of the text
	Class   ReasonClass
	Writers string // the libraries that write it
}

// setAsideTexts in the order ClassifyReason tries them. "…" in the contract
// is the handler's error (Java and Python put its type first).
//
// Java writes "the handler reported an unprocessable message" both for a
// rejection and for a fatal error, the Go peer for a fatal error: it is
// classed rejected, after Java, the reference.
var setAsideTexts = []SetAsideText{
	{regexp.MustCompile(`^exhausted \d+ attempt(s|\(s\))?(:|$)`), ReasonExhausted, "Java, Python (attempt(s)), the Go peer (singular for 1), this library"},
	{regexp.MustCompile(`^gave up after \d+ attempt(s|\(s\))?(:|$)`), ReasonExhausted, "Ruby, .NET (attempt(s))"},
	{regexp.MustCompile(`^exceeded the maximum message age of `), ReasonTooOld, "Java (PT2M), the Go peer and this library (2m0s, 2m), Python (0:02:00)"},
	{regexp.MustCompile(`^gave up on a message older than `), ReasonTooOld, "Ruby (120.0 seconds), .NET (00:02:00)"},
	{regexp.MustCompile(`^the handler rejected it(:|$)`), ReasonRejected, "the Go peer, Python"},
	{regexp.MustCompile(`^rejected by the handler(:|$)`), ReasonRejected, "Ruby"},
	{regexp.MustCompile(`^the handler reported an unprocessable message(:|$)`), ReasonRejected, "Java (rejected and fatal), the Go peer (fatal)"},
	{regexp.MustCompile(`^retrying cannot help(:|$)`), ReasonFatal, "Ruby"},
	{regexp.MustCompile(`^the handler parked it(:|$)`), ReasonParked, "the Go peer"},
	{regexp.MustCompile(`^could not be decoded(:|$)`), ReasonUndecodable, "Java, the Go peer, Ruby, Python, this library"},
	{regexp.MustCompile(`^could not decode as `), ReasonUndecodable, ".NET"},
	{regexp.MustCompile(`^an interceptor refused it(:|$)`), ReasonInterceptor, "the Go peer, .NET"},
	{regexp.MustCompile(`^` + regexp.QuoteMeta(ReasonTextPanicked)), ReasonPanicked, "this library"},
	{regexp.MustCompile(`^` + regexp.QuoteMeta(ReasonTextNoDecision) + `$`), ReasonNoDecision, "this library"},
	{regexp.MustCompile(`^` + regexp.QuoteMeta(ReasonTextFatal) + `$`), ReasonFatal, "this library"},
}

// SetAsideTexts are the texts ClassifyReason knows, in the order it tries
// them.
func SetAsideTexts() []SetAsideText { return slices.Clone(setAsideTexts) }

// ClassifyReason gives the class of an x-acemq-error text by the first of
// SetAsideTexts it starts as; ok is false for a text that starts as none
// (a bare handler error, as this library writes it for Reject, Fatal and
// Park).
func ClassifyReason(text string) (class ReasonClass, ok bool) {
	for _, t := range setAsideTexts {
		if t.Start.MatchString(text) {
			return t.Class, true
		}
	}
	return "", false
}
