package transporttest

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

func deadLetterBehaviours() []behaviour {
	return []behaviour{
		{"expired message dead-letters under x-dead-letter-routing-key", expiredWithRoutingKey},
		{"expired message dead-letters under its original routing key", expiredWithOriginalKey},
		{"x-death records the death as RabbitMQ writes it", xDeathShape},
		{"a second death in the same queue for the same reason increments count", xDeathCount},
		{"x-death keeps one entry per queue and reason, the latest first", xDeathOrder},
		{"per-message expiration dead-letters and records original-expiration", perMessageExpiration},
		{"the shorter of queue TTL and per-message expiration applies", shorterTTLApplies},
		{"a short expiration waits behind a long one at the head of the queue", headOfLine},
		{"reject and nack without requeue dead-letter with reason rejected", rejectDeadLetters},
		{"a dead letter of a message that failed before arrives redelivered on RabbitMQ 4.3", deadLetterAfterFailure},
		{"a quorum queue dead-letters rejected messages too", quorumRejectDeadLetters},
		{"a dead letter with nowhere to go is dropped", unroutableDeadLetterDropped},
		{"an expired message without a dead-letter exchange is dropped", expiredWithoutDLXDropped},
		{"a message keeps its properties and header types through dead-lettering", deadLetterKeepsMessage},
		{"a delivered message does not expire but dead-letters at once when requeued after its TTL", requeuedAfterTTL},
		{"expiration 0 reaches only a consumer waiting for it", expirationZero},
		{"messages expire while the consumer is full", expireWhileConsumerFull},
		{"an automatic dead-letter cycle is broken", deadLetterCycle},
		{"deleting or purging a queue dead-letters nothing", deleteAndPurgeDoNotDeadLetter},
		{"dead-lettering through the default exchange", deadLetterViaDefaultExchange},
		{"a message published with x-death headers dies", publishedDeaths},
	}
}

// dlxTarget declares a direct dead-letter exchange and a queue bound to it
// under key.
func (e *env) dlxTarget(key string) (exchange, queue string) {
	e.t.Helper()
	exchange = e.exchange("dlx", transport.Direct)
	queue = e.classic("dead", nil)
	e.bind(queue, exchange, key)
	return exchange, queue
}

// death is one x-death entry, as RabbitMQ writes it.
type death struct {
	queue, reason, exchange string
	routingKeys             []string
	count                   int64
	originalExpiration      string // "" when the message had none
}

// deathHeaders are the headers dead-lettering writes, those RabbitMQ 3.13
// added last.
var deathHeaders = []string{contract.HeaderDeath, contract.HeaderFirstDeathPrefix + "exchange", contract.HeaderFirstDeathPrefix + "queue", contract.HeaderFirstDeathPrefix + "reason",
	contract.HeaderLastDeathPrefix + "exchange", contract.HeaderLastDeathPrefix + "queue", contract.HeaderLastDeathPrefix + "reason"}

// wantDeaths asserts a dead-lettered message's headers: x-death holds want
// (latest first) in RabbitMQ's shape, x-first-death-* name the first death,
// x-last-death-* (RabbitMQ 3.13 and later) the last, with the exchange the
// message was in when it died (which x-death's entry for a queue and reason
// keeps from the first time), and every other header is in app.
func (e *env) wantDeaths(what string, h transport.Table, app transport.Table, want []death, first, last death) {
	e.t.Helper()
	for k, v := range app {
		if !reflect.DeepEqual(h[k], v) {
			e.t.Errorf("%s: header %s = %#v, want %#v", what, k, h[k], v)
		}
	}
	keys := slices.Sorted(maps.Keys(h))
	written := since(e, 3, 13, deathHeaders[:4], deathHeaders)
	wantKeys := slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(app)), written...)))
	if !slices.Equal(keys, wantKeys) {
		e.t.Errorf("%s: headers %q, want %q", what, keys, wantKeys)
	}
	names := map[string]string{contract.HeaderFirstDeathPrefix + "queue": first.queue, contract.HeaderFirstDeathPrefix + "reason": first.reason, contract.HeaderFirstDeathPrefix + "exchange": first.exchange}
	if e.v.atLeast(3, 13) {
		maps.Copy(names, map[string]string{contract.HeaderLastDeathPrefix + "queue": last.queue, contract.HeaderLastDeathPrefix + "reason": last.reason, contract.HeaderLastDeathPrefix + "exchange": last.exchange})
	}
	for k, v := range names {
		if got, ok := h[k].(string); !ok || got != v {
			e.t.Errorf("%s: %s = %#v, want the string %q", what, k, h[k], v)
		}
	}
	xd, ok := h[contract.HeaderDeath].([]any)
	if !ok {
		e.t.Errorf("%s: x-death is %T (%#v), want an array ([]any) of tables", what, h[contract.HeaderDeath], h[contract.HeaderDeath])
		return
	}
	if len(xd) != len(want) {
		e.t.Errorf("%s: x-death has %d entries, want %d: %#v", what, len(xd), len(want), xd)
		return
	}
	for i, w := range want {
		entry, ok := xd[i].(transport.Table)
		if !ok {
			e.t.Errorf("%s: x-death[%d] is %T, want a transport.Table", what, i, xd[i])
			continue
		}
		fields := []string{"count", "exchange", "queue", "reason", "routing-keys", "time"}
		if w.originalExpiration != "" {
			fields = append(fields, "original-expiration")
			slices.Sort(fields)
		}
		if got := slices.Sorted(maps.Keys(entry)); !slices.Equal(got, fields) {
			e.t.Errorf("%s: x-death[%d] has fields %q, want %q", what, i, got, fields)
		}
		if c, ok := entry["count"].(int64); !ok || c != w.count {
			e.t.Errorf("%s: x-death[%d] count = %#v, want int64(%d)", what, i, entry["count"], w.count)
		}
		for k, v := range map[string]string{"queue": w.queue, "reason": w.reason, "exchange": w.exchange} {
			if got, ok := entry[k].(string); !ok || got != v {
				e.t.Errorf("%s: x-death[%d] %s = %#v, want the string %q", what, i, k, entry[k], v)
			}
		}
		if w.originalExpiration != "" {
			if got, ok := entry["original-expiration"].(string); !ok || got != w.originalExpiration {
				e.t.Errorf("%s: x-death[%d] original-expiration = %#v, want the string %q", what, i, entry["original-expiration"], w.originalExpiration)
			}
		}
		wantKeys := make([]any, len(w.routingKeys))
		for j, k := range w.routingKeys {
			wantKeys[j] = k
		}
		if !reflect.DeepEqual(entry["routing-keys"], wantKeys) {
			e.t.Errorf("%s: x-death[%d] routing-keys = %#v, want %#v", what, i, entry["routing-keys"], wantKeys)
		}
		// An AMQP timestamp: whole seconds.
		if tm, ok := entry["time"].(time.Time); !ok || tm.IsZero() || !tm.Equal(tm.Truncate(time.Second)) {
			e.t.Errorf("%s: x-death[%d] time = %#v, want a timestamp (time.Time, whole seconds)", what, i, entry["time"])
		}
	}
}

func expiredWithRoutingKey(e *env) {
	dlx, dead := e.dlxTarget("dead.key")
	src := e.classic("src", transport.Table{contract.ArgMessageTTL: int64(100), contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "dead.key"})
	e.send(src, transport.Message{Body: []byte("m"), Headers: transport.Table{"h": "v"}})
	d := e.waitGet(dead)
	if string(d.Body) != "m" || d.Exchange != dlx || d.RoutingKey != "dead.key" {
		e.t.Errorf("dead letter %q from exchange %q under %q; want m from %q under dead.key", d.Body, d.Exchange, d.RoutingKey, dlx)
	}
	if d.Redelivered {
		e.t.Error("a dead letter is marked redelivered")
	}
	e.wantDeaths("dead letter", d.Headers, transport.Table{"h": "v"},
		[]death{{queue: src, reason: contract.DeathReasonExpired, exchange: "", routingKeys: []string{src}, count: 1}},
		death{queue: src, reason: contract.DeathReasonExpired, exchange: ""}, death{queue: src, reason: contract.DeathReasonExpired, exchange: ""})
	e.ok("Ack", d.Ack())
	e.wantState(src, 0, 0)
	e.empty(dead)
}

func expiredWithOriginalKey(e *env) {
	dlx, dead := e.dlxTarget("orders.new")
	x := e.exchange("orders", transport.Topic)
	src := e.classic("src", transport.Table{contract.ArgMessageTTL: int64(100), contract.ArgDeadLetterExchange: dlx})
	e.bind(src, x, "orders.*")
	e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: "orders.new", Mandatory: true, Message: transport.Message{Body: []byte("m")}})
	d := e.waitGet(dead)
	if d.Exchange != dlx || d.RoutingKey != "orders.new" {
		e.t.Errorf("dead letter from exchange %q under %q; want %q under orders.new", d.Exchange, d.RoutingKey, dlx)
	}
	e.wantDeaths("dead letter", d.Headers, nil,
		[]death{{queue: src, reason: contract.DeathReasonExpired, exchange: x, routingKeys: []string{"orders.new"}, count: 1}},
		death{queue: src, reason: contract.DeathReasonExpired, exchange: x}, death{queue: src, reason: contract.DeathReasonExpired, exchange: x})
	e.ok("Ack", d.Ack())
	e.wantState(src, 0, 0)
}

// The shape RabbitMQ writes: x-death is an array of tables, each with
// exactly count (long), exchange, queue, reason (strings), routing-keys (an
// array of strings) and time (a timestamp, whole seconds); the message gets
// x-first-death-exchange, -queue and -reason, and from RabbitMQ 3.13
// x-last-death-exchange, -queue and -reason.
func xDeathShape(e *env) {
	dlx, dead := e.dlxTarget("k")
	x := e.exchange("x", transport.Direct)
	src := e.classic("src", transport.Table{contract.ArgMessageTTL: int64(100), contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "k"})
	e.bind(src, x, "orig")
	app := transport.Table{contract.HeaderAttempt: int64(2), "s": "v"}
	e.mustPublish(transport.Publishing{Exchange: x, RoutingKey: "orig", Mandatory: true, Message: transport.Message{Body: []byte("m"), Headers: app}})
	d := e.waitGet(dead)
	e.wantDeaths("dead letter", d.Headers, app,
		[]death{{queue: src, reason: contract.DeathReasonExpired, exchange: x, routingKeys: []string{"orig"}, count: 1}},
		death{queue: src, reason: contract.DeathReasonExpired, exchange: x}, death{queue: src, reason: contract.DeathReasonExpired, exchange: x})
	e.ok("Ack", d.Ack())
}

// A queue dead-lettering rejected messages to itself: each rejection
// increments the one entry's count. The first was of the message published
// to the default exchange; the later ones of the dead letter, which came
// through the dead-letter exchange (x-last-death-exchange).
func xDeathCount(e *env) {
	dlx := e.exchange("dlx", transport.Direct)
	q := e.classic("q", transport.Table{contract.ArgDeadLetterExchange: dlx})
	e.bind(q, dlx, q)
	e.send(q, transport.Message{Body: []byte("m")})
	e.ok("Reject", e.waitGet(q).Reject(false))
	first := death{queue: q, reason: contract.DeathReasonRejected, exchange: ""}
	for count := int64(1); count <= 3; count++ {
		d := e.waitGet(q)
		last := first
		if count > 1 {
			last.exchange = dlx
		}
		e.wantDeaths(fmt.Sprintf("after %d rejections", count), d.Headers, nil,
			[]death{{queue: q, reason: contract.DeathReasonRejected, exchange: "", routingKeys: []string{q}, count: count}},
			first, last)
		if count < 3 {
			e.ok("Reject", d.Reject(false))
		} else {
			e.ok("Ack", d.Ack())
		}
	}
}

// A message that expires from a (TTL, dead-lettering to work) into work,
// is rejected there back to a, and expires from a again: two entries, the
// one updated last moved to the front, x-first-death-* unchanged. RabbitMQ
// only increments an existing entry's count: its exchange and routing-keys
// stay those of the first death in that queue for that reason.
func xDeathOrder(e *env) {
	dlx := e.exchange("dlx", transport.Direct)
	a := e.declareQueue(transport.Queue{Name: e.name("a"), Type: transport.Classic, Durable: true,
		Arguments: transport.Table{contract.ArgMessageTTL: int64(100), contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "to-work"}})
	work := e.classic("work", transport.Table{contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "to-a"})
	e.bind(work, dlx, "to-work")
	e.bind(a, dlx, "to-a")
	e.send(a, transport.Message{Body: []byte("m")})

	d := e.waitGet(work)
	e.wantDeaths("after expiring from a", d.Headers, nil,
		[]death{{queue: a, reason: contract.DeathReasonExpired, exchange: "", routingKeys: []string{a}, count: 1}},
		death{queue: a, reason: contract.DeathReasonExpired, exchange: ""}, death{queue: a, reason: contract.DeathReasonExpired, exchange: ""})
	e.ok("Reject", d.Reject(false))
	d = e.waitGet(work)
	e.wantDeaths("after a rejection from work and expiring from a again", d.Headers, nil,
		[]death{
			{queue: a, reason: contract.DeathReasonExpired, exchange: "", routingKeys: []string{a}, count: 2},
			{queue: work, reason: contract.DeathReasonRejected, exchange: dlx, routingKeys: []string{"to-work"}, count: 1},
		},
		death{queue: a, reason: contract.DeathReasonExpired, exchange: ""}, death{queue: a, reason: contract.DeathReasonExpired, exchange: dlx})
	e.ok("Ack", d.Ack())
}

// The dead letter loses its expiration; x-death keeps it as
// original-expiration.
func perMessageExpiration(e *env) {
	dlx, dead := e.dlxTarget("k")
	src := e.classic("src", transport.Table{contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "k"})
	e.send(src, transport.Message{Body: []byte("m"), Expiration: "100"})
	d := e.waitGet(dead)
	if d.Expiration != "" {
		e.t.Errorf("the dead letter has expiration %q, want none", d.Expiration)
	}
	e.wantDeaths("dead letter", d.Headers, nil,
		[]death{{queue: src, reason: contract.DeathReasonExpired, exchange: "", routingKeys: []string{src}, count: 1, originalExpiration: "100"}},
		death{queue: src, reason: contract.DeathReasonExpired, exchange: ""}, death{queue: src, reason: contract.DeathReasonExpired, exchange: ""})
	e.ok("Ack", d.Ack())
	e.wantState(src, 0, 0)
}

// A queue TTL of a minute does not hold back a message that expires in
// 100ms, and a message expiring in a minute does not outlive a queue TTL of
// 100ms. (Neither waits: the first is at the head of its queue.)
func shorterTTLApplies(e *env) {
	dlx, dead := e.dlxTarget("k")
	long := e.classic("src", transport.Table{contract.ArgMessageTTL: int64(60_000), contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "k"})
	short := e.classic("src", transport.Table{contract.ArgMessageTTL: int64(100), contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "k"})
	e.send(long, transport.Message{Body: []byte("message 100ms"), Expiration: "100"})
	d := e.waitGet(dead)
	if string(d.Body) != "message 100ms" {
		e.t.Errorf("got %q", d.Body)
	}
	e.ok("Ack", d.Ack())
	e.send(short, transport.Message{Body: []byte("queue 100ms"), Expiration: "60000"})
	d = e.waitGet(dead)
	if string(d.Body) != "queue 100ms" {
		e.t.Errorf("got %q", d.Body)
	}
	// Expired by the queue's TTL: the expiration property was the message's.
	e.wantDeaths("dead letter", d.Headers, nil,
		[]death{{queue: short, reason: contract.DeathReasonExpired, exchange: "", routingKeys: []string{short}, count: 1, originalExpiration: "60000"}},
		death{queue: short, reason: contract.DeathReasonExpired, exchange: ""}, death{queue: short, reason: contract.DeathReasonExpired, exchange: ""})
	e.ok("Ack", d.Ack())
	e.wantState(long, 0, 0)
	e.wantState(short, 0, 0)
}

// THE reason retry rungs exist: a classic queue expires messages from its
// head only, so a message expiring in 100ms behind one expiring in 2s is
// dead-lettered after it, not before.
func headOfLine(e *env) {
	dlx, dead := e.dlxTarget("k")
	src := e.classic("src", transport.Table{contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "k"})
	e.send(src, transport.Message{Body: []byte("long"), Expiration: "2000"})
	e.send(src, transport.Message{Body: []byte("short"), Expiration: "100"})
	e.waitMessages(dead, 2)
	e.wantState(src, 0, 0)
	if got := e.drain(dead); !slices.Equal(got, []string{"long", "short"}) {
		e.t.Errorf("dead-lettered in the order %q, want long then short (expiry from the head only)", got)
	}
}

// RabbitMQ 4.3 (perhaps 4.1 or 4.2: not measured) keeps with a message
// the deliveries of it that failed: a reject, with requeue or not, or a
// return by a closing channel, not a nack. A dead letter of a message that
// failed is delivered redelivered from its first delivery on, from a
// classic or a quorum queue alike; one that was only nacked is fresh, as
// every dead letter is on 3.10 and 4.0.
func deadLetterAfterFailure(e *env) {
	dlx, dead := e.dlxTarget("k")
	args := transport.Table{contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "k"}
	for _, typ := range []transport.QueueType{transport.Classic, transport.Quorum} {
		src := e.declareQueue(transport.Queue{Name: e.name(string(typ)), Type: typ, Durable: true, Arguments: args})
		for _, c := range []struct {
			first  string
			failed bool
		}{{"nack", false}, {"reject", true}, {"close", true}} {
			body := string(typ) + ": " + c.first + ", then nack"
			e.sendBody(src, body)
			switch c.first {
			case "close":
				tk := e.take(src)
				e.nextBody(tk, body)
				e.ok("Close", tk.Close())
			case "nack":
				e.ok("Nack(requeue)", e.getBody(src, body).Nack(true))
			default:
				e.ok("Reject(requeue)", e.getBody(src, body).Reject(true))
			}
			e.waitMessages(src, 1)
			e.ok("Nack(false)", e.getBody(src, body).Nack(false))
			got := e.waitGet(dead)
			if redelivered := c.failed && e.v.atLeast(4, 3); string(got.Body) != body || got.Redelivered != redelivered {
				e.t.Errorf("dead letter %q redelivered=%v, want %q redelivered=%v", got.Body, got.Redelivered, body, redelivered)
			}
			e.ok("Ack", got.Ack())
		}
		e.waitState(src, 0, 0)
	}
}

func rejectDeadLetters(e *env) {
	dlx, dead := e.dlxTarget("k")
	src := e.classic("src", transport.Table{contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "k"})
	for _, how := range []string{"reject", "nack"} {
		for _, via := range []string{"get", "consume"} {
			body := how + " " + via
			e.sendBody(src, body)
			var d transport.Delivery
			if via == "get" {
				d = e.getBody(src, body)
			} else {
				s := e.consume(src, transport.ConsumeOptions{Prefetch: 1})
				d = e.receive(s)
				e.ok("Cancel", s.Cancel(e.ctx))
				e.waitClosed(s)
			}
			if how == "reject" {
				e.ok("Reject(false)", d.Reject(false))
			} else {
				e.ok("Nack(false)", d.Nack(false))
			}
			got := e.waitGet(dead)
			// RabbitMQ 4.3: a reject is a failed delivery, and a dead
			// letter of a message that failed arrives redelivered.
			if redelivered := how == "reject" && e.v.atLeast(4, 3); string(got.Body) != body || got.Redelivered != redelivered {
				e.t.Errorf("dead letter %q redelivered=%v, want %q redelivered=%v", got.Body, got.Redelivered, body, redelivered)
			}
			e.wantDeaths(body, got.Headers, nil,
				[]death{{queue: src, reason: contract.DeathReasonRejected, exchange: "", routingKeys: []string{src}, count: 1}},
				death{queue: src, reason: contract.DeathReasonRejected, exchange: ""}, death{queue: src, reason: contract.DeathReasonRejected, exchange: ""})
			e.ok("Ack", got.Ack())
			e.wantState(src, 0, 0)
		}
	}
}

// Expired or rejected into a dead-letter exchange that routes it nowhere,
// or that does not exist: the message is gone, without an error.
func unroutableDeadLetterDropped(e *env) {
	dlx, other := e.dlxTarget("another.key")
	missing := e.name("missing")
	for _, tt := range []struct{ name, dlx string }{{"unbound key", dlx}, {"missing exchange", missing}} {
		expiring := e.classic("src", transport.Table{contract.ArgMessageTTL: int64(100), contract.ArgDeadLetterExchange: tt.dlx, contract.ArgDeadLetterRoutingKey: "k"})
		e.sendBody(expiring, "expires")
		e.waitMessages(expiring, 0)
		e.empty(expiring)

		rejecting := e.classic("src", transport.Table{contract.ArgDeadLetterExchange: tt.dlx, contract.ArgDeadLetterRoutingKey: "k"})
		e.sendBody(rejecting, "rejected")
		e.ok(tt.name+": Reject(false)", e.getBody(rejecting, "rejected").Reject(false))
		e.wantState(rejecting, 0, 0)
		e.empty(rejecting)
	}
	e.wantState(other, 0, 0)
	_, err := e.tr.InspectQueue(e.ctx, missing)
	e.wantErr("InspectQueue "+missing, err, transport.ErrNotFound)
}

func expiredWithoutDLXDropped(e *env) {
	q := e.classic("q", transport.Table{contract.ArgMessageTTL: int64(100)})
	e.sendBody(q, "a")
	e.sendBody(q, "b")
	e.waitMessages(q, 0)
	e.empty(q)
	perMessage := e.classic("q", nil)
	e.send(perMessage, transport.Message{Body: []byte("c"), Expiration: "100"})
	e.waitMessages(perMessage, 0)
	e.empty(perMessage)
}

func deadLetterKeepsMessage(e *env) {
	dlx, dead := e.dlxTarget("k")
	src := e.classic("src", transport.Table{contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "k"})
	msg := richMessage()
	want := richMessage()
	for _, c := range headerTypeCases() {
		msg.Headers["type "+c.name] = c.in
		want.Headers["type "+c.name] = c.out
	}
	e.send(src, msg)
	e.ok("Reject(false)", e.mustGet(src).Reject(false))
	d := e.waitGet(dead)
	got := d.Message
	got.Headers = withoutDeaths(got.Headers)
	e.wantMessage("dead letter", got, want)
	e.ok("Ack", d.Ack())
}

// A source queue as CONTRACT.md section 5 declares it (quorum, with a
// dead-letter exchange and routing key): a message rejected without requeue
// reaches the dead-letter queue with x-death.
func quorumRejectDeadLetters(e *env) {
	dlx, dead := e.dlxTarget("src.dlq")
	src := e.declareQueue(transport.Queue{Name: e.name("src"), Type: transport.Quorum, Durable: true,
		Arguments: transport.Table{contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "src.dlq"}})
	e.send(src, transport.Message{Body: []byte("m"), Headers: transport.Table{"h": "v"}})
	e.ok("Reject(false)", e.getBody(src, "m").Reject(false))
	d := e.waitGet(dead)
	if d.Exchange != dlx || d.RoutingKey != "src.dlq" {
		e.t.Errorf("dead letter from %q under %q, want %q under src.dlq", d.Exchange, d.RoutingKey, dlx)
	}
	e.wantDeaths("dead letter", d.Headers, transport.Table{"h": "v"},
		[]death{{queue: src, reason: contract.DeathReasonRejected, exchange: "", routingKeys: []string{src}, count: 1}},
		death{queue: src, reason: contract.DeathReasonRejected, exchange: ""}, death{queue: src, reason: contract.DeathReasonRejected, exchange: ""})
	e.ok("Ack", d.Ack())
	e.waitState(src, 0, 0)
}

// The TTL runs only while a message waits in the queue. One delivered and
// held past it stays deliverable (the ack works); requeued, it is expired at
// once. The marker, published after it, expiring shows its TTL has passed.
func requeuedAfterTTL(e *env) {
	dlx, dead := e.dlxTarget("k")
	// 1s: long enough for the two gets below on a loaded machine (at 100ms
	// they found the queue empty under two test runs on 2 cores).
	src := e.classic("src", transport.Table{contract.ArgMessageTTL: int64(1000), contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "k"})
	e.sendBody(src, "held")
	e.sendBody(src, "acked")
	held, acked := e.getBody(src, "held"), e.getBody(src, "acked")
	e.sendBody(src, "marker")
	if d := e.waitGet(dead); string(d.Body) != "marker" {
		e.t.Fatalf("dead-lettered %q, want the marker", d.Body)
	}
	e.ok("Ack of a delivery held past its TTL", acked.Ack())
	e.ok("Nack(requeue) of a delivery held past its TTL", held.Nack(true))
	d := e.waitGet(dead)
	if string(d.Body) != "held" {
		e.t.Errorf("dead-lettered %q, want held", d.Body)
	}
	e.wantDeaths("requeued after its TTL", d.Headers, nil,
		[]death{{queue: src, reason: contract.DeathReasonExpired, exchange: "", routingKeys: []string{src}, count: 1}},
		death{queue: src, reason: contract.DeathReasonExpired, exchange: ""}, death{queue: src, reason: contract.DeathReasonExpired, exchange: ""})
	e.ok("Ack", d.Ack())
	e.wantState(src, 0, 0)
	e.empty(dead)
}

// A message with expiration "0" is delivered only if a consumer can take it
// the moment it arrives; otherwise it expires at once.
func expirationZero(e *env) {
	dlx, dead := e.dlxTarget("k")
	src := e.classic("src", transport.Table{contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "k"})
	e.send(src, transport.Message{Body: []byte("nobody waits"), Expiration: "0"})
	d := e.waitGet(dead)
	if string(d.Body) != "nobody waits" {
		e.t.Errorf("dead-lettered %q", d.Body)
	}
	e.wantDeaths("expiration 0", d.Headers, nil,
		[]death{{queue: src, reason: contract.DeathReasonExpired, exchange: "", routingKeys: []string{src}, count: 1, originalExpiration: "0"}},
		death{queue: src, reason: contract.DeathReasonExpired, exchange: ""}, death{queue: src, reason: contract.DeathReasonExpired, exchange: ""})
	e.ok("Ack", d.Ack())
	s := e.consume(src, transport.ConsumeOptions{Prefetch: 1})
	e.waitState(src, 0, 1)
	e.send(src, transport.Message{Body: []byte("a consumer waits"), Expiration: "0"})
	d = e.receive(s)
	if string(d.Body) != "a consumer waits" || d.Expiration != "0" {
		e.t.Errorf("consumer got %q with expiration %q, want \"a consumer waits\" with 0", d.Body, d.Expiration)
	}
	e.ok("Ack", d.Ack())
	e.empty(dead)
}

// A queue whose expired messages dead-letter back into itself: RabbitMQ
// drops the copy for the queue the message has already expired from (a
// cycle with no rejection in it), and routes the others.
func deadLetterCycle(e *env) {
	dlx, dead := e.dlxTarget("c")
	loop := e.classic("loop", transport.Table{contract.ArgMessageTTL: int64(100), contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "c"})
	e.bind(loop, dlx, "c")
	e.sendBody(loop, "m")
	e.waitMessages(dead, 1)
	e.waitState(loop, 0, 0)
	d := e.getBody(dead, "m")
	e.wantDeaths("the copy that left the cycle", d.Headers, nil,
		[]death{{queue: loop, reason: contract.DeathReasonExpired, exchange: "", routingKeys: []string{loop}, count: 1}},
		death{queue: loop, reason: contract.DeathReasonExpired, exchange: ""}, death{queue: loop, reason: contract.DeathReasonExpired, exchange: ""})
	e.ok("Ack", d.Ack())
	e.wantState(loop, 0, 0)
	e.wantState(dead, 0, 0)
}

func deleteAndPurgeDoNotDeadLetter(e *env) {
	dlx, dead := e.dlxTarget("k")
	args := transport.Table{contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "k"}
	purged, deleted := e.classic("src", args), e.classic("src", args)
	e.sendBody(purged, "purged")
	e.sendBody(deleted, "deleted")
	if n, err := e.tr.PurgeQueue(e.ctx, purged); n != 1 || err != nil {
		e.t.Errorf("PurgeQueue = %d, %v", n, err)
	}
	if n, err := e.tr.DeleteQueue(e.ctx, deleted); n != 1 || err != nil {
		e.t.Errorf("DeleteQueue = %d, %v", n, err)
	}
	e.wantState(dead, 0, 0)
	// Nothing in flight either: a message dead-lettered after those arrives
	// alone.
	e.sendBody(purged, "rejected")
	e.ok("Reject(false)", e.getBody(purged, "rejected").Reject(false))
	e.waitMessages(dead, 1)
	if got := e.drain(dead); !slices.Equal(got, []string{"rejected"}) {
		e.t.Errorf("dead letters %q, want only the rejected one", got)
	}
}

// x-dead-letter-exchange "" is the default exchange: the dead letter goes to
// the queue named by x-dead-letter-routing-key.
func deadLetterViaDefaultExchange(e *env) {
	dead := e.classic("dead", nil)
	src := e.classic("src", transport.Table{contract.ArgDeadLetterExchange: "", contract.ArgDeadLetterRoutingKey: dead})
	e.sendBody(src, "m")
	e.ok("Reject(false)", e.getBody(src, "m").Reject(false))
	d := e.waitGet(dead)
	if string(d.Body) != "m" || d.Exchange != "" || d.RoutingKey != dead {
		e.t.Errorf("dead letter %q from %q under %q, want m from \"\" under %q", d.Body, d.Exchange, d.RoutingKey, dead)
	}
	e.wantDeaths("dead letter", d.Headers, nil,
		[]death{{queue: src, reason: contract.DeathReasonRejected, exchange: "", routingKeys: []string{src}, count: 1}},
		death{queue: src, reason: contract.DeathReasonRejected, exchange: ""}, death{queue: src, reason: contract.DeathReasonRejected, exchange: ""})
	e.ok("Ack", d.Ack())
}

// A consumer at its prefetch holds one message; the one behind it expires
// and is dead-lettered meanwhile.
func expireWhileConsumerFull(e *env) {
	dlx, dead := e.dlxTarget("k")
	src := e.classic("src", transport.Table{contract.ArgMessageTTL: int64(100), contract.ArgDeadLetterExchange: dlx, contract.ArgDeadLetterRoutingKey: "k"})
	s := e.consume(src, transport.ConsumeOptions{Prefetch: 1})
	e.sendBody(src, "held")
	held := e.receive(s)
	e.sendBody(src, "expires")
	d := e.waitGet(dead)
	if string(d.Body) != "expires" {
		e.t.Errorf("dead-lettered %q, want the message behind the held one", d.Body)
	}
	e.ok("Ack", d.Ack())
	e.ok("Ack of the held one", held.Ack())
	e.waitState(src, 0, 1)
	e.empty(dead)
}

// A message a client published with x-death, x-first-death-* and
// x-last-death-* of its own, expiring: RabbitMQ 3.10 counts the death in
// the published x-death (the entry for this queue and reason goes from 2 to
// 3 and moves to the front) and keeps x-first-death-* as published; it does
// not write x-last-death-*, which stay as they were. From RabbitMQ 3.13 the
// broker writes only the deaths it saw: one entry, count 1, and
// x-first-death-* and x-last-death-* for it.
func publishedDeaths(e *env) {
	dead := e.classic("dead", nil)
	src := e.classic("src", transport.Table{contract.ArgMessageTTL: int64(100), contract.ArgDeadLetterExchange: "", contract.ArgDeadLetterRoutingKey: dead})
	at := time.Unix(1_700_000_000, 0)
	published := transport.Table{
		contract.HeaderDeath: []any{
			transport.Table{"count": int64(5), "queue": "elsewhere", "reason": contract.DeathReasonRejected, "exchange": "ex", "routing-keys": []any{"rk"}, "time": at},
			transport.Table{"count": int64(2), "queue": src, "reason": contract.DeathReasonExpired, "exchange": "", "routing-keys": []any{src}, "time": at},
		},
		contract.HeaderFirstDeathPrefix + "queue": "elsewhere", contract.HeaderFirstDeathPrefix + "reason": contract.DeathReasonRejected, contract.HeaderFirstDeathPrefix + "exchange": "ex",
		contract.HeaderLastDeathPrefix + "queue": "elsewhere", contract.HeaderLastDeathPrefix + "reason": contract.DeathReasonMaxLength, contract.HeaderLastDeathPrefix + "exchange": "ex",
		"app": "a",
	}
	e.send(src, transport.Message{Body: []byte("m"), Headers: published})
	d := e.waitGet(dead)
	here := death{queue: src, reason: contract.DeathReasonExpired, exchange: ""}
	if e.v.atLeast(3, 13) {
		e.wantDeaths("a published x-death, on RabbitMQ 3.13 and later", d.Headers, transport.Table{"app": "a"},
			[]death{{queue: src, reason: contract.DeathReasonExpired, exchange: "", routingKeys: []string{src}, count: 1}},
			here, here)
	} else {
		app := transport.Table{"app": "a", contract.HeaderLastDeathPrefix + "queue": "elsewhere", contract.HeaderLastDeathPrefix + "reason": contract.DeathReasonMaxLength, contract.HeaderLastDeathPrefix + "exchange": "ex"}
		e.wantDeaths("a published x-death, on RabbitMQ 3.10", d.Headers, app,
			[]death{
				{queue: src, reason: contract.DeathReasonExpired, exchange: "", routingKeys: []string{src}, count: 3},
				{queue: "elsewhere", reason: contract.DeathReasonRejected, exchange: "ex", routingKeys: []string{"rk"}, count: 5},
			},
			death{queue: "elsewhere", reason: contract.DeathReasonRejected, exchange: "ex"}, here)
	}
	e.ok("Ack", d.Ack())
}
