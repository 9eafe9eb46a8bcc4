package deadletter

import (
	"fmt"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// Reason is why a message was set aside, and its class.
type Reason struct {
	// Text is the message's x-acemq-error or, for a message the broker
	// dead-lettered itself, what its dead-lettering headers say, in words;
	// "" when nothing says why.
	Text  string               `json:"reason"`
	Class contract.ReasonClass `json:"reasonClass"`
}

// ReasonOf says why msg, found in queue (for an export: the queue it was
// exported from), was set aside.
//
// A message with x-acemq-error was set aside by an AceMQ library: the text
// is that header, its class that of the first of contract.SetAsideTexts it
// starts as (every library's wording, CONTRACT.md section 20, and this
// library's own). A text that matches none is a handler's error as this
// library writes it for Reject and Fatal in Q.dlq (ReasonRejected: the two
// cannot be told apart) and for Park in Q.parked (ReasonParked); elsewhere
// its class is ReasonUnknown.
//
// A message in Q.dlq or Q.parked without x-acemq-error was dead-lettered
// by the broker itself (a quorum queue's delivery limit, a length limit, a
// time-to-live, a plain consumer's reject): the text says so, from which
// queue and what the broker's reason means, and the class is that reason's.
// With no word from the broker either, the text is "" and the class
// ReasonUnknown.
//
// Elsewhere a message without x-acemq-error was not set aside: its
// x-death, if any, is the history of its hops (a rung's expiry), and
// ReasonOf gives the zero Reason.
func ReasonOf(queue string, msg acemq.RawMessage) Reason {
	if text := acemq.ReadEnvelope(msg).Error; text != "" {
		return Reason{Text: text, Class: classify(queue, text)}
	}
	if _, setAside := Source(queue); !setAside {
		return Reason{}
	}
	return brokerReason(msg.Headers)
}

// classify gives the class of an x-acemq-error text found in queue.
func classify(queue, text string) contract.ReasonClass {
	if class, ok := contract.ClassifyReason(text); ok {
		return class
	}
	// A bare handler error, as this library writes it.
	switch _, setAside := Source(queue); {
	case IsDeadLetterQueue(queue):
		return contract.ReasonRejected
	case setAside:
		return contract.ReasonParked
	}
	return contract.ReasonUnknown
}

// brokerReasons are the reasons RabbitMQ dead-letters a message for, as
// x-death names them, and what each means.
var brokerReasons = map[string]struct {
	class   contract.ReasonClass
	meaning string
}{
	contract.DeathReasonDeliveryLimit: {contract.ReasonDeliveryLimit, "returned to the queue more times than its delivery limit (x-delivery-limit) allows"},
	contract.DeathReasonMaxLength:     {contract.ReasonMaxLength, "the queue was at its length limit (x-max-length or x-max-length-bytes)"},
	contract.DeathReasonExpired:       {contract.ReasonExpired, "its time-to-live ran out in the queue (x-message-ttl or the message's expiration)"},
	contract.DeathReasonRejected:      {contract.ReasonRejected, "a consumer rejected it without requeueing it (basic.reject or basic.nack)"},
}

// brokerReason reads the broker's latest dead-lettering of a message from
// its headers.
func brokerReason(h acemq.Table) Reason {
	reason, queue := latestDeath(h)
	if reason == "" {
		return Reason{Class: contract.ReasonUnknown}
	}
	known, ok := brokerReasons[reason]
	if !ok {
		known.class, known.meaning = contract.ReasonUnknown, "a reason this library does not know"
	}
	from := ""
	if queue != "" {
		from = " from " + queue
	}
	return Reason{Text: fmt.Sprintf("the broker dead-lettered it%s (%s): %s", from, reason, known.meaning), Class: known.class}
}

// latestDeath is the reason and queue of the broker's latest dead-lettering.
// The first x-death entry is the latest on every RabbitMQ; x-last-death-*
// (3.13 and later) comes next: RabbitMQ 3.10 passes on an x-last-death-*
// that a client published (a replay of a newer broker's dead letter) as it
// is, while putting its own entry first in x-death. x-first-death-* is the
// last resort.
func latestDeath(h acemq.Table) (reason, queue string) {
	if deaths, ok := h[contract.HeaderDeath].([]any); ok && len(deaths) > 0 {
		var entry map[string]any
		switch e := deaths[0].(type) {
		case acemq.Table:
			entry = e
		case map[string]any:
			entry = e
		}
		if r := headerString(entry["reason"]); r != "" {
			return r, headerString(entry["queue"])
		}
	}
	for _, prefix := range []string{contract.HeaderLastDeathPrefix, contract.HeaderFirstDeathPrefix} {
		if r := headerString(h[prefix+"reason"]); r != "" {
			return r, headerString(h[prefix+"queue"])
		}
	}
	return "", ""
}

// headerString reads a string header leniently, as the envelope is read.
func headerString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}
