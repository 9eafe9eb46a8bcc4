package transporttest

import (
	"fmt"
	"slices"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// Where a message goes back to when it is requeued, classic and quorum (as
// observed on RabbitMQ 3.10.8, 4.0.5 and 4.3.6):
//
//   - A classic queue puts every requeued message back in its place, ahead
//     of what was published after it, whether it was nacked or rejected
//     with requeue or held by a channel that closed.
//   - A quorum queue keeps returned messages in a returns queue of their
//     own, delivered before every message never delivered, in the order
//     they came back. What a closing channel held (channel close,
//     connection close, consumer timeout) goes there, in the order it was
//     delivered on that channel. A message nacked or rejected with requeue
//     goes there too on RabbitMQ 4.0, but to the back of the queue on 3.10.
//   - Either way the message is marked redelivered, and a quorum queue
//     counts the return in x-delivery-count, dead-lettering the message
//     (reason delivery_limit) once that passes x-delivery-limit. RabbitMQ
//     3.10 writes x-delivery-count on every basic.get (0 for a message never
//     returned); 4.0 only once it has been returned (readBack shows
//     "D/fresh/0" on one, "D/fresh" on the other).
//   - RabbitMQ 4.3 (perhaps 4.1 or 4.2: not measured) tells a failed
//     delivery from a nack: x-delivery-count counts only the returns by
//     reject and by a closing channel, and so does x-delivery-limit; a nack
//     with requeue counts in the new x-acquired-count alone, which counts
//     every return. Each appears once its count is above 0 (readBack shows
//     "B/redelivered/a1" for a message nacked once, "A/redelivered/1/a1"
//     for one a close returned).
func requeueBehaviours() []behaviour {
	var bs []behaviour
	for _, c := range []struct {
		name string
		run  func(e *env, typ transport.QueueType)
	}{
		{"nack with requeue of one held delivery, then close", requeueNackOneHeld},
		{"reject with requeue of one held delivery, then close", requeueRejectOneHeld},
		{"closing a taker requeues what it held", requeueTakerClosed},
		{"closing a connection requeues what its consumer held", requeueConsumerConnectionClosed},
		{"closing a connection requeues what its taker held", requeueTakerConnectionClosed},
		{"what a channel closing first returned stays ahead", requeueClosedInTurn},
		{"a nack after a close requeues behind what the close returned", requeueNackAfterClose},
		{"a message returned twice by a close", requeueReturnedTwice},
	} {
		for _, typ := range []transport.QueueType{transport.Classic, transport.Quorum} {
			bs = append(bs, behaviour{string(typ) + " queue: " + c.name, func(e *env) { c.run(e, typ) }})
		}
	}
	return append(bs,
		behaviour{"quorum queue: a close counts towards x-delivery-limit", requeueCloseDeliveryLimit},
		behaviour{"quorum queue: a nack counts towards x-delivery-limit before RabbitMQ 4.3 only", requeueNackDeliveryLimit},
		behaviour{"quorum queue: x-delivery-limit -1", requeueNegativeDeliveryLimit},
		behaviour{"quorum queue: the default delivery limit", requeueDefaultDeliveryLimit},
	)
}

// requeueQueue declares a durable queue of type typ with bodies in it.
func (e *env) requeueQueue(typ transport.QueueType, bodies ...string) string {
	e.t.Helper()
	q := e.declareQueue(transport.Queue{Name: e.name(string(typ)), Type: typ, Durable: true})
	for _, s := range bodies {
		e.sendBody(q, s)
	}
	return q
}

// readBack takes every ready message of queue in turn (Get, then Ack) and
// describes each as its body, "redelivered" or "fresh", its
// x-delivery-count when it carries one (a quorum queue's always do on a
// RabbitMQ 3.10 basic.get) and its x-acquired-count after an "a" when it
// carries one (4.3): "A/redelivered/1", "A/redelivered/1/a1".
func (e *env) readBack(queue string) []string {
	e.t.Helper()
	return e.drainAs(queue, func(d transport.Delivery) string {
		s := string(d.Body) + "/fresh"
		if d.Redelivered {
			s = string(d.Body) + "/redelivered"
		}
		if n, ok := d.Headers[contract.HeaderDeliveryCount]; ok {
			s += fmt.Sprintf("/%v", n)
		}
		if n, ok := d.Headers[contract.HeaderAcquiredCount]; ok {
			s += fmt.Sprintf("/a%v", n)
		}
		return s
	})
}

// wantBack asserts what readBack finds in queue, a queue of type typ:
// classic, or quorum on RabbitMQ 3.10, on 4.0 or on 4.3.
func (e *env) wantBack(what, queue string, typ transport.QueueType, classic, quorum310, quorum4, quorum43 []string) {
	e.t.Helper()
	want := classic
	if typ == transport.Quorum {
		want = since(e, 4, 3, since(e, 4, 0, quorum310, quorum4), quorum43)
	}
	if got := e.readBack(queue); !slices.Equal(got, want) {
		e.t.Errorf("%s: the %s queue holds %q, want %q", what, typ, got, want)
	}
}

func requeueNackOneHeld(e *env, typ transport.QueueType) {
	requeueOneHeld(e, typ, "Nack(requeue) B", "B/redelivered/a1", func(d transport.Delivery) error { return d.Nack(true) })
}

func requeueRejectOneHeld(e *env, typ transport.QueueType) {
	requeueOneHeld(e, typ, "Reject(requeue) B", "B/redelivered/1/a1", func(d transport.Delivery) error { return d.Reject(true) })
}

// A taker holds A, B and C and requeues B alone: a classic queue puts B
// back in its place, ahead of D; a quorum queue behind D on RabbitMQ 3.10,
// at its front on 4.0, counting the return. Closing the taker then returns
// A and C: in their places in a classic queue, at the front of a quorum
// queue, in order (on 4.0 behind B, which came back first). On 4.3 b43 is
// how B reads back: a nack is counted in x-acquired-count alone.
func requeueOneHeld(e *env, typ transport.QueueType, what, b43 string, requeue func(transport.Delivery) error) {
	q := e.requeueQueue(typ, "A", "B", "C", "D")
	tk := e.take(q)
	e.nextBody(tk, "A")
	b := e.nextBody(tk, "B")
	e.nextBody(tk, "C")
	e.ok(what, requeue(b))
	e.waitMessages(q, 2)
	e.ok("Close", tk.Close())
	e.waitState(q, 4, 0)
	e.wantBack(what+", then Close with A and C held", q, typ,
		[]string{"A/redelivered", "B/redelivered", "C/redelivered", "D/fresh"},
		[]string{"A/redelivered/1", "C/redelivered/1", "D/fresh/0", "B/redelivered/1"},
		[]string{"B/redelivered/1", "A/redelivered/1", "C/redelivered/1", "D/fresh"},
		[]string{b43, "A/redelivered/1/a1", "C/redelivered/1/a1", "D/fresh"})
}

// The colleague's probe, with a gap: a taker takes A, B and C, acks B and
// closes. A and C come back ahead of D and E, in order, redelivered, in
// either type of queue.
func requeueTakerClosed(e *env, typ transport.QueueType) {
	q := e.requeueQueue(typ, "A", "B", "C", "D", "E")
	tk := e.take(q)
	e.nextBody(tk, "A")
	e.ok("Ack B", e.nextBody(tk, "B").Ack())
	e.nextBody(tk, "C")
	e.ok("Close", tk.Close())
	e.waitState(q, 4, 0)
	e.wantBack("after Close with A and C held", q, typ,
		[]string{"A/redelivered", "C/redelivered", "D/fresh", "E/fresh"},
		[]string{"A/redelivered/1", "C/redelivered/1", "D/fresh/0", "E/fresh/0"},
		[]string{"A/redelivered/1", "C/redelivered/1", "D/fresh", "E/fresh"},
		[]string{"A/redelivered/1/a1", "C/redelivered/1/a1", "D/fresh", "E/fresh"})
}

// A consumer on another connection holds A and B (its prefetch) when its
// connection closes: they come back ahead of C and D, in order.
func requeueConsumerConnectionClosed(e *env, typ transport.QueueType) {
	q := e.requeueQueue(typ, "A", "B", "C", "D")
	other := e.connect()
	s := e.consumeOn(other, q, transport.ConsumeOptions{Prefetch: 2})
	for _, want := range []string{"A", "B"} {
		if d := e.receive(s); string(d.Body) != want {
			e.t.Fatalf("the consumer got %q, want %q", d.Body, want)
		}
	}
	e.waitState(q, 2, 1)
	e.ok("Close the consumer's connection", other.Close())
	e.waitState(q, 4, 0)
	e.wantBack("after the connection's Close with A and B held", q, typ,
		[]string{"A/redelivered", "B/redelivered", "C/fresh", "D/fresh"},
		[]string{"A/redelivered/1", "B/redelivered/1", "C/fresh/0", "D/fresh/0"},
		[]string{"A/redelivered/1", "B/redelivered/1", "C/fresh", "D/fresh"},
		[]string{"A/redelivered/1/a1", "B/redelivered/1/a1", "C/fresh", "D/fresh"})
}

// A taker on another connection holds A and B when its connection closes:
// they come back ahead of C and D, in order.
func requeueTakerConnectionClosed(e *env, typ transport.QueueType) {
	q := e.requeueQueue(typ, "A", "B", "C", "D")
	other := e.connect()
	tk := e.takeOn(other, q)
	e.nextBody(tk, "A")
	e.nextBody(tk, "B")
	e.ok("Close the taker's connection", other.Close())
	e.waitState(q, 4, 0)
	e.wantBack("after the connection's Close with A and B held", q, typ,
		[]string{"A/redelivered", "B/redelivered", "C/fresh", "D/fresh"},
		[]string{"A/redelivered/1", "B/redelivered/1", "C/fresh/0", "D/fresh/0"},
		[]string{"A/redelivered/1", "B/redelivered/1", "C/fresh", "D/fresh"},
		[]string{"A/redelivered/1/a1", "B/redelivered/1/a1", "C/fresh", "D/fresh"})
}

// One taker holds A, another B; the second closes first, then the first. A
// classic queue has A and B back in their places; a quorum queue has B
// first, as it returned first, then A, both ahead of C and D.
func requeueClosedInTurn(e *env, typ transport.QueueType) {
	q := e.requeueQueue(typ, "A", "B", "C", "D")
	first, second := e.take(q), e.take(q)
	e.nextBody(first, "A")
	e.nextBody(second, "B")
	e.ok("Close the taker holding B", second.Close())
	e.waitMessages(q, 3)
	e.ok("Close the taker holding A", first.Close())
	e.waitState(q, 4, 0)
	e.wantBack("after closing the taker holding B, then the one holding A", q, typ,
		[]string{"A/redelivered", "B/redelivered", "C/fresh", "D/fresh"},
		[]string{"B/redelivered/1", "A/redelivered/1", "C/fresh/0", "D/fresh/0"},
		[]string{"B/redelivered/1", "A/redelivered/1", "C/fresh", "D/fresh"},
		[]string{"B/redelivered/1/a1", "A/redelivered/1/a1", "C/fresh", "D/fresh"})
}

// One taker holds A, another B. The first closes, returning A (to the
// front of a quorum queue); then B is nacked with requeue, which sends it
// to the back of a RabbitMQ 3.10 quorum queue all the same, and behind A on
// 4.0 and 4.3 (where its nack counts in x-acquired-count only).
func requeueNackAfterClose(e *env, typ transport.QueueType) {
	q := e.requeueQueue(typ, "A", "B", "C", "D")
	first, second := e.take(q), e.take(q)
	e.nextBody(first, "A")
	b := e.nextBody(second, "B")
	e.ok("Close the taker holding A", first.Close())
	e.waitMessages(q, 3)
	e.ok("Nack(requeue) B", b.Nack(true))
	e.waitMessages(q, 4)
	e.wantBack("after the close returning A and the nack of B", q, typ,
		[]string{"A/redelivered", "B/redelivered", "C/fresh", "D/fresh"},
		[]string{"A/redelivered/1", "C/fresh/0", "D/fresh/0", "B/redelivered/1"},
		[]string{"A/redelivered/1", "B/redelivered/1", "C/fresh", "D/fresh"},
		[]string{"A/redelivered/1/a1", "B/redelivered/a1", "C/fresh", "D/fresh"})
}

// A taker's close returns A and B; another takes A again and closes. A
// classic queue has A back in its place; a quorum queue puts A behind B,
// which it returned earlier, still ahead of C and D, and has counted A's
// two returns.
func requeueReturnedTwice(e *env, typ transport.QueueType) {
	q := e.requeueQueue(typ, "A", "B", "C", "D")
	tk := e.take(q)
	e.nextBody(tk, "A")
	e.nextBody(tk, "B")
	e.ok("Close", tk.Close())
	e.waitState(q, 4, 0)
	again := e.take(q)
	e.nextBody(again, "A")
	e.ok("Close the second taker", again.Close())
	e.waitState(q, 4, 0)
	e.wantBack("after A and B returned by a close, then A again", q, typ,
		[]string{"A/redelivered", "B/redelivered", "C/fresh", "D/fresh"},
		[]string{"B/redelivered/1", "A/redelivered/2", "C/fresh/0", "D/fresh/0"},
		[]string{"B/redelivered/1", "A/redelivered/2", "C/fresh", "D/fresh"},
		[]string{"B/redelivered/1/a1", "A/redelivered/2/a2", "C/fresh", "D/fresh"})
}

// A return by a closing channel counts in x-delivery-count as a nack does:
// with x-delivery-limit 1, the second close that returns A dead-letters it
// (reason delivery_limit, without x-delivery-count), and B is at the head.
// On RabbitMQ 4.3 too: a close is a failed delivery.
func requeueCloseDeliveryLimit(e *env) {
	dead := e.classic("dead", nil)
	q := e.declareQueue(transport.Queue{Name: e.name("quorum"), Type: transport.Quorum, Durable: true, Arguments: transport.Table{
		contract.ArgDeliveryLimit: int64(1), contract.ArgDeadLetterExchange: "", contract.ArgDeadLetterRoutingKey: dead,
	}})
	e.sendBody(q, "A")
	e.sendBody(q, "B")
	for count := range int64(2) {
		tk := e.take(q)
		e.wantReturns("A taken", e.nextBody(tk, "A"), count, count)
		e.ok("Close", tk.Close())
		e.waitState(q, 2-int(count), 0)
	}
	e.wantDeliveryLimit("A", dead, q, "A")
	e.wantBack("after A's second return", q, transport.Quorum, nil, []string{"B/fresh/0"}, []string{"B/fresh"}, []string{"B/fresh"})
}

// With x-delivery-limit 1, RabbitMQ 3.10 and 4.0 dead-letter a message at
// its second nack with requeue. 4.3 counts no nack (only x-acquired-count
// does): three nacks leave it there; then a reject and a close are its two
// failed deliveries, and the close dead-letters it.
func requeueNackDeliveryLimit(e *env) {
	dead := e.classic("dead", nil)
	q := e.declareQueue(transport.Queue{Name: e.name("quorum"), Type: transport.Quorum, Durable: true, Arguments: transport.Table{
		contract.ArgDeliveryLimit: int64(1), contract.ArgDeadLetterExchange: "", contract.ArgDeadLetterRoutingKey: dead,
	}})
	e.sendBody(q, "m")
	e.giveBack(q, "m", 0, 0, "nack")
	e.giveBack(q, "m", 1, 0, "nack")
	if !e.v.atLeast(4, 3) {
		e.wantDeliveryLimit("after the second nack", dead, q, "m")
		e.waitState(q, 0, 0)
		return
	}
	e.giveBack(q, "m", 2, 0, "nack")
	e.empty(dead)
	e.giveBack(q, "m", 3, 0, "reject")
	e.giveBack(q, "m", 4, 1, "close")
	e.wantDeliveryLimit("after three nacks, a reject and a close", dead, q, "m")
	e.waitState(q, 0, 0)
}

// wantReturns asserts what a quorum queue's delivery of a message it has had
// back n times, failed of them by a reject or a close, says: redelivered
// once returned, and x-delivery-count n (written on RabbitMQ 3.10's every
// basic.get, from the first return on 4.0); on 4.3 x-delivery-count failed
// and x-acquired-count n, each once above 0.
func (e *env) wantReturns(what string, d transport.Delivery, n, failed int64) {
	e.t.Helper()
	want := transport.Table{}
	e.quorumGetCount(want, n, failed)
	got := transport.Table{}
	for _, k := range []string{contract.HeaderDeliveryCount, contract.HeaderAcquiredCount} {
		if v, ok := d.Headers[k]; ok {
			got[k] = v
		}
	}
	if transport.FormatTable(got) != transport.FormatTable(want) || d.Redelivered != (n > 0) {
		e.t.Errorf("%s after %d returns (%d failed): counts %s, redelivered %v; want %s, %v",
			what, n, failed, transport.FormatTable(got), d.Redelivered, transport.FormatTable(want), n > 0)
	}
}

// quorumGetCount puts in h the counts a basic.get from a quorum queue adds
// to a message returned n times, failed of them: x-delivery-count n on
// every one on RabbitMQ 3.10, from the first return on 4.0; on 4.3
// x-delivery-count failed and x-acquired-count n, each once above 0.
func (e *env) quorumGetCount(h transport.Table, n, failed int64) {
	switch {
	case e.v.atLeast(4, 3):
		if failed > 0 {
			h[contract.HeaderDeliveryCount] = failed
		}
		if n > 0 {
			h[contract.HeaderAcquiredCount] = n
		}
	case n > 0 || !e.v.atLeast(4, 0):
		h[contract.HeaderDeliveryCount] = n
	}
}

// wantDeliveryLimit asserts that a message of quorum queue q (body) was
// dead-lettered into dead, a classic queue, for its delivery limit: without
// x-delivery-count, with the one death; fresh, but redelivered on RabbitMQ
// 4.3, whose dead letter of a message that failed is.
func (e *env) wantDeliveryLimit(what, dead, q, body string) {
	e.t.Helper()
	got := e.waitGet(dead)
	if redelivered := e.v.atLeast(4, 3); string(got.Body) != body || got.Redelivered != redelivered {
		e.t.Errorf("%s: dead letter %q redelivered=%v, want %s, redelivered=%v", what, got.Body, got.Redelivered, body, redelivered)
	}
	limit := death{queue: q, reason: contract.DeathReasonDeliveryLimit, exchange: ""}
	e.wantDeaths(what, got.Headers, nil,
		[]death{{queue: q, reason: contract.DeathReasonDeliveryLimit, exchange: "", routingKeys: []string{q}, count: 1}},
		limit, limit)
	e.ok("Ack", got.Ack())
}

// RabbitMQ 3.10 takes x-delivery-limit -1 for a limit below any count: the
// first return dead-letters the message. 4.0 and 4.3 take a negative limit
// for none: 25 returns later the message is still there. The returns are
// rejects, which every version counts.
func requeueNegativeDeliveryLimit(e *env) {
	dead := e.classic("dead", nil)
	q := e.declareQueue(transport.Queue{Name: e.name("quorum"), Type: transport.Quorum, Durable: true, Arguments: transport.Table{
		contract.ArgDeliveryLimit: int64(-1), contract.ArgDeadLetterExchange: "", contract.ArgDeadLetterRoutingKey: dead,
	}})
	e.sendBody(q, "m")
	if !e.v.atLeast(4, 0) {
		e.giveBack(q, "m", 0, 0, "reject")
		e.wantDeliveryLimit("after the first return", dead, q, "m")
		e.waitState(q, 0, 0)
		return
	}
	for n := range int64(25) {
		e.giveBack(q, "m", n, n, "reject")
	}
	e.stillThere(q, "m", 25, 25)
	e.empty(dead)
}

// From RabbitMQ 4.0 a quorum queue given no x-delivery-limit has one of 20:
// the 21st return, whether by nack, reject or a closing channel,
// dead-letters the message (reason delivery_limit); on 4.3 the 21st by
// reject or a closing channel, while 25 nacks leave it there. 3.10 has no
// default limit: after 25 returns the message is still there.
func requeueDefaultDeliveryLimit(e *env) {
	dead := e.classic("dead", nil)
	for _, how := range []string{"nack", "reject", "close"} {
		q := e.declareQueue(transport.Queue{Name: e.name("quorum"), Type: transport.Quorum, Durable: true,
			Arguments: transport.Table{contract.ArgDeadLetterExchange: "", contract.ArgDeadLetterRoutingKey: dead}})
		e.sendBody(q, how)
		limited := e.v.atLeast(4, 0) && !(e.v.atLeast(4, 3) && how == "nack")
		returns := int64(25)
		if limited {
			returns = 21
		}
		failed := func(n int64) int64 {
			if how == "nack" {
				return 0
			}
			return n
		}
		for n := range returns {
			e.giveBack(q, how, n, failed(n), how)
		}
		if limited {
			e.wantDeliveryLimit("after 21 returns by "+how, dead, q, how)
			e.waitState(q, 0, 0)
			continue
		}
		e.stillThere(q, how, returns, failed(returns))
		e.empty(dead)
	}
}

// giveBack takes body from quorum queue q, which holds it alone and has had
// it back n times, failed of them (see wantReturns), and gives it back as
// how says: "nack" or "reject" with requeue, or "close", taking it with a
// Taker and closing that.
func (e *env) giveBack(q, body string, n, failed int64, how string) {
	e.t.Helper()
	e.waitMessages(q, 1)
	if how == "close" {
		tk := e.take(q)
		e.wantReturns(body, e.nextBody(tk, body), n, failed)
		e.ok("Close", tk.Close())
		return
	}
	d := e.getBody(q, body)
	e.wantReturns(body, d, n, failed)
	if how == "nack" {
		e.ok("Nack(requeue)", d.Nack(true))
	} else {
		e.ok("Reject(requeue)", d.Reject(true))
	}
}

// stillThere takes body from quorum queue q after its n returns, failed of
// them, and acks it.
func (e *env) stillThere(q, body string, n, failed int64) {
	e.t.Helper()
	e.waitMessages(q, 1)
	d := e.getBody(q, body)
	e.wantReturns(body, d, n, failed)
	e.ok("Ack", d.Ack())
}
