package transporttest

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// What going through a queue with a Taker relies on (an operator moving
// some dead letters and holding the others back until the end): basic.get
// on one channel, deliveries settled one by one, and what is held back
// requeued in place when the Taker closes.
func takeBehaviours() []behaviour {
	return []behaviour{
		{"a taker takes messages in queue order", takeInOrder},
		{"closing a taker requeues what it held back in place", takeHoldsBack},
		{"a taker holds more deliveries than a connection has channels", takeMany},
		{"a delivery requeued while the taker is open comes back to it", takeRequeueWhileOpen},
		{"take from a missing queue fails with ErrNotFound", takeMissing},
		{"settling after close fails with ErrStaleDelivery", takeSettleAfterClose},
		{"next after close fails with ErrStaleDelivery", takeNextAfterClose},
		{"closing the connection ends the taker", takeConnectionClosed},
		{"next on a deleted queue fails with ErrNotFound and ends the taker", takeDeletedQueue},
		{"get and next on a quorum queue with single active consumer are locked", takeSingleActiveQuorum},
		{"get and next on a classic queue with single active consumer pass its consumer by", takeSingleActiveClassic},
		{"next on a stream closes the connection and ends the taker", takeStream},
	}
}

// takeOn opens a Taker on queue and closes it when the test ends.
func (e *env) takeOn(tr transport.Transport, queue string) transport.Taker {
	e.t.Helper()
	tk, err := tr.Take(e.ctx, queue)
	if err != nil {
		e.t.Fatalf("Take from %s: %v", queue, err)
	}
	if tk == nil {
		e.t.Fatalf("Take from %s returned no Taker", queue)
	}
	e.t.Cleanup(func() { _ = tk.Close() })
	return tk
}

func (e *env) take(queue string) transport.Taker {
	e.t.Helper()
	return e.takeOn(e.tr, queue)
}

// next takes the next message with tk; ok is false when there is none.
func (e *env) next(tk transport.Taker) (transport.Delivery, bool) {
	e.t.Helper()
	d, ok, err := tk.Next(e.ctx)
	if err != nil {
		e.t.Fatalf("Next: %v", err)
	}
	if ok && d.Settler == nil {
		e.t.Fatal("Next: a delivery without a Settler")
	}
	return d, ok
}

// nextBody takes the next message with tk, which must have body want.
func (e *env) nextBody(tk transport.Taker, want string) transport.Delivery {
	e.t.Helper()
	d, ok := e.next(tk)
	if !ok {
		e.t.Fatalf("Next: nothing, want %q", want)
	}
	if string(d.Body) != want {
		e.t.Fatalf("Next: %q, want %q", d.Body, want)
	}
	return d
}

// noNext asserts that tk finds nothing ready.
func (e *env) noNext(tk transport.Taker) {
	e.t.Helper()
	if d, ok := e.next(tk); ok {
		e.t.Errorf("Next: %q, want nothing", d.Body)
	}
}

// sendMany sends n messages, bodies "0" to n-1, all in flight at once.
func (e *env) sendMany(queue string, n int) {
	e.t.Helper()
	confs := make([]*transport.Confirmation, n)
	for i := range n {
		c, err := e.tr.Publish(e.ctx, transport.Publishing{RoutingKey: queue, Mandatory: true,
			Message: transport.Message{Body: []byte(fmt.Sprint(i))}})
		if err != nil {
			e.t.Fatalf("publish %d to %s: %v", i, queue, err)
		}
		confs[i] = c
	}
	for i, c := range confs {
		if err := c.Wait(e.ctx); err != nil {
			e.t.Fatalf("confirmation of %d: %v", i, err)
		}
	}
}

// Next takes the head of the queue each time, nothing when it is empty
// (and more once there is more); what it acks is gone for good.
func takeInOrder(e *env) {
	q := e.classic("q", nil)
	tk := e.take(q)
	e.noNext(tk)
	for i := range 5 {
		e.sendBody(q, fmt.Sprint(i))
	}
	var got []transport.Delivery
	for i := range 5 {
		d := e.nextBody(tk, fmt.Sprint(i))
		if d.Redelivered || d.RoutingKey != q {
			e.t.Errorf("delivery %d: redelivered=%v under %q, want fresh under %q", i, d.Redelivered, d.RoutingKey, q)
		}
		got = append(got, d)
	}
	e.noNext(tk)
	e.wantState(q, 0, 0)
	for _, d := range got {
		e.ok("Ack", d.Ack())
	}
	e.ok("Close", tk.Close())
	e.waitState(q, 0, 0)
	e.empty(q)
}

// The operator's walk: the odd ones are moved (republished, then acked),
// the even ones held back to the end. Closing the Taker puts the even ones
// back, in their order, redelivered; none of the moved ones comes back.
func takeHoldsBack(e *env) {
	q := e.classic("q", nil)
	target := e.classic("target", nil)
	for i := range 10 {
		e.sendBody(q, fmt.Sprint(i))
	}
	tk := e.take(q)
	for i := range 10 {
		d := e.nextBody(tk, fmt.Sprint(i))
		if i%2 == 1 {
			e.ok("republish", e.republish(d, target, nil))
			e.ok("Ack", d.Ack())
		}
	}
	e.noNext(tk)
	e.wantState(q, 0, 0)
	e.ok("Close", tk.Close())
	e.waitState(q, 5, 0)
	var back []string
	for {
		d, ok := e.get(q)
		if !ok {
			break
		}
		back = append(back, fmt.Sprintf("%s/%v", d.Body, d.Redelivered))
		e.ok("Ack", d.Ack())
	}
	if want := []string{"0/true", "2/true", "4/true", "6/true", "8/true"}; !slices.Equal(back, want) {
		e.t.Errorf("back in the queue after Close: %q, want %q", back, want)
	}
	if got, want := e.drain(target), []string{"1", "3", "5", "7", "9"}; !slices.Equal(got, want) {
		e.t.Errorf("moved: %q, want %q", got, want)
	}
}

// 3000 deliveries held on one Taker: more than a connection's channel_max
// (2047), which a channel per message could not hold. Closing it requeues
// all of them, in order.
func takeMany(e *env) {
	const n = 3000
	// 9,000 round trips under -race: past 30s on a loaded 2-core machine.
	e.allow(2 * time.Minute)
	q := e.classic("q", nil)
	e.sendMany(q, n)
	tk := e.take(q)
	for i := range n {
		e.nextBody(tk, fmt.Sprint(i))
	}
	e.noNext(tk)
	e.wantState(q, 0, 0)
	e.ok("Close", tk.Close())
	e.waitState(q, n, 0)
	again := e.take(q)
	for i := range n {
		d := e.nextBody(again, fmt.Sprint(i))
		if !d.Redelivered {
			e.t.Fatalf("message %d back after Close is not marked redelivered", i)
		}
		e.ok("Ack", d.Ack())
	}
	e.noNext(again)
	e.ok("Close", again.Close())
	e.waitState(q, 0, 0)
}

// A held delivery requeued (Nack) while the Taker is open goes back to its
// place, ahead of what was published after it: the next Next takes it again.
// The others held stay with the Taker until it closes. (A classic queue
// takes back what a closed channel held after channel.close-ok may have
// been sent, so here and in the other behaviours of a Taker's Close the
// queue's state is waited for: RabbitMQ 4.3.6 was once seen answering a
// passive declare before it.)
func takeRequeueWhileOpen(e *env) {
	q := e.classic("q", nil)
	for _, s := range []string{"A", "B", "C", "D"} {
		e.sendBody(q, s)
	}
	tk := e.take(q)
	e.nextBody(tk, "A")
	b := e.nextBody(tk, "B")
	e.nextBody(tk, "C")
	e.ok("Nack(requeue) B", b.Nack(true))
	e.waitState(q, 2, 0)
	if b = e.nextBody(tk, "B"); !b.Redelivered {
		e.t.Error("B after its requeue is not marked redelivered")
	}
	if d := e.nextBody(tk, "D"); d.Redelivered {
		e.t.Error("D is marked redelivered")
	}
	e.noNext(tk)
	e.ok("Close", tk.Close())
	e.waitState(q, 4, 0)
	if got, want := e.drain(q), []string{"A", "B", "C", "D"}; !slices.Equal(got, want) {
		e.t.Errorf("after Close: %q, want %q", got, want)
	}
}

// Take checks that the queue exists, and its failure harms nothing else on
// the connection.
func takeMissing(e *env) {
	missing := e.name("missing")
	tk, err := e.tr.Take(e.ctx, missing)
	e.wantErr("Take from a missing queue", err, transport.ErrNotFound, missing)
	if tk != nil {
		e.t.Error("Take from a missing queue returned a Taker")
	}
	q := e.classic("q", nil)
	e.sendBody(q, "m")
	e.ok("Ack", e.nextBody(e.take(q), "m").Ack())
	e.wantState(q, 0, 0)
}

// Closing the Taker requeues what it held: settling one of those afterwards
// fails with ErrStaleDelivery and changes nothing (a Nack without requeue
// drops nothing). Closing again is a no-op.
func takeSettleAfterClose(e *env) {
	q := e.classic("q", nil)
	e.sendBody(q, "a")
	e.sendBody(q, "b")
	tk := e.take(q)
	a, b := e.nextBody(tk, "a"), e.nextBody(tk, "b")
	e.ok("Close", tk.Close())
	e.waitState(q, 2, 0)
	e.wantErr("Ack after Close", a.Ack(), transport.ErrStaleDelivery)
	e.wantErr("Nack(false) after Close", b.Nack(false), transport.ErrStaleDelivery)
	e.ok("a second Close", tk.Close())
	e.waitState(q, 2, 0)
	if got, want := e.drain(q), []string{"a", "b"}; !slices.Equal(got, want) {
		e.t.Errorf("after Close: %q, want %q", got, want)
	}
}

// Next after Close fails with ErrStaleDelivery and takes nothing.
func takeNextAfterClose(e *env) {
	q := e.classic("q", nil)
	e.sendBody(q, "m")
	tk := e.take(q)
	e.ok("Close", tk.Close())
	d, ok, err := tk.Next(e.ctx)
	e.wantErr("Next after Close", err, transport.ErrStaleDelivery)
	if ok || d.Settler != nil {
		e.t.Errorf("Next after Close took %q", d.Body)
	}
	e.wantState(q, 1, 0)
}

// Closing the Transport ends its Takers: what they held is back in the
// queue, and Next and settling fail, matching both ErrClosed and
// ErrStaleDelivery.
func takeConnectionClosed(e *env) {
	q := e.classic("q", nil)
	e.sendBody(q, "a")
	e.sendBody(q, "b")
	other := e.connect()
	tk := e.takeOn(other, q)
	a := e.nextBody(tk, "a")
	e.ok("Close the connection", other.Close())
	e.waitState(q, 2, 0)
	_, _, err := tk.Next(e.ctx)
	e.wantErr("Next after the connection's Close", err, transport.ErrClosed)
	e.wantErr("Next after the connection's Close", err, transport.ErrStaleDelivery)
	err = a.Ack()
	e.wantErr("Ack after the connection's Close", err, transport.ErrClosed)
	e.wantErr("Ack after the connection's Close", err, transport.ErrStaleDelivery)
	e.ok("Close the Taker after the connection's", tk.Close())
	_, err = other.Take(e.ctx, q)
	e.wantErr("Take after the connection's Close", err, transport.ErrClosed)
	if got, want := e.drain(q), []string{"a", "b"}; !slices.Equal(got, want) {
		e.t.Errorf("after the connection's Close: %q, want %q", got, want)
	}
}

// basic.get on a queue deleted since Take fails with NOT_FOUND, which closes
// the Taker's channel: from then on Next and settling what it held fail
// with ErrStaleDelivery.
func takeDeletedQueue(e *env) {
	q := e.classic("q", nil)
	e.sendBody(q, "a")
	tk := e.take(q)
	a := e.nextBody(tk, "a")
	if _, err := e.tr.DeleteQueue(e.ctx, q); err != nil {
		e.t.Fatalf("DeleteQueue: %v", err)
	}
	_, _, err := tk.Next(e.ctx)
	e.wantErr("Next on a deleted queue", err, transport.ErrNotFound, q)
	_, _, err = tk.Next(e.ctx)
	e.wantErr("Next after that", err, transport.ErrStaleDelivery)
	e.wantErr("Ack after that", a.Ack(), transport.ErrStaleDelivery)
	e.ok("Close", tk.Close())
}

// RabbitMQ refuses basic.get on a quorum queue with single active consumer
// (3.10.8, 4.0.5 and 4.3.6 alike): 405 RESOURCE_LOCKED "cannot obtain
// access to locked queue 'Q' in vhost '/'. basic.get operations are not
// supported by quorum queues with single active consumer" (4.3.6 names the
// type <<"quorum">>), a channel error, whether the queue holds messages or
// not, with a consumer or not. No transport sentinel matches it. Take
// succeeds (its passive declare is answered); its first Next fails so and
// closes the Taker's channel: Next then fails with ErrStaleDelivery.
// Nothing is taken, the active consumer keeps what it holds, and the
// connection goes on.
func takeSingleActiveQuorum(e *env) {
	q := e.declareQueue(transport.Queue{Name: e.name("sac"), Type: transport.Quorum, Durable: true,
		Arguments: transport.Table{contract.ArgSingleActiveConsumer: true}})
	// As the error prints it (amqp091 quotes the reply text).
	typ := since(e, 4, 3, "quorum", `<<\"quorum\">>`)
	locked := func(what string, err error) {
		e.t.Helper()
		e.wantErr(what, err, nil, "RESOURCE_LOCKED - cannot obtain access to locked queue '"+q+"' in vhost '/'. "+
			"basic.get operations are not supported by "+typ+" queues with single active consumer")
		if errors.Is(err, transport.ErrNotFound) || errors.Is(err, transport.ErrPreconditionFailed) || errors.Is(err, transport.ErrStaleDelivery) {
			e.t.Errorf("%s: %v matches a transport error; RabbitMQ answers RESOURCE_LOCKED (405)", what, err)
		}
	}
	_, _, err := e.tr.Get(e.ctx, q)
	locked("Get from the empty queue", err)
	e.sendBody(q, "a")
	e.sendBody(q, "b")
	_, _, err = e.tr.Get(e.ctx, q)
	locked("Get", err)
	e.wantState(q, 2, 0)

	s := e.consume(q, transport.ConsumeOptions{Prefetch: 1})
	a := e.receive(s)
	_, _, err = e.tr.Get(e.ctx, q)
	locked("Get beside the active consumer", err)
	tk := e.take(q)
	_, _, err = tk.Next(e.ctx)
	locked("Next", err)
	_, _, err = tk.Next(e.ctx)
	e.wantErr("Next after that", err, transport.ErrStaleDelivery)
	e.ok("Close", tk.Close())
	e.waitState(q, 1, 1)
	e.ok("the consumer's Ack of a", a.Ack())
	if b := e.receive(s); string(b.Body) != "b" {
		e.t.Errorf("the consumer's next delivery: %q, want b", b.Body)
	} else {
		e.ok("the consumer's Ack of b", b.Ack())
	}
	e.waitState(q, 0, 1)
	e.ok("Ping after the refusals", e.tr.Ping(e.ctx))
}

// A classic queue with single active consumer takes basic.get like any
// other (3.10.8, 4.0.5 and 4.3.6): beside its active consumer, Get and a
// Taker take the head, past what the consumer holds.
func takeSingleActiveClassic(e *env) {
	q := e.classic("sac", transport.Table{contract.ArgSingleActiveConsumer: true})
	for _, b := range []string{"a", "b", "c"} {
		e.sendBody(q, b)
	}
	s := e.consume(q, transport.ConsumeOptions{Prefetch: 1})
	a := e.receive(s)
	if string(a.Body) != "a" {
		e.t.Fatalf("the active consumer's delivery: %q, want a", a.Body)
	}
	e.ok("Ack b", e.getBody(q, "b").Ack())
	tk := e.take(q)
	e.ok("Ack c", e.nextBody(tk, "c").Ack())
	e.noNext(tk)
	e.ok("Close", tk.Close())
	e.ok("the consumer's Ack", a.Ack())
	e.waitState(q, 0, 1)
}

// A stream cannot be read with basic.get: Take succeeds (its passive
// declare is answered), its first Next fails with RabbitMQ's reason, 540
// NOT_IMPLEMENTED "basic.get not supported by stream queues", a connection
// exception: the error matches ErrStaleDelivery too, as what the Taker held
// is back in its queue, and Next fails with ErrStaleDelivery from then on.
// The Transport opens its next connection.
func takeStream(e *env) {
	q := e.declareQueue(transport.Queue{Name: e.name("stream"), Type: transport.Stream, Durable: true})
	other := e.classic("other", nil)
	e.sendBody(q, "m")
	e.sendBody(other, "held")
	tr := e.connect()
	held := e.nextBody(e.takeOn(tr, other), "held")
	tk := e.takeOn(tr, q)
	_, _, err := tk.Next(e.ctx)
	e.wantErr("Next on a stream", err, transport.ErrStaleDelivery,
		"NOT_IMPLEMENTED - basic.get not supported by stream queues queue '"+q+"' in vhost '/'")
	_, _, err = tk.Next(e.ctx)
	e.wantErr("Next after that", err, transport.ErrStaleDelivery)
	e.eventually("the Transport's next connection", func() bool { return tr.State().Connects == 2 })
	e.wantErr("Ack of what the connection's other Taker held", held.Ack(), transport.ErrStaleDelivery)
	e.waitState(other, 1, 0)
	if d, ok := e.getOn(tr, other); !ok || string(d.Body) != "held" {
		e.t.Errorf("Get on the next connection: %q (ok %v), want held", d.Body, ok)
	} else {
		e.ok("Ack on the next connection", d.Ack())
	}
}
