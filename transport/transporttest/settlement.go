package transporttest

import (
	"maps"

	"github.com/acemq-go/acemq/transport"
)

// What the settlement engine relies on (CONTRACT.md section 7): republishing
// a delivery by queue name through the default exchange, mandatory and
// confirmed, before acking it; and retry rungs, classic queues whose TTL
// dead-letters a message back to its source through the retry exchange.
func settlementBehaviours() []behaviour {
	return []behaviour{
		{"republish by queue name then ack moves the message", republishThenAck},
		{"a republish that comes back unroutable leaves the original to requeue", republishUnroutable},
		{"a rung returns the message to its source after its TTL", rungReturns},
		{"a rung whose source is not bound to the retry exchange drops the message", rungWithoutBinding},
		{"a second trip through a rung counts 2 in x-death", rungTwice},
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
	e.ok("republish", e.republish(d, target, transport.Table{"x-acemq-error": "rejected by the handler"}))
	e.ok("Ack", d.Ack())
	// A quorum queue settles through its log: wait to see it.
	e.waitState(src, 0, 0)
	e.empty(src)
	e.wantState(target, 1, 0)
	got := e.mustGet(target)
	want := msg
	want.Headers = maps.Clone(msg.Headers)
	want.Headers["x-acemq-error"] = "rejected by the handler"
	// Every header is kept, the quorum source's delivery count too.
	want.Headers["x-delivery-count"] = int64(0)
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
	err := e.republish(d, missing, transport.Table{"x-acemq-attempt": int64(2)})
	e.wantErr("republish to a missing queue", err, transport.ErrUnroutable)
	e.ok("Nack(requeue) the original", d.Nack(true))
	e.waitState(src, 1, 0)
	d = e.getBody(src, "m")
	if !d.Redelivered || d.Headers["x-delivery-count"] != int64(1) {
		e.t.Errorf("the requeued original: redelivered=%v, x-delivery-count %#v; want true, int64(1)", d.Redelivered, d.Headers["x-delivery-count"])
	}
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
		"x-message-ttl":             ttl,
		"x-dead-letter-exchange":    retry,
		"x-dead-letter-routing-key": src,
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
	e.ok("republish to the rung", e.republish(d, rung, transport.Table{"x-acemq-attempt": int64(4)}))
	e.ok("Ack", d.Ack())
	e.waitState(src, 0, 0)

	back := e.waitGet(src)
	if back.Exchange != retry || back.RoutingKey != src || back.Redelivered {
		e.t.Errorf("back from the rung through %q under %q redelivered=%v, want %q under %q, fresh", back.Exchange, back.RoutingKey, back.Redelivered, retry, src)
	}
	want := msg
	want.Headers = maps.Clone(msg.Headers)
	want.Headers["x-acemq-attempt"] = int64(4)
	want.Headers["x-delivery-count"] = int64(0) // the quorum source's, again
	got := back.Message
	e.wantDeaths("back from the rung", got.Headers, want.Headers,
		[]death{{queue: rung, reason: "expired", exchange: "", routingKeys: []string{rung}, count: 1}},
		death{queue: rung, reason: "expired", exchange: ""})
	got.Headers = maps.Clone(got.Headers)
	for _, k := range []string{"x-death", "x-first-death-exchange", "x-first-death-queue", "x-first-death-reason"} {
		delete(got.Headers, k)
	}
	e.wantMessage("back from the rung", got, want)
	e.ok("Ack", back.Ack())
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
// from the same rung increments its entry. (From RabbitMQ 3.13 it does not,
// which is why acemq counts attempts in x-acemq-attempt: CONTRACT.md.)
func rungTwice(e *env) {
	_, src, rung := e.rung(100, true)
	e.sendBody(src, "m")
	for attempt := int64(2); attempt <= 3; attempt++ {
		d := e.waitGet(src)
		e.ok("republish to the rung", e.republish(d, rung, transport.Table{"x-acemq-attempt": attempt}))
		e.ok("Ack", d.Ack())
	}
	back := e.waitGet(src)
	e.wantDeaths("after two trips", back.Headers, transport.Table{"x-acemq-attempt": int64(3), "x-delivery-count": int64(0)},
		[]death{{queue: rung, reason: "expired", exchange: "", routingKeys: []string{rung}, count: 2}},
		death{queue: rung, reason: "expired", exchange: ""})
	e.ok("Ack", back.Ack())
	e.waitState(src, 0, 0)
}
