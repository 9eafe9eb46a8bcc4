package transporttest

import (
	"context"
	"errors"
	"fmt"
	"slices"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

func queueBehaviours() []behaviour {
	return []behaviour{
		{"queue declared twice with the same arguments", redeclareSame},
		{"integer arguments compare by value not width", redeclareIntegerWidths},
		{"arguments the broker does not know are not compared", redeclareUnknownArguments},
		{"queue redeclared with other properties or arguments fails", redeclareDifferent},
		{"queue redeclared with another exclusive flag is locked", redeclareExclusive},
		{"quorum queue must be durable and neither exclusive nor auto-delete", quorumProperties},
		{"operations on a missing queue", missingQueue},
		{"operations with an ended context fail and do nothing", endedContext},
		{"exclusive queue refuses other connections", exclusiveRefusesOthers},
		{"exclusive queue is deleted when its connection closes", exclusiveGoesWithConnection},
		{"auto-delete queue is deleted after its last consumer is cancelled", autoDelete},
		{"purge removes the ready messages and says how many", purge},
		{"delete says how many ready messages the queue held", deleteCount},
		{"message counts are ready messages not unacked ones", readyVersusUnacked},
		{"a quorum queue counts each unsettled get as a consumer", quorumGetConsumers},
		{"a stream queue is declared like any other, and read only by a consumer", streamQueue},
		{"an unknown queue type is refused", unknownQueueType},
		{"invalid queue arguments are refused", invalidQueueArguments},
		{"decimal queue arguments", decimalQueueArguments},
	}
}

func redeclareSame(e *env) {
	for _, q := range []transport.Queue{
		{Name: e.name("classic"), Type: transport.Classic, Durable: true, Arguments: transport.Table{
			contract.ArgMessageTTL: int64(1000), contract.ArgDeadLetterExchange: contract.RetryExchange, contract.ArgDeadLetterRoutingKey: "src"}},
		{Name: e.name("quorum"), Type: transport.Quorum, Durable: true, Arguments: transport.Table{
			contract.ArgDeadLetterExchange: contract.DeadLetterExchange, contract.ArgDeadLetterRoutingKey: "src.dlq"}},
		// A transient queue that is not exclusive: RabbitMQ 4.3.6 still
		// takes it (its deprecated feature transient_nonexcl_queues is
		// permitted by default; the node logs a warning).
		{Name: e.name("transient"), Type: transport.Classic},
		{Name: e.name("autodelete"), Type: transport.Classic, AutoDelete: true},
	} {
		e.declareQueue(q)
		e.ok("declaring "+q.String()+" again", e.tr.DeclareQueue(e.ctx, q))
		e.wantState(q.Name, 0, 0)
	}
	// Classic is no x-queue-type at all: an empty Type is the same queue.
	q := e.classic("q", nil)
	e.ok("redeclaring a classic queue with an empty Type", e.tr.DeclareQueue(e.ctx, transport.Queue{Name: q, Durable: true}))
}

// RabbitMQ compares integer arguments by value: x-message-ttl sent as an
// AMQP int (Java's Integer) and as a long (acemq's int64) is one queue.
func redeclareIntegerWidths(e *env) {
	q := e.classic("q", transport.Table{contract.ArgMessageTTL: int32(1000)})
	for _, v := range []any{int64(1000), int16(1000), int32(1000)} {
		err := e.tr.DeclareQueue(e.ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true, Arguments: transport.Table{contract.ArgMessageTTL: v}})
		if err != nil {
			e.t.Errorf("redeclaring x-message-ttl 1000 (int32) as %T: %v", v, err)
		}
	}
	// A string is not an integer.
	err := e.tr.DeclareQueue(e.ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true, Arguments: transport.Table{contract.ArgMessageTTL: "1000"}})
	e.wantErr(`redeclaring x-message-ttl 1000 as "1000"`, err, transport.ErrPreconditionFailed, q, contract.ArgMessageTTL)
}

// RabbitMQ compares only the arguments it knows (x-message-ttl,
// x-dead-letter-*, x-queue-type, x-max-length...): others may differ.
func redeclareUnknownArguments(e *env) {
	q := e.classic("q", transport.Table{"x-app-owner": "a", "note": "first"})
	for _, args := range []transport.Table{
		{"x-app-owner": "b", "note": "second"},
		{"x-app-owner": int64(3)},
		nil,
	} {
		err := e.tr.DeclareQueue(e.ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true, Arguments: args})
		if err != nil {
			e.t.Errorf("redeclaring with unknown arguments %s: %v", transport.FormatTable(args), err)
		}
	}
}

// RabbitMQ answers 406 PRECONDITION_FAILED "inequivalent arg 'ARG' for queue
// 'Q' in vhost '/': received ... but current is ...": the queue's name and
// the argument are in the message.
func redeclareDifferent(e *env) {
	ttl := func(v any) transport.Table { return transport.Table{contract.ArgMessageTTL: v} }
	tests := []struct {
		name          string
		first, second transport.Queue
		arg           string
	}{
		{"classic as quorum", transport.Queue{Type: transport.Classic, Durable: true}, transport.Queue{Type: transport.Quorum, Durable: true}, contract.ArgQueueType},
		{"quorum as classic", transport.Queue{Type: transport.Quorum, Durable: true}, transport.Queue{Type: transport.Classic, Durable: true}, contract.ArgQueueType},
		{"durable as transient", transport.Queue{Type: transport.Classic, Durable: true}, transport.Queue{Type: transport.Classic}, "durable"},
		{"transient as durable", transport.Queue{Type: transport.Classic}, transport.Queue{Type: transport.Classic, Durable: true}, "durable"},
		{"auto-delete", transport.Queue{Type: transport.Classic, Durable: true}, transport.Queue{Type: transport.Classic, Durable: true, AutoDelete: true}, "auto_delete"},
		{"not auto-delete", transport.Queue{Type: transport.Classic, AutoDelete: true}, transport.Queue{Type: transport.Classic}, "auto_delete"},
		{"another ttl", transport.Queue{Type: transport.Classic, Durable: true, Arguments: ttl(int64(1000))}, transport.Queue{Type: transport.Classic, Durable: true, Arguments: ttl(int64(2000))}, contract.ArgMessageTTL},
		{"a ttl added", transport.Queue{Type: transport.Classic, Durable: true}, transport.Queue{Type: transport.Classic, Durable: true, Arguments: ttl(int64(1000))}, contract.ArgMessageTTL},
		{"the ttl left out", transport.Queue{Type: transport.Classic, Durable: true, Arguments: ttl(int64(1000))}, transport.Queue{Type: transport.Classic, Durable: true}, contract.ArgMessageTTL},
		{"another dead-letter exchange",
			transport.Queue{Type: transport.Quorum, Durable: true, Arguments: transport.Table{contract.ArgDeadLetterExchange: contract.DeadLetterExchange}},
			transport.Queue{Type: transport.Quorum, Durable: true, Arguments: transport.Table{contract.ArgDeadLetterExchange: "other.dlx"}},
			contract.ArgDeadLetterExchange},
		{"a dead-letter exchange added",
			transport.Queue{Type: transport.Quorum, Durable: true},
			transport.Queue{Type: transport.Quorum, Durable: true, Arguments: transport.Table{contract.ArgDeadLetterExchange: contract.DeadLetterExchange}},
			contract.ArgDeadLetterExchange},
		{"another dead-letter routing key",
			transport.Queue{Type: transport.Classic, Durable: true, Arguments: transport.Table{contract.ArgDeadLetterExchange: contract.RetryExchange, contract.ArgDeadLetterRoutingKey: "a"}},
			transport.Queue{Type: transport.Classic, Durable: true, Arguments: transport.Table{contract.ArgDeadLetterExchange: contract.RetryExchange, contract.ArgDeadLetterRoutingKey: "b"}},
			contract.ArgDeadLetterRoutingKey},
	}
	for _, tt := range tests {
		first := tt.first
		first.Name = e.name("q")
		e.declareQueue(first)
		second := tt.second
		second.Name = first.Name
		err := e.tr.DeclareQueue(e.ctx, second)
		e.wantErr("redeclaring "+tt.name+" ("+first.String()+" as "+second.String()+")", err, transport.ErrPreconditionFailed, first.Name, tt.arg)
		// The queue is unchanged: its own declaration still agrees.
		e.ok("declaring "+first.String()+" again after the refusal", e.tr.DeclareQueue(e.ctx, first))
	}
}

// wantLocked asserts RabbitMQ's answer to touching another connection's
// exclusive queue, or redeclaring a queue with another exclusive flag: 405
// RESOURCE_LOCKED "cannot obtain exclusive access to locked queue 'Q' in
// vhost '/'. It could be originally declared on another connection or the
// exclusive property value does not match that of the original
// declaration." No transport sentinel matches it (not ErrNotFound, not
// ErrPreconditionFailed); the message names the queue and says "exclusive
// access".
func (e *env) wantLocked(what string, err error, queue string) {
	e.t.Helper()
	e.wantErr(what, err, nil, queue, "exclusive access")
	if errors.Is(err, transport.ErrNotFound) || errors.Is(err, transport.ErrPreconditionFailed) {
		e.t.Errorf("%s: %v matches ErrNotFound or ErrPreconditionFailed; RabbitMQ answers RESOURCE_LOCKED (405)", what, err)
	}
}

func redeclareExclusive(e *env) {
	q := e.classic("q", nil)
	err := e.tr.DeclareQueue(e.ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true, Exclusive: true})
	e.wantLocked("redeclaring a queue as exclusive", err, q)

	x := e.declareQueue(transport.Queue{Name: e.name("excl"), Type: transport.Classic, Exclusive: true})
	err = e.tr.DeclareQueue(e.ctx, transport.Queue{Name: x, Type: transport.Classic})
	e.wantLocked("redeclaring an exclusive queue as not exclusive on its own connection", err, x)
	e.ok("declaring the exclusive queue again", e.tr.DeclareQueue(e.ctx, transport.Queue{Name: x, Type: transport.Classic, Exclusive: true}))
}

// RabbitMQ: 406 "invalid property 'non-durable' | 'exclusive-owner' |
// 'auto-delete' for queue 'Q' in vhost '/'".
func quorumProperties(e *env) {
	tests := []struct {
		q    transport.Queue
		word string
	}{
		{transport.Queue{Type: transport.Quorum}, "non-durable"},
		{transport.Queue{Type: transport.Quorum, Durable: true, Exclusive: true}, "exclusive"},
		{transport.Queue{Type: transport.Quorum, Durable: true, AutoDelete: true}, "auto-delete"},
	}
	for _, tt := range tests {
		q := tt.q
		q.Name = e.name("quorum")
		e.deleteQueueLater(e.tr, q.Name)
		err := e.tr.DeclareQueue(e.ctx, q)
		e.wantErr("declaring "+q.String(), err, transport.ErrPreconditionFailed, q.Name, tt.word)
		_, err = e.tr.InspectQueue(e.ctx, q.Name)
		e.wantErr("inspecting the refused queue", err, transport.ErrNotFound)
	}
}

func missingQueue(e *env) {
	q := e.name("missing")
	_, err := e.tr.InspectQueue(e.ctx, q)
	e.wantErr("InspectQueue", err, transport.ErrNotFound, q)
	_, err = e.tr.PurgeQueue(e.ctx, q)
	e.wantErr("PurgeQueue", err, transport.ErrNotFound, q)
	_, _, err = e.tr.Get(e.ctx, q)
	e.wantErr("Get", err, transport.ErrNotFound, q)
	s, err := e.tr.Consume(e.ctx, q, transport.ConsumeOptions{})
	e.wantErr("Consume", err, transport.ErrNotFound, q)
	if err == nil && s != nil {
		_ = s.Cancel(e.ctx)
	}
	// Deleting what is not there succeeds: queue.delete is idempotent.
	n, err := e.tr.DeleteQueue(e.ctx, q)
	if n != 0 || err != nil {
		e.t.Errorf("DeleteQueue of a missing queue = %d, %v; want 0, nil", n, err)
	}
	// The default exchange has nowhere to route it.
	err = e.publish(transport.Publishing{RoutingKey: q, Mandatory: true})
	e.wantErr("mandatory publish to a missing queue", err, transport.ErrUnroutable)
}

func endedContext(e *env) {
	q := e.classic("q", nil)
	e.sendBody(q, "kept")
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	declared := e.name("never")
	e.wantErr("DeclareQueue with an ended context", e.tr.DeclareQueue(ctx, transport.Queue{Name: declared, Type: transport.Classic}), context.Canceled)
	_, err := e.tr.InspectQueue(e.ctx, declared)
	e.wantErr("InspectQueue of the queue declared with an ended context", err, transport.ErrNotFound, declared)
	_, err = e.tr.PurgeQueue(ctx, q)
	e.wantErr("PurgeQueue with an ended context", err, context.Canceled)
	_, err = e.tr.DeleteQueue(ctx, q)
	e.wantErr("DeleteQueue with an ended context", err, context.Canceled)
	e.wantState(q, 1, 0)
	e.getBody(q, "kept")
}

func exclusiveRefusesOthers(e *env) {
	owner := e.connect()
	q := e.declareQueueOn(owner, transport.Queue{Name: e.name("excl"), Type: transport.Classic, Exclusive: true})
	other := e.tr

	err := other.DeclareQueue(e.ctx, transport.Queue{Name: q, Type: transport.Classic, Exclusive: true})
	e.wantLocked("declaring it (exclusive) on another connection", err, q)
	err = other.DeclareQueue(e.ctx, transport.Queue{Name: q, Type: transport.Classic})
	e.wantLocked("declaring it (not exclusive) on another connection", err, q)
	_, err = other.InspectQueue(e.ctx, q)
	e.wantLocked("InspectQueue on another connection", err, q)
	s, err := other.Consume(e.ctx, q, transport.ConsumeOptions{})
	e.wantLocked("Consume on another connection", err, q)
	if err == nil && s != nil {
		_ = s.Cancel(e.ctx)
	}
	_, _, err = other.Get(e.ctx, q)
	e.wantLocked("Get on another connection", err, q)
	_, err = other.PurgeQueue(e.ctx, q)
	e.wantLocked("PurgeQueue on another connection", err, q)
	_, err = other.DeleteQueue(e.ctx, q)
	e.wantLocked("DeleteQueue on another connection", err, q)

	// Anyone may publish to it; only its owner reads it.
	e.sendBody(q, "from the other connection")
	if st := e.inspectOn(owner, q); st.Messages != 1 {
		e.t.Errorf("the exclusive queue holds %d messages, want 1", st.Messages)
	}
	d, ok := e.getOn(owner, q)
	if !ok || string(d.Body) != "from the other connection" {
		e.t.Fatalf("the owner's Get = %q, %v", d.Body, ok)
	}
	e.ok("Ack", d.Ack())
	s = e.consumeOn(owner, q, transport.ConsumeOptions{})
	e.sendBody(q, "consumed")
	if d := e.receive(s); string(d.Body) != "consumed" {
		e.t.Errorf("the owner's consumer got %q", d.Body)
	} else {
		e.ok("Ack", d.Ack())
	}
}

func exclusiveGoesWithConnection(e *env) {
	owner := e.connect()
	q := e.declareQueueOn(owner, transport.Queue{Name: e.name("excl"), Type: transport.Classic, Exclusive: true})
	e.sendBody(q, "m")
	e.consumeOn(owner, q, transport.ConsumeOptions{Prefetch: 1})
	e.ok("closing the owner", owner.Close())
	e.waitGone(e.tr, q)
	// Gone, not merely empty: another connection can declare it afresh.
	e.declareQueue(transport.Queue{Name: q, Type: transport.Classic, Exclusive: true})
	e.wantState(q, 0, 0)
}

// An auto-delete queue lives until its last consumer goes, not before it has
// had one.
func autoDelete(e *env) {
	q := e.declareQueue(transport.Queue{Name: e.name("autodelete"), Type: transport.Classic, AutoDelete: true})
	e.wantState(q, 0, 0)
	other := e.connect()
	s1 := e.consume(q, transport.ConsumeOptions{})
	s2 := e.consumeOn(other, q, transport.ConsumeOptions{})
	e.waitState(q, 0, 2)
	e.ok("Cancel the first consumer", s1.Cancel(e.ctx))
	e.waitClosed(s1)
	e.waitState(q, 0, 1)
	e.ok("Cancel the last consumer", s2.Cancel(e.ctx))
	e.waitClosed(s2)
	e.waitGone(e.tr, q)
}

// Purge removes what is ready; a delivery not yet settled is not ready and
// comes back when requeued.
func purge(e *env) {
	q := e.classic("q", nil)
	for _, s := range []string{"a", "b", "c"} {
		e.sendBody(q, s)
	}
	held := e.getBody(q, "a")
	n, err := e.tr.PurgeQueue(e.ctx, q)
	if err != nil || n != 2 {
		e.t.Errorf("PurgeQueue = %d, %v; want 2 (the unacked one is not ready)", n, err)
	}
	e.wantState(q, 0, 0)
	e.ok("Nack(requeue)", held.Nack(true))
	e.wantState(q, 1, 0)
	n, err = e.tr.PurgeQueue(e.ctx, q)
	if err != nil || n != 1 {
		e.t.Errorf("second PurgeQueue = %d, %v; want 1", n, err)
	}
	n, err = e.tr.PurgeQueue(e.ctx, q)
	if err != nil || n != 0 {
		e.t.Errorf("PurgeQueue of an empty queue = %d, %v; want 0", n, err)
	}
}

// Delete reports the ready messages, not those delivered and unsettled;
// settling one of those afterwards still succeeds (on RabbitMQ the
// delivery's channel stays open).
func deleteCount(e *env) {
	q := e.classic("q", nil)
	for _, s := range []string{"a", "b", "c"} {
		e.sendBody(q, s)
	}
	held := e.getBody(q, "a")
	n, err := e.tr.DeleteQueue(e.ctx, q)
	if err != nil || n != 2 {
		e.t.Errorf("DeleteQueue = %d, %v; want 2 (ready messages only)", n, err)
	}
	_, err = e.tr.InspectQueue(e.ctx, q)
	e.wantErr("InspectQueue after DeleteQueue", err, transport.ErrNotFound)
	e.ok("Ack of a delivery whose queue was deleted", held.Ack())

	empty := e.classic("q", nil)
	n, err = e.tr.DeleteQueue(e.ctx, empty)
	if err != nil || n != 0 {
		e.t.Errorf("DeleteQueue of an empty queue = %d, %v; want 0", n, err)
	}
}

func readyVersusUnacked(e *env) {
	q := e.classic("q", nil)
	for _, s := range []string{"a", "b", "c", "d"} {
		e.sendBody(q, s)
	}
	e.wantState(q, 4, 0)
	a, b := e.getBody(q, "a"), e.getBody(q, "b")
	e.wantState(q, 2, 0)
	s := e.consume(q, transport.ConsumeOptions{Prefetch: 1})
	c := e.receive(s)
	e.waitState(q, 1, 1)
	e.ok("Nack(requeue) a", a.Nack(true))
	e.ok("Reject(requeue) b", b.Reject(true))
	// The consumer is full (prefetch 1): both stay ready.
	e.waitState(q, 3, 1)
	e.ok("Ack c", c.Ack())
	got := []string{string(c.Body)}
	for range 3 {
		d := e.receive(s)
		got = append(got, string(d.Body))
		e.ok("Ack", d.Ack())
	}
	e.waitState(q, 0, 1)
	if !slices.Equal(got, []string{"c", "a", "b", "d"}) {
		e.t.Errorf("consumed %q, want c then the requeued a and b in their places, then d", got)
	}
}

// RabbitMQ 3.10 and 4.0: a basic.get on a quorum queue registers a consumer
// until the delivery is settled (a classic queue does not: see "message
// counts are ready messages not unacked ones").
func quorumGetConsumers(e *env) {
	q := e.declareQueue(transport.Queue{Name: e.name("quorum"), Type: transport.Quorum, Durable: true})
	for _, b := range []string{"a", "b", "c"} {
		e.sendBody(q, b)
	}
	a := e.getBody(q, "a")
	e.wantState(q, 2, 1)
	b := e.getBody(q, "b")
	e.wantState(q, 1, 2)
	e.ok("Ack", a.Ack())
	e.ok("Ack", b.Ack())
	e.waitState(q, 1, 0)
}

// RabbitMQ has stream queues (x-queue-type: stream); they cannot be
// read with basic.get (540 NOT_IMPLEMENTED "basic.get not supported by stream
// queues", which closes the connection), only by a consumer with a prefetch.
func streamQueue(e *env) {
	q := e.declareQueue(transport.Queue{Name: e.name("stream"), Type: transport.Stream, Durable: true})
	e.ok("declaring the stream again", e.tr.DeclareQueue(e.ctx, transport.Queue{Name: q, Type: transport.Stream, Durable: true}))
	err := e.tr.DeclareQueue(e.ctx, transport.Queue{Name: q, Type: transport.Quorum, Durable: true})
	e.wantErr("redeclaring a stream as quorum", err, transport.ErrPreconditionFailed, q, contract.ArgQueueType)
	e.sendBody(q, "m")
	_, _, err = e.tr.Get(e.ctx, q)
	e.wantErr("Get from a stream", err, nil, "basic.get not supported")
	// A stream consumer needs a prefetch; it reads from its x-stream-offset,
	// and every delivery carries its offset, a long.
	first := func() transport.Table { return transport.Table{contract.ArgStreamOffset: contract.StreamOffsetFirst} }
	s, err := e.tr.Consume(e.ctx, q, transport.ConsumeOptions{Arguments: first})
	e.wantErr("consuming a stream without a prefetch", err, transport.ErrPreconditionFailed, "prefetch count is not set")
	if err == nil && s != nil {
		_ = s.Cancel(e.ctx)
	}
	s = e.consume(q, transport.ConsumeOptions{Prefetch: 1, Arguments: first})
	d := e.receive(s)
	if string(d.Body) != "m" || d.Headers[contract.ArgStreamOffset] != int64(0) {
		e.t.Errorf("the first delivery from the stream: %q with %s %#v, want \"m\" at int64(0)", d.Body, contract.ArgStreamOffset, d.Headers[contract.ArgStreamOffset])
	}
	e.ok("Ack", d.Ack())
}

// RabbitMQ: 406 "invalid arg 'x-queue-type' for queue 'Q' in vhost '/':
// \"unsupported queue type 'bogus'\"".
func unknownQueueType(e *env) {
	q := e.name("q")
	e.deleteQueueLater(e.tr, q)
	err := e.tr.DeclareQueue(e.ctx, transport.Queue{Name: q, Type: "bogus", Durable: true})
	e.wantErr("declaring a queue of type bogus", err, transport.ErrPreconditionFailed, q, contract.ArgQueueType, "bogus")
	_, err = e.tr.InspectQueue(e.ctx, q)
	e.wantErr("InspectQueue of the refused queue", err, transport.ErrNotFound)
}

// RabbitMQ validates the arguments it knows: 406 "invalid arg 'ARG' for
// queue 'Q' in vhost '/': {value_negative,-1}" and the like.
func invalidQueueArguments(e *env) {
	for _, tt := range []struct {
		args transport.Table
		arg  string
	}{
		{transport.Table{contract.ArgMessageTTL: int64(-1)}, contract.ArgMessageTTL},
		{transport.Table{contract.ArgMessageTTL: "100"}, contract.ArgMessageTTL},
		{transport.Table{contract.ArgMessageTTL: 1.5}, contract.ArgMessageTTL},
		{transport.Table{contract.ArgDeadLetterRoutingKey: "k"}, contract.ArgDeadLetterRoutingKey},
		{transport.Table{contract.ArgDeadLetterExchange: int64(1)}, contract.ArgDeadLetterExchange},
		{transport.Table{contract.ArgDeadLetterExchange: "", contract.ArgDeadLetterRoutingKey: int64(1)}, contract.ArgDeadLetterRoutingKey},
		{transport.Table{contract.ArgMaxLength: int64(-1)}, contract.ArgMaxLength},
		{transport.Table{contract.ArgExpires: int64(0)}, contract.ArgExpires},
	} {
		q := e.name("q")
		e.deleteQueueLater(e.tr, q)
		err := e.tr.DeclareQueue(e.ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true, Arguments: tt.args})
		e.wantErr("declaring a queue with "+transport.FormatTable(tt.args), err, transport.ErrPreconditionFailed, q, tt.arg)
		_, err = e.tr.InspectQueue(e.ctx, q)
		e.wantErr("InspectQueue of the refused queue", err, transport.ErrNotFound)
	}
	// A TTL of 0 is valid.
	e.classic("q", transport.Table{contract.ArgMessageTTL: int64(0)})
}

// A decimal is a valid AMQP value, so RabbitMQ takes it for an argument it
// does not check, and refuses it, with its type named 'decimal', for one it
// does. Printing one, it reads its value as unsigned ({1,4294967291} for a
// value of -5). A decimal that differs from the current value of a compared
// argument fails on both versions with 541 INTERNAL_ERROR, a connection
// exception: the transport reconnects.
func decimalQueueArguments(e *env) {
	dec := amqp.Decimal{Scale: 2, Value: 12345}
	for _, tt := range []struct {
		args transport.Table
		text string
	}{
		{transport.Table{contract.ArgMessageTTL: dec}, `invalid arg 'x-message-ttl' for queue '%s' in vhost '/': \"expected integer, got decimal\"`}, // quoted by %q
		{transport.Table{contract.ArgOverflow: dec}, `invalid arg 'x-overflow' for queue '%s' in vhost '/': {unacceptable_type,decimal}`},
		{transport.Table{contract.ArgDeadLetterExchange: dec}, `invalid type 'decimal' for arg 'x-dead-letter-exchange' in queue '%s' in vhost '/'`},
	} {
		q := e.name("q")
		e.deleteQueueLater(e.tr, q)
		err := e.tr.DeclareQueue(e.ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true, Arguments: tt.args})
		e.wantErr("declaring a queue with "+transport.FormatTable(tt.args), err, transport.ErrPreconditionFailed, fmt.Sprintf(tt.text, q))
	}

	q := e.classic("q", transport.Table{"x-app-note": dec})
	e.ok("redeclaring with another decimal in an argument not compared",
		e.tr.DeclareQueue(e.ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true, Arguments: transport.Table{"x-app-note": amqp.Decimal{Value: -5}}}))
	err := e.tr.DeclareQueue(e.ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true,
		Arguments: transport.Table{"x-app-note": dec, contract.ArgMaxLength: amqp.Decimal{Scale: 1, Value: -5}}})
	e.wantErr("redeclaring with a decimal x-max-length", err, transport.ErrPreconditionFailed,
		fmt.Sprintf("inequivalent arg 'x-max-length' for queue '%s' in vhost '/': received the value '{1,4294967291}' of type 'decimal' but current is none", q))

	// x-delivery-limit is compared but not checked: a quorum queue takes a
	// decimal one.
	tr := e.connect()
	limit := func(v any) transport.Queue {
		return transport.Queue{Name: e.name("quorum"), Type: transport.Quorum, Durable: true, Arguments: transport.Table{contract.ArgDeliveryLimit: v}}
	}
	qq := limit(dec)
	e.declareQueueOn(e.tr, qq)
	e.ok("redeclaring with the same decimal", tr.DeclareQueue(e.ctx, qq))
	none := qq
	none.Arguments = nil
	e.wantErr("redeclaring without the decimal", tr.DeclareQueue(e.ctx, none), transport.ErrPreconditionFailed,
		fmt.Sprintf("inequivalent arg 'x-delivery-limit' for queue '%s' in vhost '/': received none but current is the value '{2,12345}' of type 'decimal'", qq.Name))
	for i, v := range []any{int64(5), amqp.Decimal{Scale: 2, Value: 1}} {
		other := qq
		other.Arguments = transport.Table{contract.ArgDeliveryLimit: v}
		err := tr.DeclareQueue(e.ctx, other)
		what := "redeclaring the decimal x-delivery-limit as " + transport.FormatTable(other.Arguments)
		e.wantErr(what, err, nil, "INTERNAL_ERROR")
		if errors.Is(err, transport.ErrPreconditionFailed) {
			e.t.Errorf("%s: %v matches ErrPreconditionFailed; RabbitMQ answers INTERNAL_ERROR (541)", what, err)
		}
		e.eventually("the transport connected again", func() bool { return tr.State().Connects == i+2 })
	}
	e.ok("declaring the quorum queue as it is", e.tr.DeclareQueue(e.ctx, qq))
}
