package memory_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
	"github.com/acemq-go/acemq/transport/transporttest"
)

// A stream's timestamps and intervals are on the broker's clock: an
// interval reads what was written within it, on a manual clock too.
func TestStreamIntervalOnTheBrokersClock(t *testing.T) {
	b, clock := testBroker(t)
	tr := connect(t, b)
	ctx := ctxOf(t)
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: "s", Type: transport.Stream, Durable: true}); err != nil {
		t.Fatal(err)
	}
	send(t, tr, "s", transport.Message{Body: []byte("old")})
	clock.Advance(2 * time.Hour)
	send(t, tr, "s", transport.Message{Body: []byte("new")})
	s, err := tr.Consume(ctx, "s", transport.ConsumeOptions{Prefetch: 1, Arguments: func() transport.Table {
		return transport.Table{"x-stream-offset": "1h"}
	}})
	if err != nil {
		t.Fatal(err)
	}
	d := <-transporttest.Chan(s)
	if string(d.Body) != "new" || d.Headers["x-stream-offset"] != int64(1) {
		t.Errorf("from 1h: %q at %v, want \"new\" at offset 1", d.Body, d.Headers["x-stream-offset"])
	}
	_ = d.Ack()
}

func TestRegistry(t *testing.T) {
	ctx := ctxOf(t)
	name := func(s string) string { return "memory-test-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + s }
	a, b := name("a"), name("b")
	t.Cleanup(func() { memory.Unregister(a); memory.Unregister(b) })

	a1, err := memory.Dial(ctx, "memory://"+a)
	must(t, "Dial a", err)
	defer a1.Close()
	a2, err := memory.Dial(ctx, "memory://"+a)
	must(t, "Dial a again", err)
	defer a2.Close()
	b1, err := memory.Dial(ctx, "memory://"+b)
	must(t, "Dial b", err)
	defer b1.Close()
	if got := a1.String(); got != "memory://"+a {
		t.Errorf("String() = %q", got)
	}

	declareQueue(t, a1, transport.Queue{Name: "q"})
	sendBody(t, a2, "q", "shared")
	mustGet(t, a1, "q", "shared")
	if _, err := b1.InspectQueue(ctx, "q"); !errors.Is(err, transport.ErrNotFound) {
		t.Errorf("memory://%s sees memory://%s's queue: %v", b, a, err)
	}

	// Register: a name is one broker.
	mine := memory.NewBroker()
	defer mine.Close()
	if err := memory.Register(a, mine); err == nil {
		t.Error("registering a taken name succeeded")
	}
	memory.Unregister(a)
	must(t, "Register", memory.Register(a, mine))
	a3, err := memory.Dial(ctx, "memory://"+a)
	must(t, "Dial the registered broker", err)
	defer a3.Close()
	if _, err := a3.InspectQueue(ctx, "q"); !errors.Is(err, transport.ErrNotFound) {
		t.Errorf("after Unregister and Register, Dial reached the old broker: %v", err)
	}
	mine.Close()
	if _, err := memory.Dial(ctx, "memory://"+a); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Dial of a closed broker: %v, want ErrClosed", err)
	}
	if err := memory.Register("", mine); err == nil {
		t.Error("registering an empty name succeeded")
	}

	for _, url := range []string{"amqp://guest:guest@localhost/", "memory://", "memory:/x", "memory://x/y", "MEMORY://x"} {
		if tr, err := memory.Dial(ctx, url); err == nil {
			tr.Close()
			t.Errorf("Dial(%q) succeeded", url)
		} else if !strings.Contains(err.Error(), "memory://NAME") {
			t.Errorf("Dial(%q): %v does not say what a memory:// URL is", url, err)
		}
	}
}

// A broker emulates RabbitMQ 4.3 by default, or 4.0 or 3.10, and its transports
// report the version; memory://NAME?rabbitmq=3.10 makes a new broker of
// that version and refuses one of another. An unsupported version is
// refused with the versions supported.
func TestVersions(t *testing.T) {
	ctx := ctxOf(t)
	for opt, want := range map[string]string{"": "4.3.6", "4.3": "4.3.6", "4.3.6": "4.3.6", "4": "4.0.5", "4.0": "4.0.5", "4.0.5": "4.0.5", "3.10": "3.10.8", "3.10.8": "3.10.8"} {
		var opts []memory.Option
		if opt != "" {
			opts = append(opts, memory.WithRabbitMQVersion(opt))
		}
		b, _ := testBroker(t, opts...)
		if got := connect(t, b).State().ServerVersion; got != want {
			t.Errorf("WithRabbitMQVersion(%q): ServerVersion %q, want %q", opt, got, want)
		}
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), `"3.12" is not a version memory:// emulates (4.3.6, 4.0.5, 3.10.8`) {
				t.Errorf("NewBroker with RabbitMQ 3.12: %v, want a panic naming the versions emulated", r)
			}
		}()
		memory.NewBroker(memory.WithRabbitMQVersion("3.12"))
	}()
	if b, err := memory.Open(memory.WithRabbitMQVersion("3.12")); b != nil || err == nil || !strings.Contains(err.Error(), `"3.12" is not a version memory:// emulates (4.3.6, 4.0.5, 3.10.8`) {
		t.Errorf("Open with RabbitMQ 3.12: %v, %v; want an error naming the versions emulated", b, err)
	}
	for _, opt := range []memory.Option{memory.WithConsumerTimeout(-time.Second), nil} {
		if b, err := memory.Open(opt); b != nil || err == nil || !strings.HasPrefix(err.Error(), "memory: ") {
			t.Errorf("Open: %v, %v; want an error", b, err)
		}
	}

	name := "memory-test-versions"
	t.Cleanup(func() { memory.Unregister(name) })
	old, err := memory.Dial(ctx, "memory://"+name+"?rabbitmq=3.10")
	must(t, "Dial with ?rabbitmq=3.10", err)
	defer old.Close()
	if got := old.State().ServerVersion; got != "3.10.8" {
		t.Errorf("memory://%s?rabbitmq=3.10: ServerVersion %q", name, got)
	}
	same, err := memory.Dial(ctx, "memory://"+name)
	must(t, "Dial without a version", err)
	defer same.Close()
	if got := same.State().ServerVersion; got != "3.10.8" {
		t.Errorf("memory://%s: ServerVersion %q, want the broker's, 3.10.8", name, got)
	}
	for url, words := range map[string]string{
		"memory://" + name + "?rabbitmq=4.0":        "emulates RabbitMQ 3.10.8",
		"memory://other?rabbitmq=3.12":              `"3.12" is not a version memory:// emulates`,
		"memory://other?rabbitmq=":                  `"" is not a version memory:// emulates`,
		"memory://other?version=3.10":               "rabbitmq=VERSION",
		"memory://other?rabbitmq=3.10&x=1":          "rabbitmq=VERSION",
		"memory://other?rabbitmq=3.10&rabbitmq=4.0": "rabbitmq=VERSION",
	} {
		if tr, err := memory.Dial(ctx, url); err == nil {
			tr.Close()
			t.Errorf("Dial(%q) succeeded", url)
		} else if !strings.Contains(err.Error(), words) {
			t.Errorf("Dial(%q): %v, want it to say %s", url, err, words)
		}
	}
}

func TestExclusiveQueueGoesWithItsConnection(t *testing.T) {
	b, _ := testBroker(t)
	owner, other := connect(t, b), connect(t, b)
	declareQueue(t, owner, transport.Queue{Name: "mine", Exclusive: true})
	sendBody(t, other, "mine", "anyone may publish")
	_, err := other.InspectQueue(ctxOf(t), "mine")
	wantReply(t, "InspectQueue on another connection", err, nil, 405,
		"RESOURCE_LOCKED - cannot obtain exclusive access to locked queue 'mine' in vhost '/'. It could be originally declared on another connection or the exclusive property value does not match that of the original declaration.")
	_, err = other.Consume(ctxOf(t), "mine", transport.ConsumeOptions{})
	wantReply(t, "Consume on another connection", err, nil, 405,
		"RESOURCE_LOCKED - cannot obtain exclusive access to locked queue 'mine' in vhost '/'. It could be originally declared on another connection or the exclusive property value does not match that of the original declaration.")
	s, err := owner.Consume(ctxOf(t), "mine", transport.ConsumeOptions{Prefetch: 1})
	must(t, "Consume", err)
	held := receive(t, s)

	must(t, "Close", owner.Close())
	waitClosed(t, s)
	if _, err := other.InspectQueue(ctxOf(t), "mine"); !errors.Is(err, transport.ErrNotFound) {
		t.Errorf("the exclusive queue outlived its connection: %v", err)
	}
	if err := held.Ack(); !errors.Is(err, transport.ErrClosed) || !errors.Is(err, transport.ErrStaleDelivery) {
		t.Errorf("Ack after Close: %v, want ErrClosed and ErrStaleDelivery", err)
	}
	declareQueue(t, other, transport.Queue{Name: "mine", Exclusive: true})
	wantState(t, other, "mine", 0, 0)
}

// Closing a connection requeues what it had not settled, in place and
// redelivered; its subscriptions end; everything on it is ErrClosed.
func TestCloseRequeuesUnacked(t *testing.T) {
	b, _ := testBroker(t)
	tr, other := connect(t, b), connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "q"})
	for _, s := range []string{"a", "b", "c", "d"} {
		sendBody(t, tr, "q", s)
	}
	s, err := other.Consume(ctxOf(t), "q", transport.ConsumeOptions{Prefetch: 2})
	must(t, "Consume", err)
	held := []transport.Delivery{receive(t, s), receive(t, s)}
	g, ok := get(t, other, "q")
	if !ok {
		t.Fatal("Get: empty")
	}
	held = append(held, g)
	wantState(t, tr, "q", 1, 1)

	must(t, "Close", other.Close())
	must(t, "second Close", other.Close())
	waitClosed(t, s)
	wantState(t, tr, "q", 4, 0)
	for _, d := range held {
		if err := d.Nack(true); !errors.Is(err, transport.ErrClosed) || !errors.Is(err, transport.ErrStaleDelivery) {
			t.Errorf("Nack after Close: %v, want ErrClosed and ErrStaleDelivery", err)
		}
	}
	if err := s.Cancel(ctxOf(t)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Cancel after Close: %v", err)
	}
	ctx := ctxOf(t)
	for what, err := range map[string]error{
		"DeclareQueue":    other.DeclareQueue(ctx, transport.Queue{Name: "q"}),
		"DeclareExchange": other.DeclareExchange(ctx, transport.Exchange{Name: "x", Type: transport.Direct}),
		"Bind":            other.Bind(ctx, transport.Binding{Queue: "q", Exchange: "amq.direct"}),
		"InspectQueue":    second(other.InspectQueue(ctx, "q")),
		"PurgeQueue":      second(other.PurgeQueue(ctx, "q")),
		"DeleteQueue":     second(other.DeleteQueue(ctx, "q")),
		"Publish":         second(other.Publish(ctx, transport.Publishing{RoutingKey: "q"})),
		"Consume":         second(other.Consume(ctx, "q", transport.ConsumeOptions{})),
		"Get":             func() error { _, _, err := other.Get(ctx, "q"); return err }(),
	} {
		if !errors.Is(err, transport.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", what, err)
		}
	}
	var got []string
	for range 4 {
		d, _ := get(t, tr, "q")
		got = append(got, fmt.Sprintf("%s/%v", d.Body, d.Redelivered))
		must(t, "Ack", d.Ack())
	}
	if want := []string{"a/true", "b/true", "c/true", "d/false"}; !slices.Equal(got, want) {
		t.Errorf("after Close: %q, want %q", got, want)
	}
}

func second[T any](_ T, err error) error { return err }

// RabbitMQ 3.10 closes a channel that holds a delivery unacknowledged for
// consumer_timeout (30 minutes): the delivery is stale and comes again.
func TestConsumerTimeout(t *testing.T) {
	b, clock := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "q"})
	var setups atomic.Int32
	s, err := tr.Consume(ctxOf(t), "q", transport.ConsumeOptions{Prefetch: 1, Setup: func(context.Context, transport.Declarer) error {
		setups.Add(1)
		return nil
	}})
	must(t, "Consume", err)
	sendBody(t, tr, "q", "slow")
	first := receive(t, s)
	got, _ := get(t, tr, "q") // nothing: the message is the consumer's
	if got.Settler != nil {
		t.Fatal("Get took the consumer's message")
	}
	sendBody(t, tr, "q", "got")
	held := mustGet(t, tr, "q", "got")

	clock.Advance(30*time.Minute - time.Millisecond)
	wantState(t, tr, "q", 0, 1)
	clock.Advance(time.Millisecond)
	again := receive(t, s) // subscribed again, Setup first
	if string(again.Body) != "slow" || !again.Redelivered {
		t.Errorf("after the timeout got %q redelivered=%v", again.Body, again.Redelivered)
	}
	if n := setups.Load(); n != 2 {
		t.Errorf("Setup ran %d times, want 2", n)
	}
	for _, d := range []transport.Delivery{first, held} {
		if err := d.Ack(); !errors.Is(err, transport.ErrStaleDelivery) || errors.Is(err, transport.ErrClosed) {
			t.Errorf("Ack of %s after the timeout: %v, want ErrStaleDelivery", d.Body, err)
		}
	}
	must(t, "Ack", again.Ack())
	// The Get's channel timed out too: its message is back, and the
	// consumer has room for it now.
	if d := receive(t, s); string(d.Body) != "got" || !d.Redelivered {
		t.Errorf("then got %q redelivered=%v", d.Body, d.Redelivered)
	}

	// WithConsumerTimeout(0): never.
	b2, clock2 := testBroker(t, memory.WithConsumerTimeout(0))
	tr2 := connect(t, b2)
	declareQueue(t, tr2, transport.Queue{Name: "q"})
	sendBody(t, tr2, "q", "m")
	d := mustGet(t, tr2, "q", "m")
	clock2.Advance(24 * time.Hour)
	must(t, "Ack a day later without a consumer timeout", d.Ack())
}

// Deleting a queue under a consumer cancels it; like transport/rabbitmq's,
// the subscription runs Setup and subscribes again, on the same Deliveries,
// retrying on the broker's clock while the queue is missing.
func TestDeletedQueueResubscribes(t *testing.T) {
	b, clock := testBroker(t)
	tr := connect(t, b)
	var setups atomic.Int32
	declare := atomic.Bool{}
	declare.Store(true)
	s, err := tr.Consume(ctxOf(t), "q", transport.ConsumeOptions{Setup: func(ctx context.Context, d transport.Declarer) error {
		setups.Add(1)
		if !declare.Load() {
			return nil
		}
		return d.DeclareQueue(ctx, transport.Queue{Name: "q"})
	}})
	must(t, "Consume", err)
	sendBody(t, tr, "q", "before")
	before := receive(t, s)

	n, err := tr.DeleteQueue(ctxOf(t), "q")
	if n != 0 || err != nil {
		t.Errorf("DeleteQueue = %d, %v", n, err)
	}
	must(t, "Ack of a delivery from the deleted queue", before.Ack())
	waitFor(t, "the consumer back", func() bool {
		st, err := tr.InspectQueue(ctxOf(t), "q")
		return err == nil && st.Consumers == 1
	})
	sendBody(t, tr, "q", "after")
	if d := receive(t, s); string(d.Body) != "after" {
		t.Errorf("got %q", d.Body)
	}

	declare.Store(false)
	_, err = tr.DeleteQueue(ctxOf(t), "q")
	must(t, "DeleteQueue", err)
	waitFor(t, "Setup to run again", func() bool { return setups.Load() == 3 })
	// The subscribe that follows fails and schedules the retry: advancing
	// before then would miss it (seen under load).
	waitFor(t, "the retry scheduled", func() bool { return clock.DueWithin(100 * time.Millisecond) })
	declareQueue(t, tr, transport.Queue{Name: "q"}) // now, by hand
	clock.Advance(99 * time.Millisecond)
	wantState(t, tr, "q", 0, 0)
	clock.Advance(time.Millisecond) // the first retry
	waitFor(t, "the consumer back after the retry", func() bool {
		st, err := tr.InspectQueue(ctxOf(t), "q")
		return err == nil && st.Consumers == 1
	})
	must(t, "Cancel", s.Cancel(ctxOf(t)))
	waitClosed(t, s)
}

// A connection exception (here COMMAND_INVALID, an unknown exchange type)
// ends the whole connection on RabbitMQ 3.10; transport/rabbitmq
// reconnects. So
// here: the error, then deliveries stale, exclusive queues gone, the
// subscription subscribed again on the new connection.
func TestConnectionExceptionReconnects(t *testing.T) {
	b, _ := testBroker(t, rabbitMQ310) // 4.0 closes only the channel
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "shared"})
	declareQueue(t, tr, transport.Queue{Name: "mine", Exclusive: true})
	var setups atomic.Int32
	s, err := tr.Consume(ctxOf(t), "shared", transport.ConsumeOptions{Setup: func(context.Context, transport.Declarer) error {
		setups.Add(1)
		return nil
	}})
	must(t, "Consume", err)
	sendBody(t, tr, "shared", "m")
	held := receive(t, s)

	err = tr.DeclareExchange(ctxOf(t), transport.Exchange{Name: "x", Type: "x-delayed-message"})
	wantReply(t, "declaring an exchange of an unknown type", err, nil, 503, "COMMAND_INVALID - unknown exchange type 'x-delayed-message'")
	if err := held.Ack(); !errors.Is(err, transport.ErrStaleDelivery) {
		t.Errorf("Ack after the connection went: %v, want ErrStaleDelivery", err)
	}
	if _, err := tr.InspectQueue(ctxOf(t), "mine"); !errors.Is(err, transport.ErrNotFound) {
		t.Errorf("the exclusive queue outlived the connection: %v", err)
	}
	if d := receive(t, s); string(d.Body) != "m" || !d.Redelivered {
		t.Errorf("after reconnecting got %q redelivered=%v", d.Body, d.Redelivered)
	}
	if n := setups.Load(); n != 2 {
		t.Errorf("Setup ran %d times, want 2", n)
	}
	if st := tr.State(); !st.Connected || st.Connects != 2 || !strings.Contains(fmt.Sprint(st.LastError), "COMMAND_INVALID") {
		t.Errorf("State after the exception: %+v, want connected the second time, with the exception as LastError", st)
	}
}

// An alarm blocks a connection once it publishes, holds its publishes (a
// deadline ends one with ErrBlocked, Close the rest with ErrClosed), leaves
// consuming alone, and lets the held publishes go when it clears.
func TestAlarm(t *testing.T) {
	b, _ := testBroker(t)
	pub, idle, closing := connect(t, b), connect(t, b), connect(t, b)
	declareQueue(t, pub, transport.Queue{Name: "q"})
	sendBody(t, pub, "q", "before")
	b.SetAlarm("low on memory")

	short, cancel := context.WithTimeout(ctxOf(t), 10*time.Millisecond)
	_, err := pub.Publish(short, transport.Publishing{RoutingKey: "q"})
	cancel()
	if !errors.Is(err, transport.ErrBlocked) || !strings.Contains(err.Error(), "low on memory") {
		t.Errorf("Publish during the alarm: %v, want ErrBlocked with the reason", err)
	}
	if st := pub.State(); !st.Blocked || st.BlockedReason != "low on memory" {
		t.Errorf("the publisher's State: %+v, want blocked with the reason", st)
	}
	if idle.State().Blocked {
		t.Error("a connection that has not published is blocked")
	}
	s, err := idle.Consume(ctxOf(t), "q", transport.ConsumeOptions{})
	must(t, "Consume during the alarm", err)
	if d := receive(t, s); string(d.Body) != "before" {
		t.Errorf("consumed %q during the alarm", d.Body)
	} else {
		must(t, "Ack during the alarm", d.Ack())
	}

	held := make(chan error, 2)
	for _, tr := range []*memory.Transport{pub, closing} {
		go func() {
			c, err := tr.Publish(ctxOf(t), transport.Publishing{RoutingKey: "q", Message: transport.Message{Body: []byte("held")}})
			if err == nil {
				err = c.Wait(ctxOf(t))
			}
			held <- err
		}()
	}
	for !closing.State().Blocked {
		runtime.Gosched() // until its publish is held
	}
	must(t, "Close", closing.Close())
	if err := <-held; !errors.Is(err, transport.ErrClosed) {
		t.Errorf("a held publish of a closed connection: %v, want ErrClosed", err)
	}
	b.ClearAlarm()
	if err := <-held; err != nil {
		t.Errorf("a held publish after the alarm cleared: %v", err)
	}
	if pub.State().Blocked {
		t.Error("still blocked after ClearAlarm")
	}
	if d := receive(t, s); string(d.Body) != "held" {
		t.Errorf("after the alarm got %q, want the held publish", d.Body)
	}
}

// A connection the alarm blocks (it published during it) goes on
// consuming, getting, settling, declaring and answering a ping, as
// transport/rabbitmq does, whose consumers are on a connection apart from
// the publishing one that RabbitMQ blocks; only its publishes wait.
func TestAlarmLeavesABlockedConnectionConsuming(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "q"})
	sendBody(t, tr, "q", "got")
	sendBody(t, tr, "q", "consumed")
	b.SetAlarm("low on disk")
	t.Cleanup(b.ClearAlarm)

	short, cancel := context.WithTimeout(ctxOf(t), 10*time.Millisecond)
	_, err := tr.Publish(short, transport.Publishing{RoutingKey: "q"})
	cancel()
	if !errors.Is(err, transport.ErrBlocked) {
		t.Fatalf("Publish during the alarm: %v, want ErrBlocked", err)
	}
	d, ok, err := tr.Get(ctxOf(t), "q")
	if err != nil || !ok || string(d.Body) != "got" {
		t.Fatalf("Get on the blocked connection: %q, %v, %v", d.Body, ok, err)
	}
	must(t, "Ack of a Get on the blocked connection", d.Ack())
	s, err := tr.Consume(ctxOf(t), "q", transport.ConsumeOptions{Prefetch: 1})
	must(t, "Consume on the blocked connection", err)
	if d := receive(t, s); string(d.Body) != "consumed" {
		t.Errorf("consumed %q, want the message queued before the alarm", d.Body)
	} else {
		must(t, "Ack on the blocked connection", d.Ack())
	}
	must(t, "Cancel on the blocked connection", s.Cancel(ctxOf(t)))
	declareQueue(t, tr, transport.Queue{Name: "another"})
	must(t, "Ping on the blocked connection", tr.Ping(ctxOf(t)))
	if st := tr.State(); !st.Blocked || st.BlockedReason != "low on disk" {
		t.Errorf("State: %+v, want still blocked", st)
	}
}

// RabbitMQ 3.10, classic queue with x-single-active-consumer: the next
// consumer becomes active only once the cancelled active consumer's channel
// closes, which in transport/rabbitmq is when its deliveries are settled.
// With x-single-active-consumer on a classic queue, the active consumer a is
// cancelled while it holds a delivery. RabbitMQ 3.10 makes b active only
// once a's channel closes (in transport/rabbitmq: once what a held is
// settled); 4.0 at once, so b takes the next message while a's is held.
func TestSingleActiveConsumerHandOver(t *testing.T) {
	eachVersion(t, func(t *testing.T, v4 bool, b *memory.Broker, _ *memory.ManualClock) {
		tr := connect(t, b)
		declareQueue(t, tr, transport.Queue{Name: "q", Arguments: transport.Table{"x-single-active-consumer": true}})
		a, err := tr.Consume(ctxOf(t), "q", transport.ConsumeOptions{Prefetch: 1})
		must(t, "Consume a", err)
		bs, err := tr.Consume(ctxOf(t), "q", transport.ConsumeOptions{Prefetch: 1})
		must(t, "Consume b", err)
		for _, s := range []string{"0", "1", "2"} {
			sendBody(t, tr, "q", s)
		}
		held := receive(t, a)
		wantState(t, tr, "q", 2, 2)
		must(t, "Cancel a", a.Cancel(ctxOf(t)))
		waitClosed(t, a)
		if v4 {
			if d := receive(t, bs); string(d.Body) != "1" || d.Redelivered {
				t.Errorf("b got %q redelivered=%v, want 1 at once", d.Body, d.Redelivered)
			}
			wantState(t, tr, "q", 1, 1)
			return
		}
		wantState(t, tr, "q", 2, 1) // b is not active yet
		must(t, "Nack(requeue)", held.Nack(true))
		if d := receive(t, bs); string(d.Body) != "0" || !d.Redelivered {
			t.Errorf("b got %q redelivered=%v, want 0 again", d.Body, d.Redelivered)
		}
	})
}

func TestCancelHandsOverWhatWasDelivered(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "q", AutoDelete: true})
	s, err := tr.Consume(ctxOf(t), "q", transport.ConsumeOptions{}) // prefetch 0: unlimited
	must(t, "Consume", err)
	// Nobody reads Deliveries: publishing must not block on the consumer.
	for i := range 1000 {
		sendBody(t, tr, "q", fmt.Sprint(i))
	}
	wantState(t, tr, "q", 0, 1)
	must(t, "Cancel", s.Cancel(ctxOf(t)))
	if _, err := tr.InspectQueue(ctxOf(t), "q"); !errors.Is(err, transport.ErrNotFound) {
		t.Errorf("the auto-delete queue outlived its last consumer: %v", err)
	}
	got := waitClosed(t, s)
	if len(got) != 1000 || string(got[999].Body) != "999" {
		t.Fatalf("handed over %d deliveries after Cancel, want all 1000 in order", len(got))
	}
	for _, d := range got {
		must(t, "Ack after Cancel", d.Ack())
	}
	must(t, "second Cancel", s.Cancel(ctxOf(t)))
}

func TestSettleOnce(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "q"})
	sendBody(t, tr, "q", "m")
	d := mustGet(t, tr, "q", "m")
	must(t, "Reject(requeue)", d.Reject(true))
	for what, err := range map[string]error{"Ack": d.Ack(), "Nack": d.Nack(false), "Reject": d.Reject(true)} {
		if err == nil || !strings.Contains(err.Error(), "already settled") {
			t.Errorf("%s after Reject: %v, want already settled", what, err)
		}
	}
	wantState(t, tr, "q", 1, 0)
}

// Nothing a caller does to a message after publishing it, or to a delivery,
// changes what the broker holds.
func TestMessagesAreCopied(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "q"})
	m := transport.Message{Body: []byte("body"), Headers: transport.Table{
		"n": transport.Table{"k": "v"}, "l": []any{"x", []byte("y")}, "i": 7, "map": map[string]any{"a": int64(1)}}}
	send(t, tr, "q", m)
	m.Body[0] = 'X'
	m.Headers["n"].(transport.Table)["k"] = "changed"
	m.Headers["l"].([]any)[1].([]byte)[0] = 'Z'
	d := mustGet(t, tr, "q", "body")
	if d.Headers["n"].(transport.Table)["k"] != "v" || string(d.Headers["l"].([]any)[1].([]byte)) != "y" {
		t.Errorf("the publisher's change reached the broker: %#v", d.Headers)
	}
	if d.Headers["i"] != int32(7) || d.Headers["map"].(transport.Table)["a"] != int64(1) {
		t.Errorf("headers not in wire form (int as int32, map as Table): %#v", d.Headers)
	}
	d.Body[0] = 'Y'
	d.Headers["n"].(transport.Table)["k"] = "changed"
	must(t, "Nack(requeue)", d.Nack(true))
	d = mustGet(t, tr, "q", "body")
	if d.Headers["n"].(transport.Table)["k"] != "v" {
		t.Errorf("a consumer's change reached the broker: %#v", d.Headers)
	}
	if err := publish(t, tr, transport.Publishing{RoutingKey: "q", Message: transport.Message{Headers: transport.Table{"u": uint(1)}}}); err == nil ||
		!strings.Contains(err.Error(), `table field "u" value uint not supported`) {
		t.Errorf("a header amqp091 cannot encode: %v", err)
	}
}

// Many goroutines publishing, consuming, getting and settling at once:
// every message is settled exactly once (and -race is quiet).
func TestConcurrentUse(t *testing.T) {
	b := memory.NewBroker() // real time: the consumer timeout must not interfere
	defer b.Close()
	ctx := ctxOf(t)
	admin := b.Connect()
	defer admin.Close()
	declareQueue(t, admin, transport.Queue{Name: "q"})
	const publishers, each = 8, 250
	var acked sync.Map
	var count atomic.Int64
	record := func(d transport.Delivery) {
		if _, dup := acked.LoadOrStore(string(d.Body), true); dup {
			t.Errorf("%s acked twice", d.Body)
		}
		count.Add(1)
	}
	var consumers sync.WaitGroup
	stop := make(chan struct{})
	for c := range 4 {
		tr := b.Connect()
		defer tr.Close()
		s, err := tr.Consume(ctx, "q", transport.ConsumeOptions{Prefetch: 1 + c*5})
		must(t, "Consume", err)
		consumers.Go(func() {
			i := 0
			for {
				select {
				case d, ok := <-transporttest.Chan(s):
					if !ok {
						t.Error("Deliveries closed early")
						return
					}
					i++
					if i%7 == 0 {
						_ = d.Nack(true) // comes again, redelivered
						continue
					}
					record(d)
					if err := d.Ack(); err != nil {
						t.Error(err)
					}
				case <-stop:
					_ = s.Cancel(ctx)
					for d := range transporttest.Chan(s) {
						record(d)
						_ = d.Ack()
					}
					return
				}
			}
		})
	}
	consumers.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if d, ok, err := admin.Get(ctx, "q"); err == nil && ok {
				record(d)
				_ = d.Ack()
			}
		}
	})
	var pubs sync.WaitGroup
	for p := range publishers {
		pubs.Go(func() {
			tr := b.Connect()
			defer tr.Close()
			for i := range each {
				c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: "q", Mandatory: true, Message: transport.Message{Body: []byte(fmt.Sprintf("%d-%d", p, i))}})
				if err == nil {
					err = c.Wait(ctx)
				}
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	pubs.Wait()
	waitFor(t, "every message settled", func() bool { return count.Load() == publishers*each })
	close(stop)
	consumers.Wait()
	wantState(t, admin, "q", 0, 0)
}

// Setup declares on the subscription's connection, before basic.consume.
func TestSetupDeclaresTopology(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	s, err := tr.Consume(ctxOf(t), "orders", transport.ConsumeOptions{Setup: func(ctx context.Context, d transport.Declarer) error {
		if err := d.DeclareExchange(ctx, transport.Exchange{Name: "shop", Type: transport.Topic, Durable: true}); err != nil {
			return err
		}
		if err := d.DeclareQueue(ctx, transport.Queue{Name: "orders", Type: transport.Quorum, Durable: true}); err != nil {
			return err
		}
		return d.Bind(ctx, transport.Binding{Queue: "orders", Exchange: "shop", RoutingKey: "order.*"})
	}})
	must(t, "Consume", err)
	must(t, "publish", publish(t, tr, transport.Publishing{Exchange: "shop", RoutingKey: "order.new", Mandatory: true, Message: transport.Message{Body: []byte("o")}}))
	if d := receive(t, s); string(d.Body) != "o" || d.Exchange != "shop" {
		t.Errorf("got %q from %q", d.Body, d.Exchange)
	}
	_, err = tr.Consume(ctxOf(t), "orders", transport.ConsumeOptions{Setup: func(ctx context.Context, d transport.Declarer) error {
		return d.DeclareQueue(ctx, transport.Queue{Name: "orders", Type: transport.Classic, Durable: true})
	}})
	if !errors.Is(err, transport.ErrPreconditionFailed) || !strings.Contains(err.Error(), "setup before consuming from orders") {
		t.Errorf("Consume with a Setup the broker refuses: %v", err)
	}
}

// A queue declared without a name gets one from the broker, as RabbitMQ
// names them (transport.Transport cannot return it).
func TestServerNamedQueue(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Exclusive: true, AutoDelete: true})
	declareQueue(t, tr, transport.Queue{Exclusive: true, AutoDelete: true})
	err := tr.DeclareQueue(ctxOf(t), transport.Queue{Name: "amq.gen-abc"})
	wantReply(t, "declaring a server name by hand", err, nil, 403, "ACCESS_REFUSED - queue name 'amq.gen-abc' contains reserved prefix 'amq.*'")
}

// RabbitMQ 3.10's quorum queue with x-overflow reject-publish takes the
// message that goes over x-max-length, refuses the next ones, and takes
// publishes again once back at 80% of the limit; reject-publish-dlx it
// treats as drop-head.
func TestQuorumOverflow(t *testing.T) {
	b, _ := testBroker(t)
	tr := connect(t, b)
	declareQueue(t, tr, transport.Queue{Name: "q", Type: transport.Quorum, Durable: true, Arguments: transport.Table{"x-max-length": int64(5), "x-overflow": "reject-publish"}})
	results := func(n int) (got []bool) {
		for i := range n {
			err := publish(t, tr, transport.Publishing{RoutingKey: "q", Message: transport.Message{Body: []byte(fmt.Sprint(i))}})
			if err != nil && !errors.Is(err, transport.ErrRefused) {
				t.Fatal(err)
			}
			got = append(got, err == nil)
		}
		return got
	}
	if got := results(7); !slices.Equal(got, []bool{true, true, true, true, true, true, false}) {
		t.Errorf("publishes taken: %v, want six (the one over the limit too), then refused", got)
	}
	for i, want := range []bool{false, true} { // 5 ready: refused; 4 (80%): taken
		d, _ := get(t, tr, "q")
		must(t, "Ack", d.Ack())
		if got := results(1); got[0] != want {
			t.Errorf("after taking %d: publish taken %v, want %v", i+1, got[0], want)
		}
	}

	declareQueue(t, tr, transport.Queue{Name: "dead"})
	declareQueue(t, tr, transport.Queue{Name: "dlx", Type: transport.Quorum, Durable: true, Arguments: transport.Table{
		"x-max-length": int64(2), "x-overflow": "reject-publish-dlx", "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dead"}})
	for _, s := range []string{"0", "1", "2", "3"} {
		sendBody(t, tr, "dlx", s)
	}
	if got := drain(t, tr, "dlx"); !slices.Equal(got, []string{"2", "3"}) {
		t.Errorf("kept %q", got)
	}
	if got := drain(t, tr, "dead"); !slices.Equal(got, []string{"0", "1"}) {
		t.Errorf("dead-lettered %q", got)
	}
}

// Closing the broker closes its connections and stops every goroutine and
// timer of it.
func TestCloseLeavesNothingRunning(t *testing.T) {
	b := memory.NewBroker()
	tr := b.Connect()
	declareQueue(t, tr, transport.Queue{Name: "q", Arguments: transport.Table{"x-message-ttl": int64(60_000), "x-expires": int64(60_000)}})
	sendBody(t, tr, "q", "m")
	s, err := tr.Consume(ctxOf(t), "q", transport.ConsumeOptions{Setup: func(context.Context, transport.Declarer) error { return nil }})
	must(t, "Consume", err)
	receive(t, s)
	b.Close()
	waitClosed(t, s)
	if err := publish(t, tr, transport.Publishing{RoutingKey: "q"}); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("publish after the broker's Close: %v", err)
	}
	if late := b.Connect(); late.DeclareQueue(ctxOf(t), transport.Queue{Name: "x"}) == nil {
		t.Error("a connection made after Close works")
	}
	if stacks := goroutines("transport/memory."); stacks != "" {
		t.Errorf("goroutines of the broker left after Close:\n%s", stacks)
	}
}

// goroutines returns the stacks of the goroutines (but this one) with a
// frame containing fn.
func goroutines(fn string) string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var found []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i > 0 && strings.Contains(g, fn) && !strings.Contains(g, "memory_test.") {
			found = append(found, g)
		}
	}
	return strings.Join(found, "\n\n")
}
