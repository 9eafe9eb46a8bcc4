package memory_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
	"github.com/acemq-go/acemq/transport/transporttest"
)

// testBroker is a broker on a manual clock, closed when the test ends.
func testBroker(t *testing.T, opts ...memory.Option) (*memory.Broker, *memory.ManualClock) {
	t.Helper()
	clock := memory.NewManualClock(epoch)
	b := memory.NewBroker(append([]memory.Option{memory.WithClock(clock)}, opts...)...)
	t.Cleanup(b.Close)
	return b, clock
}

// rabbitMQ310 makes a broker behave as RabbitMQ 3.10, for what only 3.10
// does: a connection exception on an unknown exchange type, for one.
var rabbitMQ310 = memory.WithRabbitMQVersion("3.10")

// versions are the RabbitMQ versions memory:// emulates, for the tests that
// run on each.
var versions = []string{"4.3", "4.0", "3.10"}

// eachVersion runs f as a subtest for each version, with a broker that
// emulates it.
func eachVersion(t *testing.T, f func(t *testing.T, v4 bool, b *memory.Broker, clock *memory.ManualClock)) {
	t.Helper()
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			b, clock := testBroker(t, memory.WithRabbitMQVersion(v))
			f(t, v != "3.10", b, clock)
		})
	}
}

func connect(t *testing.T, b *memory.Broker) *memory.Transport {
	t.Helper()
	tr := b.Connect()
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func declareQueue(t *testing.T, tr transport.Transport, q transport.Queue) {
	t.Helper()
	must(t, "DeclareQueue "+q.Name, tr.DeclareQueue(ctxOf(t), q))
}

func declareExchange(t *testing.T, tr transport.Transport, name string, typ transport.ExchangeType) {
	t.Helper()
	must(t, "DeclareExchange "+name, tr.DeclareExchange(ctxOf(t), transport.Exchange{Name: name, Type: typ, Durable: true}))
}

func bind(t *testing.T, tr transport.Transport, queue, exchange, key string) {
	t.Helper()
	must(t, "Bind", tr.Bind(ctxOf(t), transport.Binding{Queue: queue, Exchange: exchange, RoutingKey: key}))
}

// publish publishes and returns the broker's answer. A memory:// publish is
// answered before Publish returns.
func publish(t *testing.T, tr transport.Transport, p transport.Publishing) error {
	t.Helper()
	c, err := tr.Publish(ctxOf(t), p)
	if err != nil {
		return err
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("the Confirmation of a memory:// publish is not resolved when Publish returns")
	}
	return c.Err()
}

// send publishes body to queue through the default exchange, mandatory.
func send(t *testing.T, tr transport.Transport, queue string, m transport.Message) {
	t.Helper()
	must(t, "publish to "+queue, publish(t, tr, transport.Publishing{RoutingKey: queue, Mandatory: true, Message: m}))
}

func sendBody(t *testing.T, tr transport.Transport, queue, body string) {
	t.Helper()
	send(t, tr, queue, transport.Message{Body: []byte(body)})
}

func get(t *testing.T, tr transport.Transport, queue string) (transport.Delivery, bool) {
	t.Helper()
	d, ok, err := tr.Get(ctxOf(t), queue)
	must(t, "Get from "+queue, err)
	return d, ok
}

func mustGet(t *testing.T, tr transport.Transport, queue, body string) transport.Delivery {
	t.Helper()
	d, ok := get(t, tr, queue)
	if !ok {
		t.Fatalf("Get from %s: empty, want %q", queue, body)
	}
	if string(d.Body) != body {
		t.Fatalf("Get from %s: %q, want %q", queue, d.Body, body)
	}
	return d
}

// drain takes and acks every ready message of queue.
func drain(t *testing.T, tr transport.Transport, queue string) []string {
	t.Helper()
	var out []string
	for {
		d, ok := get(t, tr, queue)
		if !ok {
			return out
		}
		out = append(out, string(d.Body))
		must(t, "Ack", d.Ack())
	}
}

func state(t *testing.T, tr transport.Transport, queue string) transport.QueueState {
	t.Helper()
	st, err := tr.InspectQueue(ctxOf(t), queue)
	must(t, "InspectQueue "+queue, err)
	return st
}

func wantState(t *testing.T, tr transport.Transport, queue string, messages, consumers int) {
	t.Helper()
	if st := state(t, tr, queue); st.Messages != messages || st.Consumers != consumers {
		t.Errorf("%s holds %d ready with %d consumers, want %d and %d", queue, st.Messages, st.Consumers, messages, consumers)
	}
}

// receive waits for the next delivery, bounded (a subscription hands over
// from a goroutine of its own).
func receive(t *testing.T, s transport.Subscription) transport.Delivery {
	t.Helper()
	select {
	case d, ok := <-transporttest.Chan(s):
		if !ok {
			t.Fatal("Deliveries closed, want a delivery")
		}
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery within 10s")
	}
	panic("unreachable")
}

// waitClosed reads Deliveries until it closes.
func waitClosed(t *testing.T, s transport.Subscription) []transport.Delivery {
	t.Helper()
	var got []transport.Delivery
	timeout := time.After(10 * time.Second)
	for {
		select {
		case d, ok := <-transporttest.Chan(s):
			if !ok {
				return got
			}
			got = append(got, d)
		case <-timeout:
			t.Fatal("Deliveries still open after 10s")
		}
	}
}

// waitFor polls cond, a state of the broker that another goroutine (a
// subscription's) brings about, for up to 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not within 10s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// wantReply asserts err carries RabbitMQ's reply text, word for word.
func wantReply(t *testing.T, what string, err error, target error, code int, text string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s succeeded, want %d %s", what, code, text)
		return
	}
	want := "Exception (" + strconv.Itoa(code) + ") Reason: " + strconv.Quote(text)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%s:\n  got  %v\n  want %s", what, err, want)
	}
	if target != nil && !errors.Is(err, target) {
		t.Errorf("%s: %v does not match %v", what, err, target)
	}
	if target == nil && (errors.Is(err, transport.ErrNotFound) || errors.Is(err, transport.ErrPreconditionFailed)) {
		t.Errorf("%s: %v matches a transport sentinel; RabbitMQ's %d has none", what, err, code)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
