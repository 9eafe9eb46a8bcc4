package memory_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/acemq-go/acemq/transport"
)

// A five-minute retry rung expires on Advance, with nothing consuming it,
// and its message goes through the dead-letter exchange to another queue
// with x-death as RabbitMQ 3.10 writes it.
func TestRungExpiresOnAdvance(t *testing.T) {
	b, clock := testBroker(t)
	tr := connect(t, b)
	declareExchange(t, tr, "acemq.retry", transport.Direct)
	declareQueue(t, tr, transport.Queue{Name: "orders", Type: transport.Quorum, Durable: true})
	bind(t, tr, "orders", "acemq.retry", "orders")
	rung := "orders.retry.5m"
	declareQueue(t, tr, transport.Queue{Name: rung, Type: transport.Classic, Durable: true, Arguments: transport.Table{
		"x-message-ttl": int64(300_000), "x-dead-letter-exchange": "acemq.retry", "x-dead-letter-routing-key": "orders"}})
	send(t, tr, rung, transport.Message{Body: []byte("m"), Persistent: true, MessageID: "id-1",
		Headers: transport.Table{"x-acemq-attempt": int64(2)}})

	clock.Advance(5*time.Minute - time.Millisecond)
	wantState(t, tr, rung, 1, 0)
	wantState(t, tr, "orders", 0, 0)
	clock.Advance(time.Millisecond)
	wantState(t, tr, rung, 0, 0)

	d := mustGet(t, tr, "orders", "m")
	if d.Exchange != "acemq.retry" || d.RoutingKey != "orders" || d.Redelivered || d.MessageID != "id-1" || !d.Persistent {
		t.Errorf("delivered %+v", d)
	}
	expired := time.Unix(epoch.Add(5*time.Minute).Unix(), 0)
	want := transport.Table{
		"x-acemq-attempt": int64(2),
		"x-death": []any{transport.Table{
			"count":        int64(1),
			"reason":       "expired",
			"queue":        rung,
			"time":         expired,
			"exchange":     "",
			"routing-keys": []any{rung},
		}},
		"x-first-death-exchange": "",
		"x-first-death-queue":    rung,
		"x-first-death-reason":   "expired",
		"x-delivery-count":       int64(0), // the quorum queue's, on basic.get
	}
	if !reflect.DeepEqual(d.Headers, want) {
		t.Errorf("headers\n  %#v\nwant\n  %#v", d.Headers, want)
	}
	must(t, "Ack", d.Ack())
}

// THE reason rungs are queues with a TTL and never per-message expirations:
// RabbitMQ expires a classic queue's messages from the head only. A message
// expiring in one second waits behind one expiring in ten minutes.
func TestShortExpirationWaitsBehindLongOne(t *testing.T) {
	b, clock := testBroker(t)
	tr := connect(t, b)
	declareExchange(t, tr, "dlx", transport.Direct)
	declareQueue(t, tr, transport.Queue{Name: "dead", Durable: true})
	bind(t, tr, "dead", "dlx", "dead")
	declareQueue(t, tr, transport.Queue{Name: "src", Durable: true, Arguments: transport.Table{
		"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "dead"}})
	send(t, tr, "src", transport.Message{Body: []byte("ten minutes"), Expiration: "600000"})
	send(t, tr, "src", transport.Message{Body: []byte("one second"), Expiration: "1000"})

	clock.Advance(time.Second)
	wantState(t, tr, "src", 2, 0) // expired, but held back: still counted
	clock.Advance(10*time.Minute - time.Second - time.Millisecond)
	wantState(t, tr, "src", 2, 0)
	wantState(t, tr, "dead", 0, 0)
	clock.Advance(time.Millisecond)
	wantState(t, tr, "src", 0, 0)

	long := mustGet(t, tr, "dead", "ten minutes")
	short := mustGet(t, tr, "dead", "one second")
	for _, d := range []transport.Delivery{long, short} {
		if d.Expiration != "" {
			t.Errorf("%s: the dead letter keeps expiration %q", d.Body, d.Expiration)
		}
		death := d.Headers["x-death"].([]any)[0].(transport.Table)
		if death["time"] != time.Unix(epoch.Add(10*time.Minute).Unix(), 0) {
			t.Errorf("%s died at %v, want when the head expired", d.Body, death["time"])
		}
	}
	if got := short.Headers["x-death"].([]any)[0].(transport.Table)["original-expiration"]; got != "1000" {
		t.Errorf("original-expiration %#v, want \"1000\"", got)
	}
}

// Taking the head (basic.get, or a delivery) expires what is due behind it
// at once, as RabbitMQ's fetch does.
func TestFetchExpiresBehindTheHead(t *testing.T) {
	b, clock := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "dead"})
	declareQueue(t, tr, transport.Queue{Name: "src", Arguments: transport.Table{
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dead"}})
	send(t, tr, "src", transport.Message{Body: []byte("long"), Expiration: "60000"})
	send(t, tr, "src", transport.Message{Body: []byte("short"), Expiration: "100"})
	sendBody(t, tr, "src", "none")
	clock.Advance(time.Second)
	wantState(t, tr, "src", 3, 0)
	head := mustGet(t, tr, "src", "long")
	wantState(t, tr, "src", 1, 0)
	wantState(t, tr, "dead", 1, 0)
	// A requeued message keeps its expiry: back at the head, then due.
	must(t, "Nack(requeue)", head.Nack(true))
	wantState(t, tr, "src", 2, 0)
	clock.Advance(time.Minute)
	if got := drain(t, tr, "dead"); !slices.Equal(got, []string{"short", "long"}) {
		t.Errorf("dead-lettered %q", got)
	}
	if got := drain(t, tr, "src"); !slices.Equal(got, []string{"none"}) {
		t.Errorf("left %q", got)
	}
}

// A message-ttl of 0 reaches a consumer with room, else it expires at once.
func TestZeroTTL(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "dead"})
	declareQueue(t, tr, transport.Queue{Name: "q", Arguments: transport.Table{
		"x-message-ttl": int64(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dead"}})
	sendBody(t, tr, "q", "nobody")
	s, err := tr.Consume(ctxOf(t), "q", transport.ConsumeOptions{Prefetch: 1})
	must(t, "Consume", err)
	sendBody(t, tr, "q", "taken")
	sendBody(t, tr, "q", "no room")
	if d := receive(t, s); string(d.Body) != "taken" {
		t.Errorf("consumer got %q", d.Body)
	}
	if got := drain(t, tr, "dead"); !slices.Equal(got, []string{"nobody", "no room"}) {
		t.Errorf("dead-lettered %q", got)
	}
}

// x-death keeps one entry per queue and reason: the same death again
// increments its count (and nothing else) and moves it to the front.
func TestXDeathAcrossQueues(t *testing.T) {
	b, clock := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "work", Arguments: transport.Table{"x-dead-letter-exchange": ""}})
	declareQueue(t, tr, transport.Queue{Name: "wait", Arguments: transport.Table{
		"x-message-ttl": int64(1000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"}})
	sendBody(t, tr, "wait", "m")
	clock.Advance(time.Second)
	first := clock.Now()
	d := mustGet(t, tr, "work", "m")
	// Rejected into the default exchange under its own key ("work"): back
	// in work, a cycle RabbitMQ allows because it holds a rejection.
	must(t, "Reject", d.Reject(false))
	d = mustGet(t, tr, "work", "m")
	must(t, "Reject", d.Reject(false))
	d = mustGet(t, tr, "work", "m")
	// Republished to wait by a client, with its headers: expires again.
	send(t, tr, "wait", transport.Message{Body: []byte("m"), Headers: d.Headers})
	must(t, "Ack", d.Ack())
	clock.Advance(time.Hour)
	d = mustGet(t, tr, "work", "m")
	deaths := d.Headers["x-death"].([]any)
	if len(deaths) != 2 {
		t.Fatalf("x-death %#v", deaths)
	}
	wait, work := deaths[0].(transport.Table), deaths[1].(transport.Table)
	if wait["queue"] != "wait" || wait["reason"] != "expired" || wait["count"] != int64(2) || wait["time"] != time.Unix(first.Unix(), 0) {
		t.Errorf("x-death[0] = %#v, want wait expired twice, with the time of the first", wait)
	}
	if work["queue"] != "work" || work["reason"] != "rejected" || work["count"] != int64(2) {
		t.Errorf("x-death[1] = %#v, want work rejected twice", work)
	}
	if d.Headers["x-first-death-queue"] != "wait" || d.Headers["x-first-death-reason"] != "expired" {
		t.Errorf("x-first-death: %v %v", d.Headers["x-first-death-queue"], d.Headers["x-first-death-reason"])
	}
}

// RabbitMQ drops a dead letter that would return to a queue it died in
// with no rejection since: a queue expiring into itself loses the message.
func TestExpiryCycleIsDropped(t *testing.T) {
	b, clock := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "loop", Arguments: transport.Table{"x-message-ttl": int64(100), "x-dead-letter-exchange": ""}})
	sendBody(t, tr, "loop", "m")
	clock.Advance(time.Second)
	wantState(t, tr, "loop", 0, 0)
	// Two queues expiring into each other: once round, then dropped.
	declareQueue(t, tr, transport.Queue{Name: "a", Arguments: transport.Table{"x-message-ttl": int64(100), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "b"}})
	declareQueue(t, tr, transport.Queue{Name: "b", Arguments: transport.Table{"x-message-ttl": int64(100), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "a"}})
	sendBody(t, tr, "a", "m")
	clock.Advance(100 * time.Millisecond)
	wantState(t, tr, "b", 1, 0)
	clock.Advance(100 * time.Millisecond)
	wantState(t, tr, "a", 0, 0)
	wantState(t, tr, "b", 0, 0)
}

func TestMaxLength(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "dead"})
	dl := transport.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dead"}
	with := func(extra transport.Table) transport.Table {
		t := transport.Table{}
		for k, v := range dl {
			t[k] = v
		}
		for k, v := range extra {
			t[k] = v
		}
		return t
	}

	declareQueue(t, tr, transport.Queue{Name: "drop-head", Arguments: with(transport.Table{"x-max-length": int64(2)})})
	for _, s := range []string{"1", "2", "3"} {
		sendBody(t, tr, "drop-head", s)
	}
	if got := drain(t, tr, "drop-head"); !slices.Equal(got, []string{"2", "3"}) {
		t.Errorf("drop-head kept %q", got)
	}
	d := mustGet(t, tr, "dead", "1")
	if r := d.Headers["x-death"].([]any)[0].(transport.Table)["reason"]; r != "maxlen" {
		t.Errorf("reason %v, want maxlen", r)
	}
	must(t, "Ack", d.Ack())

	declareQueue(t, tr, transport.Queue{Name: "bytes", Arguments: with(transport.Table{"x-max-length-bytes": int64(5)})})
	for _, s := range []string{"123", "45", "6", "7890ab"} {
		sendBody(t, tr, "bytes", s)
	}
	if got := drain(t, tr, "bytes"); len(got) != 0 {
		t.Errorf("bytes kept %q (a message over the limit on its own goes too)", got)
	}
	if got := drain(t, tr, "dead"); !slices.Equal(got, []string{"123", "45", "6", "7890ab"}) {
		t.Errorf("dead-lettered %q", got)
	}

	for _, overflow := range []string{"reject-publish", "reject-publish-dlx"} {
		declareQueue(t, tr, transport.Queue{Name: overflow, Arguments: with(transport.Table{"x-max-length": int64(1), "x-overflow": overflow})})
		sendBody(t, tr, overflow, "kept")
		err := publish(t, tr, transport.Publishing{RoutingKey: overflow, Mandatory: true, Message: transport.Message{Body: []byte("refused")}})
		if !errorsIs(err, transport.ErrRefused) {
			t.Errorf("%s: publish over the limit: %v, want ErrRefused", overflow, err)
		}
		if got := drain(t, tr, overflow); !slices.Equal(got, []string{"kept"}) {
			t.Errorf("%s kept %q", overflow, got)
		}
	}
	if got := drain(t, tr, "dead"); !slices.Equal(got, []string{"refused"}) {
		t.Errorf("reject-publish-dlx dead-lettered %q, reject-publish nothing", got)
	}
}

// A quorum queue puts a requeued message at the back and dead-letters it
// once it has been returned more than x-delivery-limit times.
func TestQuorumDeliveryLimit(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "dead"})
	declareQueue(t, tr, transport.Queue{Name: "q", Type: transport.Quorum, Durable: true, Arguments: transport.Table{
		"x-delivery-limit": int64(1), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dead"}})
	sendBody(t, tr, "q", "m")
	sendBody(t, tr, "q", "other")
	for i := range int64(2) {
		d := mustGet(t, tr, "q", "m")
		if d.Headers["x-delivery-count"] != i {
			t.Errorf("x-delivery-count %#v, want %d", d.Headers["x-delivery-count"], i)
		}
		must(t, "Nack(requeue)", d.Nack(true))
		must(t, "Ack other", mustGet(t, tr, "q", "other").Ack())
		sendBody(t, tr, "q", "other")
	}
	d := mustGet(t, tr, "dead", "m")
	death := d.Headers["x-death"].([]any)[0].(transport.Table)
	if death["reason"] != "delivery_limit" || d.Headers["x-delivery-count"] != nil {
		t.Errorf("dead letter %#v", d.Headers)
	}
}

// x-expires deletes a queue unused for that long: no consumer, no get, no
// declaration (a publish does not count).
func TestQueueExpires(t *testing.T) {
	b, clock := testBroker(t)
	tr := connect(t, b)
	q := transport.Queue{Name: "q", Arguments: transport.Table{"x-expires": int64(60_000)}}
	declareQueue(t, tr, q)
	clock.Advance(59 * time.Second)
	sendBody(t, tr, "q", "a publish is no use")
	declareQueue(t, tr, q) // a declaration is
	clock.Advance(59 * time.Second)
	if _, err := b.Peek("q"); err != nil {
		t.Fatalf("the queue expired early: %v", err)
	}
	s, err := tr.Consume(ctxOf(t), "q", transport.ConsumeOptions{})
	must(t, "Consume", err)
	must(t, "Ack", receive(t, s).Ack()) // held, it would time out (TestConsumerTimeout)
	clock.Advance(time.Hour)
	wantState(t, tr, "q", 0, 1)
	must(t, "Cancel", s.Cancel(ctxOf(t)))
	clock.Advance(time.Minute)
	if _, err := b.Peek("q"); !errorsIs(err, transport.ErrNotFound) {
		t.Errorf("Peek a minute after the last consumer left: %v, want ErrNotFound", err)
	}
}

// Peek shows the ready messages, in order, and copies them.
func TestPeek(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "q"})
	for _, s := range []string{"a", "b", "c"} {
		send(t, tr, "q", transport.Message{Body: []byte(s), Headers: transport.Table{"h": s}})
	}
	held := mustGet(t, tr, "q", "a")
	msgs, err := b.Peek("q")
	must(t, "Peek", err)
	if len(msgs) != 2 || string(msgs[0].Body) != "b" || msgs[1].Headers["h"] != "c" {
		t.Fatalf("Peek = %+v", msgs)
	}
	msgs[0].Body[0] = 'X'
	msgs[0].Headers["h"] = "changed"
	must(t, "Nack(requeue)", held.Nack(true))
	if got := drain(t, tr, "q"); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("queue holds %q after Peek", got)
	}
	if _, err := b.Peek("missing"); !errorsIs(err, transport.ErrNotFound) {
		t.Errorf("Peek of a missing queue: %v", err)
	}
}
