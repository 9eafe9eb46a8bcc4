package transporttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

func consumeBehaviours() []behaviour {
	return []behaviour{
		{"prefetch holds back deliveries beyond it", prefetchHoldsBack},
		{"prefetch 0 is unlimited", prefetchUnlimited},
		{"consumers on one queue take turns", roundRobin},
		{"a requeued message goes back to its place", requeueInPlace},
		{"a requeued delivery comes back to the consumer redelivered", requeueToConsumer},
		{"get on an empty queue returns nothing", getEmpty},
		{"setup runs before the subscription", setupFirst},
		{"a failing setup fails consume", setupFails},
		{"cancel closes deliveries and leaves received ones settleable", cancelCloses},
		{"closing a connection requeues its unacked deliveries", closeRequeues},
		{"a delivery settles once", settleOnce},
		{"quorum queue counts deliveries in x-delivery-count", quorumDeliveryCount},
		{"where a quorum queue puts a requeued message", quorumRequeuePlace},
		{"a subscription whose queue is deleted runs setup and subscribes again", resubscribeAfterDelete},
		{"operations after close fail with ErrClosed", operationsAfterClose},
		{"a stream offset is refused on a classic or quorum queue", streamOffsetRefused},
	}
}

// The consumer holds prefetch unsettled deliveries; the rest stay ready in
// the queue (InspectQueue says so), and each settlement lets one more in.
func prefetchHoldsBack(e *env) {
	const prefetch = 3
	q := e.classic("q", nil)
	for i := range prefetch + 2 {
		e.sendBody(q, fmt.Sprint(i))
	}
	s := e.consume(q, transport.ConsumeOptions{Prefetch: prefetch})
	var held []transport.Delivery
	for range prefetch {
		held = append(held, e.receive(s))
	}
	e.waitState(q, 2, 1)
	e.ok("Ack", held[0].Ack())
	held = append(held[1:], e.receive(s))
	e.waitState(q, 1, 1)
	e.ok("Nack(requeue)", held[0].Nack(true))
	// The requeued one goes back to its place, the head: it comes next.
	d := e.receive(s)
	if string(d.Body) != "1" || !d.Redelivered {
		e.t.Errorf("after a requeue got %q redelivered=%v, want 1, redelivered", d.Body, d.Redelivered)
	}
	held = append(held[1:], d)
	e.waitState(q, 1, 1)
	for _, d := range held {
		e.ok("Ack", d.Ack())
	}
	d = e.receive(s)
	if string(d.Body) != "4" {
		e.t.Errorf("last delivery %q, want 4", d.Body)
	}
	e.ok("Ack", d.Ack())
	e.waitState(q, 0, 1)
}

func prefetchUnlimited(e *env) {
	q := e.classic("q", nil)
	for i := range 20 {
		e.sendBody(q, fmt.Sprint(i))
	}
	s := e.consume(q, transport.ConsumeOptions{Prefetch: 0})
	var held []transport.Delivery
	for range 20 {
		held = append(held, e.receive(s))
	}
	e.waitState(q, 0, 1)
	for i, d := range held {
		if string(d.Body) != fmt.Sprint(i) {
			e.t.Errorf("delivery %d is %q, want them in order", i, d.Body)
		}
		e.ok("Ack", d.Ack())
	}
}

// Two consumers (prefetch 1 each, on two connections) on one queue, each
// message published once the one before was settled: they take turns,
// though the consumer that just settled has room again. Not strictly: an
// ack is asynchronous, so the next publish may reach the queue before it,
// and RabbitMQ 4.0.5 was seen to give one consumer two in a row
// ([0 1 0 1 1 0]); each takes a share, never one all.
func roundRobin(e *env) {
	q := e.classic("q", nil)
	subs := []transport.Subscription{
		e.consumeOn(e.connect(), q, transport.ConsumeOptions{Prefetch: 1}),
		e.consumeOn(e.connect(), q, transport.ConsumeOptions{Prefetch: 1}),
	}
	e.waitState(q, 0, 2)
	var who []int
	for i := range 6 {
		e.sendBody(q, fmt.Sprint(i))
		var d transport.Delivery
		select {
		case d = <-Chan(subs[0]):
			who = append(who, 0)
		case d = <-Chan(subs[1]):
			who = append(who, 1)
		case <-e.ctx.Done():
			e.t.Fatalf("waiting for delivery %d: %v", i, e.ctx.Err())
		}
		if string(d.Body) != fmt.Sprint(i) {
			e.t.Errorf("delivery %q, want %d", d.Body, i)
		}
		e.ok("Ack", d.Ack())
	}
	took := [2]int{}
	for _, c := range who {
		took[c]++
	}
	if took[0] < 2 || took[1] < 2 {
		e.t.Errorf("consumers took the messages in the order %v, want them to take turns (each at least 2 of 6)", who)
	}
}

// A classic queue puts a requeued message back where it was, ahead of those
// published after it.
func requeueInPlace(e *env) {
	q := e.classic("q", nil)
	for _, s := range []string{"A", "B", "C"} {
		e.sendBody(q, s)
	}
	a := e.getBody(q, "A")
	if a.Redelivered {
		e.t.Error("first delivery of A is marked redelivered")
	}
	e.ok("Nack(requeue) A", a.Nack(true))
	a = e.getBody(q, "A")
	if !a.Redelivered {
		e.t.Error("A after a requeue is not marked redelivered")
	}
	b := e.getBody(q, "B")
	if b.Redelivered {
		e.t.Error("B is marked redelivered")
	}
	// Requeued in the other order, they still come back A, B.
	e.ok("Reject(requeue) B", b.Reject(true))
	e.ok("Nack(requeue) A", a.Nack(true))
	var got []string
	for range 3 {
		d := e.mustGet(q)
		got = append(got, fmt.Sprintf("%s/%v", d.Body, d.Redelivered))
		e.ok("Ack", d.Ack())
	}
	if want := []string{"A/true", "B/true", "C/false"}; !slices.Equal(got, want) {
		e.t.Errorf("after requeueing B then A got %q, want %q", got, want)
	}
	e.empty(q)
}

func requeueToConsumer(e *env) {
	q := e.classic("q", nil)
	s := e.consume(q, transport.ConsumeOptions{Prefetch: 1})
	e.sendBody(q, "m")
	d := e.receive(s)
	if d.Redelivered {
		e.t.Error("first delivery marked redelivered")
	}
	e.ok("Nack(requeue)", d.Nack(true))
	d = e.receive(s)
	if string(d.Body) != "m" || !d.Redelivered {
		e.t.Errorf("after Nack(requeue): %q redelivered=%v, want m, redelivered", d.Body, d.Redelivered)
	}
	e.ok("Reject(requeue)", d.Reject(true))
	d = e.receive(s)
	if string(d.Body) != "m" || !d.Redelivered {
		e.t.Errorf("after Reject(requeue): %q redelivered=%v, want m, redelivered", d.Body, d.Redelivered)
	}
	e.ok("Ack", d.Ack())
	e.waitState(q, 0, 1)
}

func getEmpty(e *env) {
	q := e.classic("q", nil)
	d, ok, err := e.tr.Get(e.ctx, q)
	if ok || err != nil {
		e.t.Errorf("Get on an empty queue = %q, %v, %v; want false, nil", d.Body, ok, err)
	}
	e.sendBody(q, "m")
	held := e.getBody(q, "m")
	// Only an unacked message: nothing to get either.
	d, ok, err = e.tr.Get(e.ctx, q)
	if ok || err != nil {
		e.t.Errorf("Get on a queue with only an unacked message = %q, %v, %v; want false, nil", d.Body, ok, err)
	}
	e.ok("Ack", held.Ack())
}

// Setup declares what the subscription needs, on the connection it is made
// on, before basic.consume: here the queue itself.
func setupFirst(e *env) {
	q := e.name("q")
	e.deleteQueueLater(e.tr, q)
	setups := 0
	s := e.consume(q, transport.ConsumeOptions{Prefetch: 1, Setup: func(ctx context.Context, d transport.Declarer) error {
		setups++
		if d == nil {
			return errors.New("setup got a nil Declarer")
		}
		return d.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true})
	}})
	if setups != 1 {
		e.t.Errorf("Setup ran %d times, want once", setups)
	}
	e.waitState(q, 0, 1)
	e.sendBody(q, "m")
	d := e.receive(s)
	if string(d.Body) != "m" {
		e.t.Errorf("got %q", d.Body)
	}
	e.ok("Ack", d.Ack())
}

var errSetup = errors.New("setup failed on purpose")

func setupFails(e *env) {
	q := e.classic("q", nil)
	s, err := e.tr.Consume(e.ctx, q, transport.ConsumeOptions{Setup: func(context.Context, transport.Declarer) error { return errSetup }})
	if !errors.Is(err, errSetup) {
		e.t.Errorf("Consume with a failing Setup: %v, want Setup's error", err)
	}
	if err == nil && s != nil {
		_ = s.Cancel(e.ctx)
	}
	e.wantState(q, 0, 0)
	// A Setup declaring what differs from what exists: the broker's refusal.
	s, err = e.tr.Consume(e.ctx, q, transport.ConsumeOptions{Setup: func(ctx context.Context, d transport.Declarer) error {
		return d.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Quorum, Durable: true})
	}})
	e.wantErr("Consume with a Setup redeclaring the queue as quorum", err, transport.ErrPreconditionFailed, q, contract.ArgQueueType)
	if err == nil && s != nil {
		_ = s.Cancel(e.ctx)
	}
	e.wantState(q, 0, 0)
}

// Cancel stops deliveries; those received stay unacked (not requeued) and
// can still be settled, a requeue putting the message back.
func cancelCloses(e *env) {
	q := e.classic("q", nil)
	s := e.consume(q, transport.ConsumeOptions{Prefetch: 10})
	e.sendBody(q, "a")
	e.sendBody(q, "b")
	a, b := e.receive(s), e.receive(s)
	e.ok("Cancel", s.Cancel(e.ctx))
	if rest := e.waitClosed(s); len(rest) != 0 {
		e.t.Errorf("deliveries after the only messages: %q", bodies(rest))
	}
	e.waitState(q, 0, 0)
	e.ok("Ack after Cancel", a.Ack())
	e.ok("Nack(requeue) after Cancel", b.Nack(true))
	e.waitState(q, 1, 0)
	if d := e.getBody(q, "b"); !d.Redelivered {
		e.t.Error("the message requeued after Cancel is not marked redelivered")
	}
	e.sendBody(q, "after")
	e.wantState(q, 1, 0)
	e.getBody(q, "after")
}

// Close ends the connection: its subscriptions' Deliveries close, the broker
// requeues what it had delivered and not seen settled (in place, marked
// redelivered), and settling one of those fails, matching both ErrClosed and
// ErrStaleDelivery (what transport/rabbitmq returns).
func closeRequeues(e *env) {
	q := e.classic("q", nil)
	for _, b := range []string{"a", "b", "c", "d"} {
		e.sendBody(q, b)
	}
	other := e.connect()
	s := e.consumeOn(other, q, transport.ConsumeOptions{Prefetch: 2})
	held := []transport.Delivery{e.receive(s), e.receive(s)}
	e.waitState(q, 2, 1)
	d, ok := e.getOn(other, q)
	if !ok {
		e.t.Fatal("Get on the other connection: empty")
	}
	held = append(held, d)
	e.wantState(q, 1, 1)
	if got := bodies(held); !slices.Equal(got, []string{"a", "b", "c"}) {
		e.t.Fatalf("held %q, want a b c", got)
	}

	e.ok("Close", other.Close())
	e.waitClosed(s)
	e.waitState(q, 4, 0)
	for i, settle := range []struct {
		name string
		f    func(transport.Delivery) error
	}{
		{"Ack", transport.Delivery.Ack},
		{"Nack(false)", func(d transport.Delivery) error { return d.Nack(false) }},
		{"Reject(true)", func(d transport.Delivery) error { return d.Reject(true) }},
	} {
		err := settle.f(held[i])
		e.wantErr(settle.name+" after Close", err, transport.ErrClosed)
		e.wantErr(settle.name+" after Close", err, transport.ErrStaleDelivery)
	}
	e.wantState(q, 4, 0)
	var got []string
	for range 4 {
		d := e.mustGet(q)
		got = append(got, fmt.Sprintf("%s/%v", d.Body, d.Redelivered))
		e.ok("Ack", d.Ack())
	}
	if want := []string{"a/true", "b/true", "c/true", "d/false"}; !slices.Equal(got, want) {
		e.t.Errorf("after the connection closed got %q, want %q", got, want)
	}
}

// A second settlement of one delivery is an error (on RabbitMQ it would
// close the channel), and harms nothing else.
func settleOnce(e *env) {
	q := e.classic("q", nil)
	e.sendBody(q, "a")
	d := e.getBody(q, "a")
	e.ok("Ack", d.Ack())
	if err := d.Ack(); err == nil {
		e.t.Error("a second Ack succeeded")
	}
	if err := d.Nack(true); err == nil {
		e.t.Error("Nack(requeue) after Ack succeeded")
	}
	e.empty(q)

	s := e.consume(q, transport.ConsumeOptions{Prefetch: 2})
	e.sendBody(q, "b")
	e.sendBody(q, "c")
	b, c := e.receive(s), e.receive(s)
	e.ok("Reject(requeue=false)", b.Reject(false))
	if err := b.Reject(true); err == nil {
		e.t.Error("Reject(requeue) after Reject succeeded")
	}
	if err := b.Ack(); err == nil {
		e.t.Error("Ack after Reject succeeded")
	}
	e.ok("Ack of the other delivery", c.Ack())
	e.waitState(q, 0, 1)
	e.sendBody(q, "d")
	d = e.receive(s)
	if string(d.Body) != "d" || d.Redelivered {
		e.t.Errorf("got %q redelivered=%v, want d, fresh", d.Body, d.Redelivered)
	}
	e.ok("Ack", d.Ack())
}

// A quorum queue writes x-delivery-count into a delivery once the message
// has been returned, one more after each requeue, whatever the publisher
// put there; RabbitMQ 3.10 writes it on every basic.get, 0 the first time,
// where 4.0 lets the publisher's own pass until the first return. RabbitMQ
// 4.3 counts there only the failed deliveries (a reject, not a nack), and
// every return in x-acquired-count, each written once above 0 (a
// publisher's own passes until then; earlier versions pass it always). A
// classic queue adds nothing (see "properties and headers survive the trip
// exactly"). A quorum queue settles through its log, so what a settlement
// changes is waited for.
func quorumDeliveryCount(e *env) {
	q := e.declareQueue(transport.Queue{Name: e.name("quorum"), Type: transport.Quorum, Durable: true})
	e.send(q, transport.Message{Body: []byte("m"), Headers: transport.Table{
		contract.HeaderDeliveryCount: int64(7), contract.HeaderAcquiredCount: int64(3), "h": "v"}})
	count := func(d transport.Delivery, delivery, acquired int64, redelivered bool) {
		e.t.Helper()
		gotDelivery, gotAcquired := d.Headers[contract.HeaderDeliveryCount], d.Headers[contract.HeaderAcquiredCount]
		if gotDelivery != delivery || gotAcquired != acquired || d.Redelivered != redelivered {
			e.t.Errorf("x-delivery-count = %#v, x-acquired-count = %#v, redelivered %v; want int64(%d), int64(%d), %v",
				gotDelivery, gotAcquired, d.Redelivered, delivery, acquired, redelivered)
		}
		if d.Headers["h"] != "v" {
			e.t.Errorf("header h = %#v, want v", d.Headers["h"])
		}
	}
	d := e.getBody(q, "m")
	count(d, since(e, 4, 0, int64(0), 7), 3, false)
	e.ok("Nack(requeue)", d.Nack(true))
	d = e.waitGet(q)
	count(d, since(e, 4, 3, int64(1), 7), since(e, 4, 3, int64(3), 1), true)
	e.ok("Reject(requeue)", d.Reject(true))
	s := e.consume(q, transport.ConsumeOptions{Prefetch: 1})
	d = e.receive(s)
	count(d, since(e, 4, 3, int64(2), 1), since(e, 4, 3, int64(3), 2), true)
	e.ok("Ack", d.Ack())
	e.waitState(q, 0, 1)
}

// Unlike a classic queue, a quorum queue puts a message nacked with requeue
// at the back on RabbitMQ 3.10; on 4.0 at the front, before every message
// never delivered.
func quorumRequeuePlace(e *env) {
	q := e.declareQueue(transport.Queue{Name: e.name("quorum"), Type: transport.Quorum, Durable: true})
	for _, s := range []string{"A", "B", "C"} {
		e.sendBody(q, s)
	}
	e.ok("Nack(requeue) A", e.getBody(q, "A").Nack(true))
	e.waitState(q, 3, 0)
	var got []string
	for range 3 {
		d := e.mustGet(q)
		got = append(got, fmt.Sprintf("%s/%v", d.Body, d.Redelivered))
		e.ok("Ack", d.Ack())
	}
	if want := since(e, 4, 0, []string{"B/false", "C/false", "A/true"}, []string{"A/true", "B/false", "C/false"}); !slices.Equal(got, want) {
		e.t.Errorf("after requeueing A got %q, want %q", got, want)
	}
}

// When the broker cancels a consumer because its queue was deleted, the
// subscription runs Setup again (which declares the queue anew) and
// subscribes again; its Deliveries go on throughout.
func resubscribeAfterDelete(e *env) {
	q := e.name("q")
	e.deleteQueueLater(e.tr, q)
	var setups atomic.Int32
	s := e.consume(q, transport.ConsumeOptions{Prefetch: 1, Setup: func(ctx context.Context, d transport.Declarer) error {
		setups.Add(1)
		return d.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true})
	}})
	e.waitState(q, 0, 1)
	n, err := e.tr.DeleteQueue(e.ctx, q)
	if n != 0 || err != nil {
		e.t.Fatalf("DeleteQueue = %d, %v", n, err)
	}
	e.eventually("the queue declared again by Setup, with its consumer", func() bool {
		st, err := e.tr.InspectQueue(e.ctx, q)
		return err == nil && st.Consumers == 1
	})
	if n := setups.Load(); n != 2 {
		e.t.Errorf("Setup ran %d times, want 2", n)
	}
	e.sendBody(q, "m")
	d := e.receive(s)
	if string(d.Body) != "m" {
		e.t.Errorf("got %q", d.Body)
	}
	e.ok("Ack", d.Ack())
	// Cancelled before the cleanup deletes the queue: Setup would declare it
	// again.
	e.ok("Cancel", s.Cancel(e.ctx))
	e.waitClosed(s)
}

// Close is final: every operation afterwards fails with ErrClosed, and a
// second Close is harmless.
func operationsAfterClose(e *env) {
	q := e.classic("q", nil)
	tr := e.connect()
	if st := tr.State(); !st.Connected || st.Closed || st.Blocked || st.Connects != 1 || st.LastError != nil {
		e.t.Errorf("a new connection's State: %+v, want connected once, not blocked, no error", st)
	}
	s := e.consumeOn(tr, q, transport.ConsumeOptions{})
	e.ok("Close", tr.Close())
	if st := tr.State(); st.Connected || !st.Closed {
		e.t.Errorf("State after Close: %+v, want closed and not connected", st)
	}
	e.waitClosed(s)
	second := func(_ any, err error) error { return err }
	for name, err := range map[string]error{
		"DeclareExchange": tr.DeclareExchange(e.ctx, transport.Exchange{Name: e.name("x"), Type: transport.Direct}),
		"DeclareQueue":    tr.DeclareQueue(e.ctx, transport.Queue{Name: e.name("q")}),
		"Bind":            tr.Bind(e.ctx, transport.Binding{Queue: q, Exchange: "amq.direct", RoutingKey: q}),
		"InspectQueue":    second(tr.InspectQueue(e.ctx, q)),
		"PurgeQueue":      second(tr.PurgeQueue(e.ctx, q)),
		"DeleteQueue":     second(tr.DeleteQueue(e.ctx, q)),
		"Publish":         second(tr.Publish(e.ctx, transport.Publishing{RoutingKey: q})),
		"Consume":         second(tr.Consume(e.ctx, q, transport.ConsumeOptions{})),
		"Get":             func() error { _, _, err := tr.Get(e.ctx, q); return err }(),
	} {
		e.wantErr(name+" after Close", err, transport.ErrClosed)
	}
	e.ok("a second Close", tr.Close())
	// Nothing of that reached the broker.
	e.wantState(q, 0, 0)
}

// RabbitMQ 3.10 and 4.0: 406 "invalid arg 'x-stream-offset' for queue 'Q' in
// vhost '/' of queue type rabbit_classic_queue" (rabbit_quorum_queue), and
// no consumer is left on the queue.
func streamOffsetRefused(e *env) {
	first := func() transport.Table { return transport.Table{contract.ArgStreamOffset: contract.StreamOffsetFirst} }
	for _, typ := range []transport.QueueType{transport.Classic, transport.Quorum} {
		q := e.declareQueue(transport.Queue{Name: e.name(string(typ)), Type: typ, Durable: true})
		s, err := e.tr.Consume(e.ctx, q, transport.ConsumeOptions{Prefetch: 1, Arguments: first})
		e.wantErr("consuming a "+string(typ)+" queue with x-stream-offset", err, transport.ErrPreconditionFailed,
			contract.ArgStreamOffset, q, "of queue type rabbit_"+string(typ)+"_queue")
		if err == nil && s != nil {
			_ = s.Cancel(e.ctx)
		}
		e.wantState(q, 0, 0)
	}
}
