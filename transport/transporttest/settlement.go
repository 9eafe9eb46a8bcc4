package transporttest

import (
	"maps"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// What the settlement engine relies on (CONTRACT.md section 7): republishing
// a delivery by queue name through the default exchange, mandatory and
// confirmed, before acking it; and retry rungs, classic queues whose TTL
// dead-letters a message back to its source through the retry exchange, or
// at-least-once rungs, quorum queues that dead-letter at least once.
func settlementBehaviours() []behaviour {
	return []behaviour{
		{"republish by queue name then ack moves the message", republishThenAck},
		{"a republish that comes back unroutable leaves the original to requeue", republishUnroutable},
		{"a rung returns the message to its source after its TTL", rungReturns},
		{"a rung whose source is not bound to the retry exchange drops the message", rungWithoutBinding},
		{"a second trip through a rung counts in x-death on RabbitMQ 3.10 only", rungTwice},
		{"an at-least-once rung is declared again alike, and not as a classic rung", atLeastOnceRungDeclared},
		{"an at-least-once rung returns the message to its source after its TTL", atLeastOnceRungReturns},
		{"an at-least-once rung keeps an unroutable message until its source is bound", atLeastOnceRungUnroutable},
	}
}

// republish sends d's message to queue the way the settlement engine does:
// default exchange, the queue's name, mandatory, persistent, confirmed;
// body, content type, message id, reply-to and every header kept, plus
// extra headers.
func (e *env) republish(d transport.Delivery, queue string, extra transport.Table) error {
	e.t.Helper()
	m := d.Message
	m.Headers = maps.Clone(d.Headers)
	if m.Headers == nil {
		m.Headers = transport.Table{}
	}
	maps.Copy(m.Headers, extra)
	m.Persistent = true
	return e.publish(transport.Publishing{Exchange: "", RoutingKey: queue, Mandatory: true, Message: m})
}

func republishThenAck(e *env) {
	src := e.declareQueue(transport.Queue{Name: e.name("src"), Type: transport.Quorum, Durable: true})
	target := e.classic("dlq", nil)
	msg := richMessage()
	e.send(src, msg)
	d := e.mustGet(src)
	e.ok("republish", e.republish(d, target, transport.Table{contract.HeaderError: "no sku"}))
	e.ok("Ack", d.Ack())
	// A quorum queue settles through its log: wait to see it.
	e.waitState(src, 0, 0)
	e.empty(src)
	e.wantState(target, 1, 0)
	got := e.mustGet(target)
	want := msg
	want.Headers = maps.Clone(msg.Headers)
	want.Headers[contract.HeaderError] = "no sku"
	// Every header is kept, the quorum source's delivery count too (which
	// RabbitMQ 3.10 writes on every basic.get).
	e.quorumGetCount(want.Headers, 0, 0)
	e.wantMessage("republished message", got.Message, want)
	if got.Exchange != "" || got.RoutingKey != target || got.Redelivered {
		e.t.Errorf("republished message from %q under %q redelivered=%v, want \"\" under %q, fresh", got.Exchange, got.RoutingKey, got.Redelivered, target)
	}
	e.ok("Ack", got.Ack())
}

func republishUnroutable(e *env) {
	src := e.declareQueue(transport.Queue{Name: e.name("src"), Type: transport.Quorum, Durable: true})
	e.sendBody(src, "m")
	d := e.getBody(src, "m")
	missing := e.name("missing-rung")
	err := e.republish(d, missing, transport.Table{contract.HeaderAttempt: int64(2)})
	e.wantErr("republish to a missing queue", err, transport.ErrUnroutable)
	e.ok("Nack(requeue) the original", d.Nack(true))
	e.waitState(src, 1, 0)
	// Counted as a return (on RabbitMQ 4.3 a nack is no failed delivery).
	d = e.getBody(src, "m")
	e.wantReturns("the requeued original", d, 1, 0)
	e.ok("Ack", d.Ack())
}

// rung declares the retry exchange (a test's own, not acemq.retry, so that
// tests do not share it), a source queue bound to it under its own name
// (unless bindSource is false) and a rung for it: classic, durable, exactly
// x-message-ttl, x-dead-letter-exchange and x-dead-letter-routing-key.
func (e *env) rung(ttl int64, bindSource bool) (retry, src, rung string) {
	e.t.Helper()
	retry = e.exchange("retry", transport.Direct)
	src = e.declareQueue(transport.Queue{Name: e.name("src"), Type: transport.Quorum, Durable: true})
	if bindSource {
		e.bind(src, retry, src)
	}
	rung = e.declareQueue(transport.Queue{Name: e.name("rung"), Type: transport.Classic, Durable: true, Arguments: transport.Table{
		contract.ArgMessageTTL:           ttl,
		contract.ArgDeadLetterExchange:   retry,
		contract.ArgDeadLetterRoutingKey: src,
	}})
	return retry, src, rung
}

// The broker-side wait of CONTRACT.md sections 2 and 7: a delivery from the
// source is republished to the rung with the attempt one higher and acked;
// after the rung's TTL it is back in the source, delivered through the retry
// exchange under the source's name, with the rung's x-death.
func rungReturns(e *env) {
	retry, src, rung := e.rung(200, true)
	msg := richMessage()
	e.send(src, msg)
	d := e.mustGet(src)
	e.ok("republish to the rung", e.republish(d, rung, transport.Table{contract.HeaderAttempt: int64(4)}))
	e.ok("Ack", d.Ack())
	e.waitState(src, 0, 0)

	want := msg
	want.Headers = maps.Clone(msg.Headers)
	want.Headers[contract.HeaderAttempt] = int64(4)
	e.wantBackFromRung(src, retry, rung, want)
	e.wantState(rung, 0, 0)
	e.waitState(src, 0, 0)
}

// CONTRACT.md section 2: without the source's binding to the retry exchange
// an expired message is dropped silently.
func rungWithoutBinding(e *env) {
	_, src, rung := e.rung(100, false)
	e.sendBody(rung, "lost")
	e.waitMessages(rung, 0)
	e.empty(rung)
	e.wantState(src, 0, 0)
}

// RabbitMQ 3.10 honours an x-death a client republished: the second expiry
// from the same rung increments its entry. From RabbitMQ 3.13 it does not:
// the broker counts only the deaths it saw itself, and a republish is a new
// message, so the count stays 1 (which is why acemq counts attempts in
// x-acemq-attempt: CONTRACT.md).
func rungTwice(e *env) {
	_, src, rung := e.rung(100, true)
	e.sendBody(src, "m")
	for attempt := int64(2); attempt <= 3; attempt++ {
		d := e.waitGet(src)
		e.ok("republish to the rung", e.republish(d, rung, transport.Table{contract.HeaderAttempt: attempt}))
		e.ok("Ack", d.Ack())
	}
	back := e.waitGet(src)
	app := transport.Table{contract.HeaderAttempt: int64(3)}
	e.quorumGetCount(app, 0, 0)
	expired := death{queue: rung, reason: contract.DeathReasonExpired, exchange: ""}
	e.wantDeaths("after two trips", back.Headers, app,
		[]death{{queue: rung, reason: contract.DeathReasonExpired, exchange: "", routingKeys: []string{rung}, count: since(e, 3, 13, int64(2), 1)}},
		expired, expired)
	e.ok("Ack", back.Ack())
	e.waitState(src, 0, 0)
}

// settleTimeout is RabbitMQ's default
// dead_letter_worker_publisher_confirm_timeout: an at-least-once queue's
// dead-letter worker tries again this often to route what it could not.
const settleTimeout = 3 * time.Minute

// atLeastOnceRung is the queue of an at-least-once rung of src on retry:
// quorum, durable, exactly x-message-ttl (a long), x-dead-letter-exchange,
// x-dead-letter-routing-key, x-dead-letter-strategy at-least-once and
// x-overflow reject-publish (without which RabbitMQ dead-letters at most
// once).
func (e *env) atLeastOnceRung(ttl int64, retry, src string) transport.Queue {
	return transport.Queue{Name: e.name("rung"), Type: transport.Quorum, Durable: true, Arguments: transport.Table{
		contract.ArgMessageTTL:           ttl,
		contract.ArgDeadLetterExchange:   retry,
		contract.ArgDeadLetterRoutingKey: src,
		contract.ArgDeadLetterStrategy:   contract.DeadLetterAtLeastOnce,
		contract.ArgOverflow:             contract.OverflowRejectPublish,
	}}
}

// Declaring an at-least-once rung again alike succeeds. Declaring a classic
// rung of its name (CONTRACT.md section 2), or a quorum one without the
// strategy or the overflow, is 406 PRECONDITION_FAILED naming the first
// argument that differs in the order RabbitMQ compares them; so is
// declaring the at-least-once rung over a classic rung.
func atLeastOnceRungDeclared(e *env) {
	retry := e.exchange("retry", transport.Direct)
	src := e.name("src")
	rung := e.atLeastOnceRung(60_000, retry, src)
	e.declareQueue(rung)
	e.ok("declaring it again", e.tr.DeclareQueue(e.ctx, rung))
	without := func(arg string) transport.Queue {
		q := rung
		q.Arguments = maps.Clone(rung.Arguments)
		delete(q.Arguments, arg)
		return q
	}
	classic := transport.Queue{Name: rung.Name, Type: transport.Classic, Durable: true, Arguments: transport.Table{
		contract.ArgMessageTTL: int64(60_000), contract.ArgDeadLetterExchange: retry, contract.ArgDeadLetterRoutingKey: src}}
	for _, tt := range []struct {
		what string
		q    transport.Queue
		arg  string
	}{
		{"as a classic rung", classic, contract.ArgDeadLetterStrategy},
		{"without x-dead-letter-strategy", without(contract.ArgDeadLetterStrategy), contract.ArgDeadLetterStrategy},
		{"without x-overflow", without(contract.ArgOverflow), contract.ArgOverflow},
	} {
		err := e.tr.DeclareQueue(e.ctx, tt.q)
		e.wantErr("declaring the at-least-once rung again "+tt.what, err, transport.ErrPreconditionFailed, rung.Name, "'"+tt.arg+"'")
	}
	e.ok("declaring it again after the refusals", e.tr.DeclareQueue(e.ctx, rung))

	classic.Name = e.name("rung")
	e.declareQueue(classic)
	over := rung
	over.Name = classic.Name
	err := e.tr.DeclareQueue(e.ctx, over)
	e.wantErr("declaring an at-least-once rung over a classic one", err, transport.ErrPreconditionFailed, classic.Name, "'x-overflow'")
	e.ok("declaring the classic rung again", e.tr.DeclareQueue(e.ctx, classic))
}

// A message published to an at-least-once rung that nothing consumes
// expires after the TTL and reaches its source through the retry exchange
// under the source's name, with x-death and x-first-death-* (and from
// RabbitMQ 3.13 x-last-death-*) as from a classic rung: reason expired, the
// rung's queue.
func atLeastOnceRungReturns(e *env) {
	retry := e.exchange("retry", transport.Direct)
	src := e.declareQueue(transport.Queue{Name: e.name("src"), Type: transport.Quorum, Durable: true})
	e.bind(src, retry, src)
	rung := e.declareQueue(e.atLeastOnceRung(200, retry, src))
	msg := richMessage()
	msg.Headers[contract.HeaderAttempt] = int64(2)
	e.send(rung, msg)
	e.wantBackFromRung(src, retry, rung, msg)
	e.waitState(rung, 0, 0)
}

// wantBackFromRung takes the message that came back to src from rung
// through retry, which must be msg with the rung's death, and acks it.
func (e *env) wantBackFromRung(src, retry, rung string, msg transport.Message) {
	e.t.Helper()
	back := e.waitGet(src)
	if back.Exchange != retry || back.RoutingKey != src || back.Redelivered {
		e.t.Errorf("back from the rung through %q under %q redelivered=%v, want %q under %q, fresh", back.Exchange, back.RoutingKey, back.Redelivered, retry, src)
	}
	want := msg
	want.Headers = transport.Table{}
	maps.Copy(want.Headers, msg.Headers)
	e.quorumGetCount(want.Headers, 0, 0)
	expired := death{queue: rung, reason: contract.DeathReasonExpired, exchange: ""}
	e.wantDeaths("back from the rung", back.Headers, want.Headers,
		[]death{{queue: rung, reason: contract.DeathReasonExpired, exchange: "", routingKeys: []string{rung}, count: 1}},
		expired, expired)
	got := back.Message
	got.Headers = withoutDeaths(got.Headers)
	e.wantMessage("back from the rung", got, want)
	e.ok("Ack", back.Ack())
}

// What a classic rung drops, an at-least-once rung keeps: a message that
// expires while its source is not bound to the retry exchange leaves the
// ready messages (InspectQueue and Get see nothing) but stays with the
// rung's dead-letter worker, which routes it again every settle timeout (3
// minutes on RabbitMQ 3.10 and 4.0 alike): once the source is bound, the
// message arrives, as it would have at its expiry.
func atLeastOnceRungUnroutable(e *env) {
	e.allow(settleTimeout + timeout)
	retry := e.exchange("retry", transport.Direct)
	src := e.declareQueue(transport.Queue{Name: e.name("src"), Type: transport.Quorum, Durable: true})
	rung := e.declareQueue(e.atLeastOnceRung(100, retry, src))
	msg := transport.Message{MessageID: "kept", Persistent: true, Body: []byte("kept")}
	e.send(rung, msg)
	e.waitMessages(rung, 0)
	e.empty(rung)
	e.wantState(src, 0, 0)
	e.bind(src, retry, src)
	e.wantBackFromRung(src, retry, rung, msg)
	e.wantState(rung, 0, 0)
	e.empty(src)
}
