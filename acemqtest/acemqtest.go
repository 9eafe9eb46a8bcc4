// Package acemqtest helps users test code built on acemq without a broker:
// a fresh memory:// broker per test on a clock the test moves, and ways to
// wait for a settlement and read what a queue holds.
//
//	func TestCheckout(t *testing.T) {
//		b := acemqtest.NewBroker(t)
//		conn := b.Connect(t)
//		// declare, publish, consume as in production...
//		b.Advance(5 * time.Minute) // a five-minute rung expires now
//		acemqtest.WaitFor(t, consumer, "the retry", func(s acemq.Stats) bool { return s.Accepted == 1 })
//		dead := b.Messages(t, contract.DeadLetterQueue("orders"))
//	}
//
// A policy's jitter spreads waits in the consumer, and Advance moves the
// clock exactly. Exponential's jitter (and the notation's exponential(...))
// is 0.2: a 1s consumer wait lasts from 0.8s up to 1.2s, so
// Advance(time.Second) may leave it still waiting. For exact waits, give the
// consumer a policy without jitter: Exponential(...).WithJitter(0),
// ".withJitter(0)" in the notation, or Fixed, which has none. Rung waits are
// never jittered.
package acemqtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// Broker is a memory:// broker of one test, on a clock the test advances.
type Broker struct {
	// URL is memory://NAME, with a name unique to the test.
	URL string
	// Clock is the broker's time, and that of every connection made with
	// Connect: rung expiries, per-message expirations and consumer waits.
	Clock  *memory.ManualClock
	broker *memory.Broker
}

// NewBroker starts a broker for t, removed when t ends. It behaves as
// RabbitMQ 4.3 unless opts say otherwise, such as
// memory.WithRabbitMQVersion("4.0") or ("3.10"); its clock is always the
// manual one.
func NewBroker(t testing.TB, opts ...memory.Option) *Broker {
	t.Helper()
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	name := "acemqtest-" + hex.EncodeToString(suffix)
	clock := memory.NewManualClock(time.Now().UTC().Truncate(time.Millisecond))
	broker, err := memory.Open(append(slices.Clip(opts), memory.WithClock(clock))...)
	if err != nil {
		t.Fatal(err)
	}
	b := &Broker{URL: "memory://" + name, Clock: clock, broker: broker}
	if err := memory.Register(name, b.broker); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		memory.Unregister(name)
		b.broker.Close()
	})
	return b
}

// SetAlarm raises a resource alarm on the broker, as RabbitMQ does when
// memory runs low: a connection that publishes is blocked and its publishes
// wait (failing with acemq.ErrBlocked at their deadline) until ClearAlarm.
func (b *Broker) SetAlarm(reason string) { b.broker.SetAlarm(reason) }

// ClearAlarm clears the alarm; the publishes held go on.
func (b *Broker) ClearAlarm() { b.broker.ClearAlarm() }

// Connect connects to the broker on its clock; the connection closes when t
// ends.
func (b *Broker) Connect(t testing.TB, opts ...acemq.ConnOption) *acemq.Conn {
	t.Helper()
	tr, err := memory.Dial(context.Background(), b.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := acemq.New(tr, append([]acemq.ConnOption{acemq.WithClock(b.Clock)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// NewPublisher is acemq.NewPublisher, failing t on an error.
func NewPublisher[T any](t testing.TB, conn *acemq.Conn, exchange string, opts ...acemq.PublisherOption) *acemq.Publisher[T] {
	t.Helper()
	p, err := acemq.NewPublisher[T](conn, exchange, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Advance moves the clock on by d, running every expiry and wait that falls
// due, in order.
func (b *Broker) Advance(d time.Duration) { b.Clock.Advance(d) }

// Message is a message waiting in a queue.
type Message struct {
	Envelope acemq.Envelope
	Body     []byte
	// Headers are all of the message's headers, x-acemq-* and x-death
	// included.
	Headers transport.Table
}

// Messages reads the ready messages of queue, in order, without removing
// them.
func (b *Broker) Messages(t testing.TB, queue string) []Message {
	t.Helper()
	msgs, err := b.broker.Peek(queue)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = Message{Envelope: acemq.ReadEnvelope(m), Body: m.Body, Headers: m.Headers}
	}
	return out
}

// WaitFor waits until cond holds for the consumer's counts (a settlement
// done), and fails t after ten seconds of real time. Settlements that wait
// need the clock advanced first.
func WaitFor(t testing.TB, c *acemq.Consumer, what string, cond func(acemq.Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond(c.Stats()) {
		if time.Now().After(deadline) {
			t.Fatalf("acemqtest: waiting for %s: not within 10s; the consumer's counts are %+v", what, c.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}
