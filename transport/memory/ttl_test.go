package memory_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// A five-minute retry rung expires on Advance, with nothing consuming it,
// and its message goes through the dead-letter exchange to another queue
// with x-death as RabbitMQ writes it: x-last-death-* from 4.0 (3.13), and
// on 3.10 the quorum queue's x-delivery-count on basic.get.
func TestRungExpiresOnAdvance(t *testing.T) {
	eachVersion(t, func(t *testing.T, v4 bool, b *memory.Broker, clock *memory.ManualClock) {
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
		}
		if v4 {
			want["x-last-death-exchange"], want["x-last-death-queue"], want["x-last-death-reason"] = "", rung, "expired"
		} else {
			want["x-delivery-count"] = int64(0) // the quorum queue's, on basic.get
		}
		if !reflect.DeepEqual(d.Headers, want) {
			t.Errorf("headers\n  %#v\nwant\n  %#v", d.Headers, want)
		}
		must(t, "Ack", d.Ack())
	})
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
// increments its count (and nothing else) and moves it to the front. A
// client's republish carries the count on in RabbitMQ 3.10 only: from 3.13
// the broker counts the deaths it saw, and a republish starts afresh.
func TestXDeathAcrossQueues(t *testing.T) {
	eachVersion(t, func(t *testing.T, v4 bool, b *memory.Broker, clock *memory.ManualClock) {
		tr := connect(t, b)
		declareQueue(t, tr, transport.Queue{Name: "work", Arguments: transport.Table{"x-dead-letter-exchange": ""}})
		declareQueue(t, tr, transport.Queue{Name: "wait", Arguments: transport.Table{
			"x-message-ttl": int64(1000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"}})
		sendBody(t, tr, "wait", "m")
		clock.Advance(time.Second)
		first := clock.Now()
		d := mustGet(t, tr, "work", "m")
		// Rejected into the default exchange under its own key ("work"):
		// back in work, a cycle RabbitMQ allows because it holds a
		// rejection.
		must(t, "Reject", d.Reject(false))
		d = mustGet(t, tr, "work", "m")
		must(t, "Reject", d.Reject(false))
		d = mustGet(t, tr, "work", "m")
		wantDeaths := func(what string, h transport.Table, want ...string) {
			t.Helper()
			deaths, _ := h["x-death"].([]any)
			var got []string
			for _, d := range deaths {
				e := d.(transport.Table)
				got = append(got, fmt.Sprintf("%s %s %d", e["queue"], e["reason"], e["count"]))
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: x-death %q, want %q", what, got, want)
			}
		}
		wantDeaths("after two rejections", d.Headers, "work rejected 2", "wait expired 1")
		// Republished to wait by a client, with its headers: expires again.
		send(t, tr, "wait", transport.Message{Body: []byte("m"), Headers: d.Headers})
		must(t, "Ack", d.Ack())
		clock.Advance(time.Hour)
		d = mustGet(t, tr, "work", "m")
		if v4 {
			wantDeaths("republished, on RabbitMQ 4.0", d.Headers, "wait expired 1")
			return
		}
		wantDeaths("republished, on RabbitMQ 3.10", d.Headers, "wait expired 2", "work rejected 2")
		if wait := d.Headers["x-death"].([]any)[0].(transport.Table); wait["time"] != time.Unix(first.Unix(), 0) {
			t.Errorf("x-death[0] = %#v, want the time of the first death", wait)
		}
		if d.Headers["x-first-death-queue"] != "wait" || d.Headers["x-first-death-reason"] != "expired" {
			t.Errorf("x-first-death: %v %v", d.Headers["x-first-death-queue"], d.Headers["x-first-death-reason"])
		}
	})
}

// RabbitMQ 3.10 resets an x-death that is not an array (a client that
// turned it into a string) to the one death, without x-first-death-*; it
// leaves x-first-death-* a client set alone. 4.0 writes its own record.
func TestPublishedXDeathOfAnotherType(t *testing.T) {
	eachVersion(t, func(t *testing.T, v4 bool, b *memory.Broker, clock *memory.ManualClock) {
		tr := connect(t, b)
		declareQueue(t, tr, transport.Queue{Name: "dead"})
		declareQueue(t, tr, transport.Queue{Name: "src", Arguments: transport.Table{
			"x-message-ttl": int64(100), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dead"}})
		send(t, tr, "src", transport.Message{Body: []byte("m"), Headers: transport.Table{"x-death": "junk", "x-first-death-queue": int64(3)}})
		clock.Advance(time.Second)
		d := mustGet(t, tr, "dead", "m")
		var keys []string
		for k := range d.Headers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		want := []string{"x-death", "x-first-death-queue"}
		if v4 {
			want = []string{"x-death", "x-first-death-exchange", "x-first-death-queue", "x-first-death-reason",
				"x-last-death-exchange", "x-last-death-queue", "x-last-death-reason"}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("headers %q, want %q", keys, want)
		}
		deaths, ok := d.Headers["x-death"].([]any)
		if !ok || len(deaths) != 1 || deaths[0].(transport.Table)["queue"] != "src" || deaths[0].(transport.Table)["count"] != int64(1) {
			t.Errorf("x-death %#v, want the one death in src", d.Headers["x-death"])
		}
		if first := d.Headers["x-first-death-queue"]; v4 && first != "src" || !v4 && first != int64(3) {
			t.Errorf("x-first-death-queue %#v", first)
		}
	})
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

// A quorum queue dead-letters a message once it has been returned more than
// x-delivery-limit times. A requeued one goes to the back in RabbitMQ 3.10,
// to the front in 4.0; x-delivery-count is on every basic.get in 3.10, from
// the first return in 4.0. The returns are rejects, which 4.3 counts too
// (its nacks are not: the conformance suite's "a nack counts towards
// x-delivery-limit before RabbitMQ 4.3 only").
func TestQuorumDeliveryLimit(t *testing.T) {
	eachVersion(t, func(t *testing.T, v4 bool, b *memory.Broker, _ *memory.ManualClock) {
		tr := connect(t, b)
		declareQueue(t, tr, transport.Queue{Name: "dead"})
		declareQueue(t, tr, transport.Queue{Name: "q", Type: transport.Quorum, Durable: true, Arguments: transport.Table{
			"x-delivery-limit": int64(1), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dead"}})
		sendBody(t, tr, "q", "m")
		sendBody(t, tr, "q", "other")
		for i := range int64(2) {
			d := mustGet(t, tr, "q", "m")
			var want any = i
			if v4 && i == 0 {
				want = nil
			}
			if d.Headers["x-delivery-count"] != want {
				t.Errorf("x-delivery-count %#v, want %v", d.Headers["x-delivery-count"], want)
			}
			must(t, "Reject(requeue)", d.Reject(true))
			if !v4 { // m is behind other
				must(t, "Ack other", mustGet(t, tr, "q", "other").Ack())
				sendBody(t, tr, "q", "other")
			}
		}
		d := mustGet(t, tr, "dead", "m")
		death := d.Headers["x-death"].([]any)[0].(transport.Table)
		if death["reason"] != "delivery_limit" || d.Headers["x-delivery-count"] != nil {
			t.Errorf("dead letter %#v", d.Headers)
		}
		wantState(t, tr, "q", 1, 0)
	})
}

// With no x-delivery-limit, a RabbitMQ 4.0 or 4.3 quorum queue dead-letters
// a message at its 21st return by reject; 3.10's never does. A negative
// limit is none on 4.0 and 4.3, and a limit below any count on 3.10.
func TestQuorumDefaultDeliveryLimit(t *testing.T) {
	eachVersion(t, func(t *testing.T, v4 bool, b *memory.Broker, _ *memory.ManualClock) {
		tr := connect(t, b)
		declareQueue(t, tr, transport.Queue{Name: "dead"})
		returnsBeforeDeath := func(args transport.Table) int {
			t.Helper()
			args["x-dead-letter-exchange"], args["x-dead-letter-routing-key"] = "", "dead"
			name := fmt.Sprint("q", args["x-delivery-limit"])
			declareQueue(t, tr, transport.Queue{Name: name, Type: transport.Quorum, Durable: true, Arguments: args})
			sendBody(t, tr, name, "m")
			for n := 1; n <= 30; n++ {
				must(t, "Reject(requeue)", mustGet(t, tr, name, "m").Reject(true))
				if _, ok := get(t, tr, "dead"); ok {
					return n
				}
			}
			return 0 // still there
		}
		if n, want := returnsBeforeDeath(transport.Table{}), map[bool]int{true: 21, false: 0}[v4]; n != want {
			t.Errorf("no x-delivery-limit: dead-lettered at return %d, want %d (0: never)", n, want)
		}
		if n, want := returnsBeforeDeath(transport.Table{"x-delivery-limit": int64(-1)}), map[bool]int{true: 0, false: 1}[v4]; n != want {
			t.Errorf("x-delivery-limit -1: dead-lettered at return %d, want %d (0: never)", n, want)
		}
	})
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
