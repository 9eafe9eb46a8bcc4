package deadletter_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/internal/testing/deliverytest"
	"github.com/acemq-go/acemq/transport"
)

// Every set-aside text of CONTRACT.md section 20, and this library's own,
// in Q.dlq and Q.parked alike.
func TestReasonOfTheFamilysTexts(t *testing.T) {
	tests := []struct {
		who, text string
		want      contract.ReasonClass
	}{
		{"Java", "exhausted 3 attempts: java.io.IOException: connection reset", contract.ReasonExhausted},
		{"Go peer", "exhausted 3 attempts: connection reset", contract.ReasonExhausted},
		{"Go peer, one attempt", "exhausted 1 attempt: connection reset", contract.ReasonExhausted},
		{"Ruby", "gave up after 3 attempts: Timeout::Error", contract.ReasonExhausted},
		{"Python", "exhausted 3 attempt(s): TimeoutError: timed out", contract.ReasonExhausted},
		{"Python, one attempt", "exhausted 1 attempt: TimeoutError: timed out", contract.ReasonExhausted},
		{".NET", "gave up after 3 attempt(s): timed out", contract.ReasonExhausted},
		{"this library", retry.Decision{Outcome: retry.Exhausted, Attempt: 1, MaxAttempts: 1}.Reason() + ": timed out", contract.ReasonExhausted},

		{"Java", "exceeded the maximum message age of PT2M: java.util.concurrent.TimeoutException: slow", contract.ReasonTooOld},
		{"Go peer", "exceeded the maximum message age of 2m0s: slow", contract.ReasonTooOld},
		{"Ruby", "gave up on a message older than 120.0 seconds: slow", contract.ReasonTooOld},
		{"Python", "exceeded the maximum message age of 0:02:00: TimeoutError: slow", contract.ReasonTooOld},
		{".NET", "gave up on a message older than 00:02:00: slow", contract.ReasonTooOld},
		{"this library", retry.Decision{Outcome: retry.TooOld, MaxMessageAge: 2 * time.Minute}.Reason() + ": slow", contract.ReasonTooOld},

		// Java writes this for a rejection and for a fatal error alike, the
		// Go peer for a fatal error: classed rejected, after Java.
		{"Java, rejected or fatal", "the handler reported an unprocessable message: com.acme.InvalidOrder: no sku", contract.ReasonRejected},
		{"Go peer, fatal", "the handler reported an unprocessable message: schema v9 unknown", contract.ReasonRejected},
		{"Go peer", "the handler rejected it: no sku", contract.ReasonRejected},
		{"Ruby", "rejected by the handler: no sku", contract.ReasonRejected},
		{"Python", "the handler rejected it: InvalidOrder: no sku", contract.ReasonRejected},

		{"Ruby", "retrying cannot help: schema v9 unknown", contract.ReasonFatal},
		{"this library, Fatal(nil)", "fatal error", contract.ReasonFatal},

		{"Go peer", "the handler parked it: needs a person", contract.ReasonParked},

		{"Java, Go peer, Python, this library", "could not be decoded: invalid character 'o' looking for beginning of value", contract.ReasonUndecodable},
		{"Ruby", "could not be decoded: unexpected token at 'order 9'", contract.ReasonUndecodable},
		{".NET", "could not decode as OrderCreated: 'o' is an invalid start of a value", contract.ReasonUndecodable},

		{"Go peer, .NET", "an interceptor refused it: tenant suspended", contract.ReasonInterceptor},

		{"this library", "handler panicked: runtime error: index out of range [3] with length 3", contract.ReasonPanicked},
		{"this library", "the handler returned no decision", contract.ReasonNoDecision},
	}
	for _, tt := range tests {
		for _, queue := range []string{"orders.new.dlq", "orders.new.parked"} {
			t.Run(tt.who+" in "+queue+": "+tt.text, func(t *testing.T) {
				msg := transport.Message{Headers: transport.Table{contract.HeaderError: tt.text}}
				if got, want := deadletter.ReasonOf(queue, msg), (deadletter.Reason{Text: tt.text, Class: tt.want}); got != want {
					t.Errorf("ReasonOf = %+v, want %+v", got, want)
				}
			})
		}
	}
}

// One row per cell of the table of CONTRACT.md section 20, its example
// text with N, Type, msg and "…" filled in, in Q.dlq and Q.parked alike.
// The cells marked "—" (no such text) have no row: rejected by .NET, fatal
// by Python and .NET, parked by all but the Go peer, an interceptor's
// refusal by Java, Ruby and Python.
//
// Two cells of the fatal row are texts of the rejected row: Java's ("same
// as rejected") and the Go peer's (Java's rejection text). A text cannot
// say which it was, so both are classed rejected, after Java, the
// reference.
func TestReasonOfEveryCellOfSection20(t *testing.T) {
	tests := []struct {
		row, column, text string
		want              contract.ReasonClass
	}{
		{"exhausted", "Java", "exhausted 3 attempts: java.io.IOException: connection reset", contract.ReasonExhausted},
		{"exhausted", "Go peer", "exhausted 3 attempts: connection reset", contract.ReasonExhausted},
		{"exhausted", "Go peer (singular for 1)", "exhausted 1 attempt: connection reset", contract.ReasonExhausted},
		{"exhausted", "Ruby", "gave up after 3 attempts: Timeout::Error", contract.ReasonExhausted},
		{"exhausted", "Python", "exhausted 3 attempt(s): TimeoutError: timed out", contract.ReasonExhausted},
		{"exhausted", ".NET", "gave up after 3 attempt(s): timed out", contract.ReasonExhausted},

		{"too old", "Java", "exceeded the maximum message age of PT2M: java.util.concurrent.TimeoutException: slow", contract.ReasonTooOld},
		{"too old", "Go peer", "exceeded the maximum message age of 2m0s: slow", contract.ReasonTooOld},
		{"too old", "Ruby", "gave up on a message older than 120.0 seconds: slow", contract.ReasonTooOld},
		{"too old", "Python", "exceeded the maximum message age of 0:02:00: TimeoutError: slow", contract.ReasonTooOld},
		{"too old", ".NET", "gave up on a message older than 00:02:00: slow", contract.ReasonTooOld},

		{"rejected", "Java", "the handler reported an unprocessable message: com.acme.InvalidOrder: no sku", contract.ReasonRejected},
		{"rejected", "Go peer", "the handler rejected it: no sku", contract.ReasonRejected},
		{"rejected", "Ruby", "rejected by the handler: no sku", contract.ReasonRejected},
		{"rejected", "Python", "the handler rejected it: InvalidOrder: no sku", contract.ReasonRejected},

		{"fatal", "Java (same as rejected)", "the handler reported an unprocessable message: com.acme.SchemaUnknown: v9", contract.ReasonRejected},
		{"fatal", "Go peer", "the handler reported an unprocessable message: schema v9 unknown", contract.ReasonRejected},
		{"fatal", "Ruby", "retrying cannot help: schema v9 unknown", contract.ReasonFatal},

		{"parked by handler", "Go peer", "the handler parked it: needs a person", contract.ReasonParked},

		{"undecodable", "Java", "could not be decoded: com.fasterxml.jackson.core.JsonParseException: Unrecognized token 'order'", contract.ReasonUndecodable},
		{"undecodable", "Go peer (same)", "could not be decoded: invalid character 'o' looking for beginning of value", contract.ReasonUndecodable},
		{"undecodable", "Ruby (same, message only)", "could not be decoded: unexpected token at 'order 9'", contract.ReasonUndecodable},
		{"undecodable", "Python (same)", "could not be decoded: JSONDecodeError: Expecting value: line 1 column 1 (char 0)", contract.ReasonUndecodable},
		{"undecodable", ".NET", "could not decode as OrderCreated: 'o' is an invalid start of a value", contract.ReasonUndecodable},

		{"interceptor", "Go peer", "an interceptor refused it: tenant suspended", contract.ReasonInterceptor},
		{"interceptor", ".NET", "an interceptor refused it: tenant suspended", contract.ReasonInterceptor},
	}
	for _, tt := range tests {
		for _, queue := range []string{"orders.new.dlq", "orders.new.parked"} {
			t.Run(tt.row+", "+tt.column+", in "+queue, func(t *testing.T) {
				msg := transport.Message{Headers: transport.Table{contract.HeaderError: tt.text}}
				if got, want := deadletter.ReasonOf(queue, msg), (deadletter.Reason{Text: tt.text, Class: tt.want}); got != want {
					t.Errorf("ReasonOf = %+v, want %+v", got, want)
				}
			})
		}
	}
}

// A text no template matches is a handler's error as this library writes
// it: Reject's or Fatal's in Q.dlq, Park's in Q.parked.
func TestReasonOfABareHandlerError(t *testing.T) {
	for queue, want := range map[string]contract.ReasonClass{
		"orders.new.dlq":    contract.ReasonRejected,
		"orders.new.parked": contract.ReasonParked,
		"orders.new":        contract.ReasonUnknown,
		"":                  contract.ReasonUnknown,
	} {
		msg := transport.Message{Headers: transport.Table{contract.HeaderError: "card declined"}}
		if got := deadletter.ReasonOf(queue, msg); got != (deadletter.Reason{Text: "card declined", Class: want}) {
			t.Errorf("ReasonOf(%q) = %+v, want class %q", queue, got, want)
		}
	}
}

// The dead-lettering headers of RabbitMQ 3.10.8 and 4.0.5, as the brokers
// wrote them (measured with a quorum queue of x-delivery-limit 2 nacked
// with requeue, classic queues with x-max-length 1, x-message-ttl, a
// per-message expiration, and a reject without requeue), and what the broker
// wrote on top of a message a client had published with headers of an
// earlier dead-lettering (a replayed dead letter).
func TestReasonOfWhatTheBrokerDeadLettered(t *testing.T) {
	at := time.Date(2026, 12, 1, 13, 57, 4, 0, time.UTC)
	death := func(queue, reason string) transport.Table {
		return transport.Table{"count": int64(1), "exchange": "", "queue": queue, "reason": reason,
			"routing-keys": []any{queue}, "time": at}
	}
	v310 := func(queue, reason string, more ...transport.Table) transport.Table {
		return transport.Table{
			contract.HeaderID: "m-1",
			"x-death":         append([]any{death(queue, reason)}, anys(more)...),
			// x-first-death-* is set once, by the first dead-lettering.
			"x-first-death-exchange": "", "x-first-death-queue": queue, "x-first-death-reason": reason,
		}
	}
	v40 := func(queue, reason string) transport.Table {
		h := v310(queue, reason)
		h["x-last-death-exchange"], h["x-last-death-queue"], h["x-last-death-reason"] = "", queue, reason
		return h
	}
	const (
		deliveryLimit = "the broker dead-lettered it from orders.new (delivery_limit): returned to the queue more times than its delivery limit (x-delivery-limit) allows"
		maxlen        = "the broker dead-lettered it from orders.new (maxlen): the queue was at its length limit (x-max-length or x-max-length-bytes)"
		expired       = "the broker dead-lettered it from orders.new (expired): its time-to-live ran out in the queue (x-message-ttl or the message's expiration)"
		rejected      = "the broker dead-lettered it from orders.new (rejected): a consumer rejected it without requeueing it (basic.reject or basic.nack)"
	)
	expiration := func(h transport.Table) transport.Table {
		h["x-death"].([]any)[0].(transport.Table)["original-expiration"] = "10"
		return h
	}
	rungHop := death("orders.new.retry.40s", "expired")
	tests := []struct {
		name    string
		headers transport.Table
		want    deadletter.Reason
	}{
		{"3.10 delivery limit", v310("orders.new", "delivery_limit"), deadletter.Reason{Text: deliveryLimit, Class: contract.ReasonDeliveryLimit}},
		{"4.0 delivery limit", v40("orders.new", "delivery_limit"), deadletter.Reason{Text: deliveryLimit, Class: contract.ReasonDeliveryLimit}},
		{"3.10 length limit", v310("orders.new", "maxlen"), deadletter.Reason{Text: maxlen, Class: contract.ReasonMaxLength}},
		{"4.0 length limit", v40("orders.new", "maxlen"), deadletter.Reason{Text: maxlen, Class: contract.ReasonMaxLength}},
		{"3.10 queue TTL", v310("orders.new", "expired"), deadletter.Reason{Text: expired, Class: contract.ReasonExpired}},
		{"4.0 queue TTL", v40("orders.new", "expired"), deadletter.Reason{Text: expired, Class: contract.ReasonExpired}},
		{"3.10 message expiration", expiration(v310("orders.new", "expired")), deadletter.Reason{Text: expired, Class: contract.ReasonExpired}},
		{"4.0 message expiration", expiration(v40("orders.new", "expired")), deadletter.Reason{Text: expired, Class: contract.ReasonExpired}},
		{"3.10 reject without requeue", v310("orders.new", "rejected"), deadletter.Reason{Text: rejected, Class: contract.ReasonRejected}},
		{"4.0 reject without requeue", v40("orders.new", "rejected"), deadletter.Reason{Text: rejected, Class: contract.ReasonRejected}},

		// A message that came home from a rung, then hit the delivery limit:
		// the latest death, not the first, says why.
		{"3.10 delivery limit after a rung", func() transport.Table {
			h := v310("orders.new", "delivery_limit", rungHop)
			h["x-first-death-queue"], h["x-first-death-reason"] = "orders.new.retry.40s", "expired"
			return h
		}(), deadletter.Reason{Text: deliveryLimit, Class: contract.ReasonDeliveryLimit}},
		// 3.10 keeps the x-last-death-* a client published (a replay of a
		// newer broker's dead letter) and puts its own death first in
		// x-death.
		{"3.10 under a client's x-last-death", func() transport.Table {
			h := v310("orders.new", "delivery_limit", rungHop)
			h["x-first-death-queue"], h["x-first-death-reason"] = "orders.new.retry.40s", "expired"
			h["x-last-death-queue"], h["x-last-death-reason"] = "orders.new.retry.40s", "expired"
			return h
		}(), deadletter.Reason{Text: deliveryLimit, Class: contract.ReasonDeliveryLimit}},
		{"x-last-death without x-death", transport.Table{"x-last-death-queue": "orders.new", "x-last-death-reason": "maxlen", "x-first-death-queue": "orders.new", "x-first-death-reason": "expired"},
			deadletter.Reason{Text: maxlen, Class: contract.ReasonMaxLength}},
		{"x-first-death alone", transport.Table{"x-first-death-queue": []byte("orders.new"), "x-first-death-reason": []byte("expired")},
			deadletter.Reason{Text: expired, Class: contract.ReasonExpired}},
		{"an x-death entry without a reason", transport.Table{"x-death": []any{transport.Table{"queue": "orders.new"}}, "x-first-death-queue": "orders.new", "x-first-death-reason": "rejected"},
			deadletter.Reason{Text: rejected, Class: contract.ReasonRejected}},
		{"a reason RabbitMQ may add one day", v40("orders.new", "quarantined"),
			deadletter.Reason{Text: "the broker dead-lettered it from orders.new (quarantined): a reason this library does not know", Class: contract.ReasonUnknown}},
		{"no queue", transport.Table{"x-death": []any{transport.Table{"reason": "delivery_limit"}}},
			deadletter.Reason{Text: "the broker dead-lettered it (delivery_limit): returned to the queue more times than its delivery limit (x-delivery-limit) allows", Class: contract.ReasonDeliveryLimit}},
		{"nothing says why", transport.Table{contract.HeaderID: "m-1"}, deadletter.Reason{Class: contract.ReasonUnknown}},
		{"no headers at all", nil, deadletter.Reason{Class: contract.ReasonUnknown}},
		// An AceMQ set-aside after rung hops: x-acemq-error says why.
		{"x-acemq-error over x-death", func() transport.Table {
			h := v40("orders.new.retry.40s", "expired")
			h[contract.HeaderError] = "exhausted 4 attempts: card declined"
			return h
		}(), deadletter.Reason{Text: "exhausted 4 attempts: card declined", Class: contract.ReasonExhausted}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, queue := range []string{"orders.new.dlq", "orders.new.parked"} {
				if got := deadletter.ReasonOf(queue, transport.Message{Headers: tt.headers}); got != tt.want {
					t.Errorf("ReasonOf(%s) = %+v\nwant %+v", queue, got, tt.want)
				}
			}
		})
	}
	// Outside Q.dlq and Q.parked, x-death is a message's history (a rung
	// hop, a replayed dead letter's), not why it is there.
	if got := deadletter.ReasonOf("orders.new", transport.Message{Headers: v40("orders.new.retry.40s", "expired")}); got != (deadletter.Reason{}) {
		t.Errorf("ReasonOf(orders.new) of a message home from a rung = %+v, want none", got)
	}
}

func anys(ts []transport.Table) []any {
	out := make([]any, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}

// What this library's consumer writes when it sets messages aside is
// classed as the consumer classed it.
func TestReasonOfThisLibrarysSetAsides(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	tr := conn.Transport()
	ctx := t.Context()
	source := "orders.new"
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: source, Type: transport.Quorum, Durable: true}); err != nil {
		t.Fatal(err)
	}
	type order struct{ Do string }
	policy, err := acemq.ParsePolicy("fixed(2, 1s).giveUpAfter(1m)")
	if err != nil {
		t.Fatal(err)
	}
	c, err := acemq.Consume(ctx, conn, source, func(_ context.Context, m acemq.Message[order]) acemq.Decision {
		switch m.Body.Do {
		case "reject":
			return acemq.Reject(errors.New("no sku"))
		case "fatal":
			return acemq.Retry(acemq.Fatal(errors.New("schema v9 unknown")))
		case "fatal without error":
			return acemq.Retry(acemq.Fatal(nil))
		case "park":
			return acemq.Park(errors.New("needs a person"))
		case "panic":
			panic("boom")
		case "nothing":
			return acemq.Decision{}
		}
		return acemq.Retry(errors.New("slow"))
	}, acemq.WithPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })

	young, old := b.Clock.Now().UnixMilli(), b.Clock.Now().Add(-time.Hour).UnixMilli()
	sent := []struct {
		do        string
		attempt   int64
		firstSeen int64
		body      string
		in        string
		want      contract.ReasonClass
	}{
		{"reject", 1, young, "", contract.DeadLetterQueue(source), contract.ReasonRejected},
		{"fatal", 1, young, "", contract.DeadLetterQueue(source), contract.ReasonRejected}, // the bare error: as a rejection's
		{"fatal without error", 1, young, "", contract.DeadLetterQueue(source), contract.ReasonFatal},
		{"park", 1, young, "", contract.ParkedQueue(source), contract.ReasonParked},
		{"panic", 1, young, "", contract.DeadLetterQueue(source), contract.ReasonPanicked},
		{"nothing", 1, young, "", contract.DeadLetterQueue(source), contract.ReasonNoDecision},
		{"retry", 2, young, "", contract.DeadLetterQueue(source), contract.ReasonExhausted},
		{"retry", 1, old, "", contract.DeadLetterQueue(source), contract.ReasonTooOld},
		{"", 1, young, "order 9, not JSON {", contract.ParkedQueue(source), contract.ReasonUndecodable},
	}
	for i, s := range sent {
		body := s.body
		if body == "" {
			body = fmt.Sprintf(`{"Do":%q}`, s.do)
		}
		id := fmt.Sprintf("m-%d", i)
		publish(t, tr, source, transport.Message{MessageID: id, ContentType: "application/json", Persistent: true, Body: []byte(body),
			Headers: transport.Table{contract.HeaderID: id, contract.HeaderAttempt: s.attempt, contract.HeaderFirstSeen: s.firstSeen}})
	}
	acemqtest.WaitFor(t, c, "every message set aside", func(s acemq.Stats) bool { return s.DeadLettered+s.Parked == int64(len(sent)) })

	got := map[string]deadletter.Reason{}
	for _, q := range []string{contract.DeadLetterQueue(source), contract.ParkedQueue(source)} {
		for _, m := range b.Messages(t, q) {
			got[m.Envelope.ID] = deadletter.ReasonOf(q, transport.Message{Headers: m.Headers})
			if m.Envelope.Error == "" {
				t.Errorf("%s in %s has no x-acemq-error", m.Envelope.ID, q)
			}
		}
	}
	for i, s := range sent {
		id := fmt.Sprintf("m-%d", i)
		if r, ok := got[id]; !ok || r.Class != s.want {
			t.Errorf("%s (%s, attempt %d) was set aside with %+v, want it in %s, class %q", id, s.do, s.attempt, r, s.in, s.want)
		}
	}
	if want := []string{"m-3", "m-8"}; !slices.Equal(ids(deliverytest.TakeAll(t, tr, contract.ParkedQueue(source))), want) {
		t.Errorf("%s does not hold %v alone", contract.ParkedQueue(source), want)
	}
}

// Match expressions see the reason as ReasonOf gives it, and its class,
// which depends on the queue the message is in.
func TestMatchReadsTheReasonAndItsClass(t *testing.T) {
	now := firstSeen.Add(30 * time.Minute)
	byBroker := transport.Message{Headers: transport.Table{contract.HeaderFirstSeen: firstSeen.UnixMilli(),
		"x-death": []any{transport.Table{"queue": "orders.new", "reason": "delivery_limit"}}}}
	bare := transport.Message{Headers: transport.Table{contract.HeaderFirstSeen: firstSeen.UnixMilli(), contract.HeaderError: "card declined"}}
	tests := []struct {
		expression string
		queue      string
		msg        transport.Message
		want       bool
	}{
		{`reasonClass == "delivery_limit"`, "orders.new.dlq", byBroker, true},
		{`reasonClass == "delivery_limit"`, "orders.new", byBroker, false}, // not set aside
		{`reason contains "delivery limit" && reason contains "from orders.new"`, "orders.new.dlq", byBroker, true},
		{`reasonClass == "rejected"`, "orders.new.dlq", bare, true},
		{`reasonClass == "parked"`, "orders.new.parked", bare, true},
		{`reasonClass in ["exhausted", "too_old"] && age < duration("1h")`, "orders.new.dlq", deadLetter(1), true},
		{`reasonClass in ["exhausted", "too_old"] && age < duration("1h")`, "orders.new.dlq", bare, false},
	}
	for _, tt := range tests {
		m, err := deadletter.Compile(tt.expression)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := m.Match(tt.queue, tt.msg, now); err != nil || got != tt.want {
			t.Errorf("%s in %s: %v, %v; want %v", tt.expression, tt.queue, got, err, tt.want)
		}
	}
}

func TestSummary(t *testing.T) {
	for _, c := range []struct {
		op     string
		dryRun bool
		p      deadletter.Progress
		want   string
	}{
		{"replay", false, deadletter.Progress{Total: 100, Taken: 100, Moved: 100}, "q.dlq: replayed 100 of the 100 messages taken (the queue held 100); 0 left in place"},
		{"park", true, deadletter.Progress{Total: 3, Taken: 1, Moved: 1}, "q.dlq: would park 1 of the 1 message taken (the queue held 3); 0 left in place"},
		{"import", false, deadletter.Progress{Taken: 5, Moved: 3, Left: 1, Doubtful: 1}, "q.dlq: imported 3 of the 5 messages taken; 1 left in place; 1 may be in both places (their move's outcome was lost with the connection)"},
	} {
		if got := deadletter.Summary(c.op, "q.dlq", c.dryRun, c.p); got != c.want {
			t.Errorf("Summary(%s, %+v) = %q, want %q", c.op, c.p, got, c.want)
		}
	}
}
