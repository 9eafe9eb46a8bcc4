// Package transporttest is the conformance suite of transport.Transport: the
// broker behaviours acemq relies on, written once and run against every
// transport. RabbitMQ is the truth; the in-process memory:// broker must pass
// the same suite, so a behaviour where the two differ is a failing test.
//
//	func TestConformance(t *testing.T) {
//		transporttest.Run(t, transporttest.Target{
//			Name:      "memory",
//			Emulation: true,
//			Connect: func(t *testing.T) transport.Transport {
//				tr := broker.Connect()
//				t.Cleanup(func() { _ = tr.Close() })
//				return tr
//			},
//		})
//	}
//
// Every behaviour declares its own uniquely named queues and exchanges (so the
// suite may share a broker with other tests) and deletes them through the
// transport afterwards. It waits only on observable state, each wait bounded
// by a deadline; it never sleeps hoping something happened and never asserts
// a duration. Behaviours that involve time use short real TTLs (100ms to 2s),
// except one: an at-least-once dead letter that could not be routed waits
// for RabbitMQ's dead-letter worker, which tries again every 3 minutes.
//
// Where RabbitMQ versions differ, a behaviour expects what the broker's
// version does: the suite reads it from the first connection
// (transport.State's ServerVersion) and expects each version's own
// behaviour, as measured on RabbitMQ 3.10.8, 4.0.5 and 4.3.6 (see since).
// No behaviour is skipped for a version.
package transporttest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"maps"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq/transport"
)

// Target is a broker under test.
type Target struct {
	Name string
	// Connect opens a new connection to the broker (tests need several:
	// exclusive queues, round robin, connection loss). It closes the
	// connection when t ends (t.Cleanup), unless the test closed it first.
	Connect func(t *testing.T) transport.Transport
	// Emulation marks a target that emulates RabbitMQ (memory://): the
	// counts name it "NAME (RabbitMQ VERSION mode)" rather than
	// "NAME VERSION".
	Emulation bool
}

// ExchangeDeleter is implemented by a transport that can delete an
// exchange. transport.Transport cannot, so the suite deletes the exchanges it
// declared through this interface when the transport offers it, and leaves
// them behind otherwise (harmless on a broker made for one run).
type ExchangeDeleter interface {
	DeleteExchange(ctx context.Context, name string) error
}

// behaviour is one subtest of the suite.
type behaviour struct {
	name string
	run  func(e *env)
}

// group is a set of behaviours under one subtest name.
type group struct {
	name       string
	behaviours []behaviour
}

func suite() []group {
	return []group{
		{"exchanges", exchangeBehaviours()},
		{"queues", queueBehaviours()},
		{"dead-lettering", deadLetterBehaviours()},
		{"publish", publishBehaviours()},
		{"consume", consumeBehaviours()},
		{"settlement", settlementBehaviours()},
		{"take", takeBehaviours()},
		{"requeue", requeueBehaviours()},
		{"streams", streamBehaviours()},
	}
}

// Run runs every behaviour as a subtest of t (in parallel), and logs how many
// ran against which broker version and how many failed.
func Run(t *testing.T, target Target) {
	t.Helper()
	if target.Connect == nil {
		t.Fatal("transporttest: Target.Connect is nil")
	}
	name := target.Name
	if name == "" {
		name = "the target"
	}
	first := target.Connect(t)
	reported := first.State().ServerVersion
	_ = first.Close()
	v, err := parseVersion(reported)
	if err != nil {
		t.Fatalf("transporttest: %s: %v", name, err)
	}
	if target.Emulation {
		name = fmt.Sprintf("%s (RabbitMQ %s mode)", name, reported)
	} else {
		name += " " + reported
	}
	var ran, failed atomic.Int64
	t.Cleanup(func() {
		t.Logf("transporttest: %d behaviours ran against %s, %d failed", ran.Load(), name, failed.Load())
	})
	for _, g := range suite() {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, b := range g.behaviours {
				t.Run(b.name, func(t *testing.T) {
					t.Parallel()
					ran.Add(1)
					t.Cleanup(func() {
						if t.Failed() {
							failed.Add(1)
						}
					})
					b.run(newEnv(t, target, v))
				})
			}
		})
	}
}

// timeout bounds every wait of one behaviour; nothing asserts a duration.
// It is long because it only catches a broker that never does what the
// behaviour waits for: with two checkouts testing three versions each, a
// behaviour with a 200 ms rung once spent all of 30 s.
const timeout = 2 * time.Minute

// poll is how often a wait looks at the broker's state again.
const poll = 10 * time.Millisecond

// env is what one behaviour works with: its test, the broker's version, a
// deadline and a first connection, which the behaviour never closes
// (cleanups go through it).
type env struct {
	t      *testing.T
	target Target
	v      version
	ctx    context.Context
	tr     transport.Transport
}

func newEnv(t *testing.T, target Target, v version) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	e := &env{t: t, target: target, v: v, ctx: ctx}
	e.tr = e.connect()
	return e
}

// version is a RabbitMQ version, as far as the suite tells versions apart.
type version struct{ major, minor int }

// parseVersion reads the version a broker reports ("3.10.8", "4.0.5").
func parseVersion(s string) (version, error) {
	parts := strings.SplitN(s, ".", 3)
	if len(parts) >= 2 {
		major, err1 := strconv.Atoi(parts[0])
		minor, err2 := strconv.Atoi(parts[1])
		if err1 == nil && err2 == nil {
			return version{major, minor}, nil
		}
	}
	return version{}, fmt.Errorf("the broker reports no version the suite can read (State().ServerVersion is %q, want MAJOR.MINOR.PATCH)", s)
}

// atLeast reports whether v is major.minor or later.
func (v version) atLeast(major, minor int) bool {
	return v.major > major || v.major == major && v.minor >= minor
}

// since is what a behaviour expects of the broker: now on RabbitMQ
// major.minor and later, before on earlier versions. Where a change is
// known to have come in a release between those measured (3.10.8, 4.0.5
// and 4.3.6), it is keyed by that release (x-last-death-* since 3.13);
// otherwise by 4.0, or by 4.3 for what changed after 4.0.5 (perhaps in 4.1
// or 4.2: not measured).
func since[T any](e *env, major, minor int, before, now T) T {
	if e.v.atLeast(major, minor) {
		return now
	}
	return before
}

// allow bounds the behaviour's waits by d from now, for the one that needs
// longer than the suite's timeout.
func (e *env) allow(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	e.t.Cleanup(cancel)
	e.ctx = ctx
}

// connect opens another connection to the broker.
func (e *env) connect() transport.Transport {
	e.t.Helper()
	tr := e.target.Connect(e.t)
	if tr == nil {
		e.t.Fatal("Target.Connect returned nil")
	}
	return tr
}

// name returns a queue or exchange name no other test uses: a fixed prefix,
// kind, the behaviour's name and a random suffix.
func (e *env) name(kind string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	leaf := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, path.Base(e.t.Name()))
	if len(leaf) > 48 {
		leaf = leaf[:48]
	}
	return "acemq-conformance." + kind + "." + leaf + "." + hex.EncodeToString(b[:])
}

// cleanupCtx is for cleanups, which run after the behaviour's deadline may
// have passed.
func cleanupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 10*time.Second)
}

// declareQueue declares q on e.tr and deletes it when the test ends.
func (e *env) declareQueue(q transport.Queue) string {
	e.t.Helper()
	return e.declareQueueOn(e.tr, q)
}

// declareQueueOn declares q on tr, and deletes it through tr when the test
// ends (an exclusive queue can only be deleted by its own connection).
func (e *env) declareQueueOn(tr transport.Transport, q transport.Queue) string {
	e.t.Helper()
	if q.Name == "" {
		e.t.Fatal("declareQueue: no name")
	}
	e.deleteQueueLater(tr, q.Name)
	if err := tr.DeclareQueue(e.ctx, q); err != nil {
		e.t.Fatalf("DeclareQueue %s: %v", q, err)
	}
	return q.Name
}

// deleteQueueLater deletes queue through tr when the test ends.
func (e *env) deleteQueueLater(tr transport.Transport, queue string) {
	e.t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		if _, err := tr.DeleteQueue(ctx, queue); err != nil && !errors.Is(err, transport.ErrClosed) {
			e.t.Logf("cleanup: DeleteQueue %s: %v", queue, err)
		}
	})
}

// deleteExchangeLater deletes exchange when the test ends, if the transport
// can.
func (e *env) deleteExchangeLater(exchange string) {
	del, ok := e.tr.(ExchangeDeleter)
	if !ok {
		return
	}
	e.t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		if err := del.DeleteExchange(ctx, exchange); err != nil {
			e.t.Logf("cleanup: DeleteExchange %s: %v", exchange, err)
		}
	})
}

// classic declares a durable classic queue with args.
func (e *env) classic(kind string, args transport.Table) string {
	e.t.Helper()
	return e.declareQueue(transport.Queue{Name: e.name(kind), Type: transport.Classic, Durable: true, Arguments: args})
}

// exchange declares a durable exchange of type typ.
func (e *env) exchange(kind string, typ transport.ExchangeType) string {
	e.t.Helper()
	name := e.name(kind)
	e.deleteExchangeLater(name)
	if err := e.tr.DeclareExchange(e.ctx, transport.Exchange{Name: name, Type: typ, Durable: true}); err != nil {
		e.t.Fatalf("DeclareExchange %s (%s): %v", name, typ, err)
	}
	return name
}

func (e *env) bind(queue, exchange, key string) {
	e.t.Helper()
	if err := e.tr.Bind(e.ctx, transport.Binding{Queue: queue, Exchange: exchange, RoutingKey: key}); err != nil {
		e.t.Fatalf("Bind %s to %s under %q: %v", queue, exchange, key, err)
	}
}

// publishOn publishes p on tr and waits for the broker's answer: Publish's
// error or the Confirmation's.
func (e *env) publishOn(tr transport.Transport, p transport.Publishing) error {
	e.t.Helper()
	c, err := tr.Publish(e.ctx, p)
	if err != nil {
		return err
	}
	if c == nil {
		e.t.Fatalf("Publish to %q/%q returned neither a Confirmation nor an error", p.Exchange, p.RoutingKey)
	}
	return c.Wait(e.ctx)
}

func (e *env) publish(p transport.Publishing) error {
	e.t.Helper()
	return e.publishOn(e.tr, p)
}

// mustPublish publishes p and fails the test unless the broker confirms it.
func (e *env) mustPublish(p transport.Publishing) {
	e.t.Helper()
	if err := e.publish(p); err != nil {
		e.t.Fatalf("publish to exchange %q with routing key %q: %v", p.Exchange, p.RoutingKey, err)
	}
}

// send publishes m to queue through the default exchange, mandatory, and
// waits for the confirm.
func (e *env) send(queue string, m transport.Message) {
	e.t.Helper()
	e.mustPublish(transport.Publishing{RoutingKey: queue, Mandatory: true, Message: m})
}

// sendBody sends a persistent message with body (and message id) s.
func (e *env) sendBody(queue, s string) {
	e.t.Helper()
	e.send(queue, transport.Message{MessageID: s, Persistent: true, Body: []byte(s)})
}

// get takes one message from queue now; ok is false when there is none.
func (e *env) getOn(tr transport.Transport, queue string) (transport.Delivery, bool) {
	e.t.Helper()
	d, ok, err := tr.Get(e.ctx, queue)
	if err != nil {
		e.t.Fatalf("Get from %s: %v", queue, err)
	}
	if ok && d.Settler == nil {
		e.t.Fatalf("Get from %s: a delivery without a Settler", queue)
	}
	return d, ok
}

func (e *env) get(queue string) (transport.Delivery, bool) {
	e.t.Helper()
	return e.getOn(e.tr, queue)
}

// mustGet takes one message from queue, which must hold one now.
func (e *env) mustGet(queue string) transport.Delivery {
	e.t.Helper()
	d, ok := e.get(queue)
	if !ok {
		e.t.Fatalf("Get from %s: the queue is empty", queue)
	}
	return d
}

// getBody takes one message, which must have body want, and returns it.
func (e *env) getBody(queue, want string) transport.Delivery {
	e.t.Helper()
	d := e.mustGet(queue)
	if string(d.Body) != want {
		e.t.Fatalf("Get from %s: %q, want %q", queue, d.Body, want)
	}
	return d
}

// waitGet takes one message from queue, waiting for one to arrive.
func (e *env) waitGet(queue string) transport.Delivery {
	e.t.Helper()
	var d transport.Delivery
	e.eventually("a message in "+queue, func() bool {
		var ok bool
		d, ok = e.get(queue)
		return ok
	})
	return d
}

// empty asserts that queue holds no ready message.
func (e *env) empty(queue string) {
	e.t.Helper()
	if d, ok := e.get(queue); ok {
		e.t.Errorf("queue %s holds %q, want it empty", queue, d.Body)
	}
}

func (e *env) inspectOn(tr transport.Transport, queue string) transport.QueueState {
	e.t.Helper()
	st, err := tr.InspectQueue(e.ctx, queue)
	if err != nil {
		e.t.Fatalf("InspectQueue %s: %v", queue, err)
	}
	return st
}

func (e *env) inspect(queue string) transport.QueueState {
	e.t.Helper()
	return e.inspectOn(e.tr, queue)
}

// wantState asserts a queue's state now, without waiting: for what a
// confirm or a settlement has already made true.
func (e *env) wantState(queue string, messages, consumers int) {
	e.t.Helper()
	st := e.inspect(queue)
	if st.Messages != messages || st.Consumers != consumers {
		e.t.Errorf("InspectQueue %s = %d ready, %d consumers; want %d ready, %d consumers", queue, st.Messages, st.Consumers, messages, consumers)
	}
	if st.Name != queue {
		e.t.Errorf("InspectQueue %s names the queue %q", queue, st.Name)
	}
}

// waitState waits until queue has that many ready messages and consumers.
func (e *env) waitState(queue string, messages, consumers int) {
	e.t.Helper()
	var st transport.QueueState
	e.eventuallyf(func() bool {
		st = e.inspect(queue)
		return st.Messages == messages && st.Consumers == consumers
	}, func() string {
		return fmt.Sprintf("%s with %d ready and %d consumers (last seen: %d ready, %d consumers)", queue, messages, consumers, st.Messages, st.Consumers)
	})
}

// waitMessages waits until queue has n ready messages.
func (e *env) waitMessages(queue string, n int) {
	e.t.Helper()
	var st transport.QueueState
	e.eventuallyf(func() bool {
		st = e.inspect(queue)
		return st.Messages == n
	}, func() string {
		return fmt.Sprintf("%s with %d ready (last seen: %d)", queue, n, st.Messages)
	})
}

// waitGone waits until queue no longer exists (InspectQueue: ErrNotFound).
func (e *env) waitGone(tr transport.Transport, queue string) {
	e.t.Helper()
	var last error
	e.eventuallyf(func() bool {
		_, last = tr.InspectQueue(e.ctx, queue)
		return errors.Is(last, transport.ErrNotFound)
	}, func() string {
		return fmt.Sprintf("queue %s to be deleted (InspectQueue: %v)", queue, last)
	})
}

// eventually polls cond, a state of the broker, until it holds; it fails the
// test at the behaviour's deadline.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	e.eventuallyf(cond, func() string { return what })
}

func (e *env) eventuallyf(cond func() bool, what func() string) {
	e.t.Helper()
	for !cond() {
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("waiting for %s: %v", what(), e.ctx.Err())
		case <-time.After(poll):
		}
	}
}

// consumeOn subscribes on tr and cancels the subscription when the test ends.
func (e *env) consumeOn(tr transport.Transport, queue string, opts transport.ConsumeOptions) transport.Subscription {
	e.t.Helper()
	s, err := tr.Consume(e.ctx, queue, opts)
	if err != nil {
		e.t.Fatalf("Consume %s: %v", queue, err)
	}
	if s == nil {
		e.t.Fatalf("Consume %s returned no Subscription", queue)
	}
	e.t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		_ = s.Cancel(ctx)
	})
	return s
}

func (e *env) consume(queue string, opts transport.ConsumeOptions) transport.Subscription {
	e.t.Helper()
	return e.consumeOn(e.tr, queue, opts)
}

// Deliverer yields deliveries: a transport.Subscription, an
// acemq.TemporaryConsumer.
type Deliverer interface {
	Deliveries() iter.Seq[transport.Delivery]
}

// chans holds the channel Chan made for each Deliverer whose Deliveries
// have not ended.
var chans sync.Map // Deliverer → chan transport.Delivery

// Chan is s's Deliveries on a channel, for a test that waits with a
// deadline or selects among several subscriptions: one goroutine ranges
// over them, hands each over and closes the channel once they end. Every
// call for s returns the same channel.
func Chan(s Deliverer) <-chan transport.Delivery {
	if ch, ok := chans.Load(s); ok {
		return ch.(chan transport.Delivery)
	}
	ch := make(chan transport.Delivery)
	if got, loaded := chans.LoadOrStore(s, ch); loaded {
		return got.(chan transport.Delivery)
	}
	go func() {
		for d := range s.Deliveries() {
			ch <- d
		}
		chans.Delete(s)
		close(ch)
	}()
	return ch
}

// receive waits for the next delivery.
func (e *env) receive(s transport.Subscription) transport.Delivery {
	e.t.Helper()
	select {
	case d, ok := <-Chan(s):
		if !ok {
			e.t.Fatal("Deliveries ended, want a delivery")
		}
		if d.Settler == nil {
			e.t.Fatal("a delivery without a Settler")
		}
		return d
	case <-e.ctx.Done():
		e.t.Fatalf("waiting for a delivery: %v", e.ctx.Err())
	}
	panic("unreachable")
}

// waitClosed takes s's Deliveries until they end, and returns what it took.
func (e *env) waitClosed(s transport.Subscription) []transport.Delivery {
	e.t.Helper()
	var got []transport.Delivery
	ch := Chan(s)
	for {
		select {
		case d, ok := <-ch:
			if !ok {
				return got
			}
			got = append(got, d)
		case <-e.ctx.Done():
			e.t.Fatalf("waiting for Deliveries to end: %v", e.ctx.Err())
		}
	}
}

// ok fails the test on err.
func (e *env) ok(what string, err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// wantErr asserts err matches target and its text holds every one of texts.
func (e *env) wantErr(what string, err, target error, texts ...string) {
	e.t.Helper()
	if err == nil {
		e.t.Errorf("%s succeeded, want an error matching %q", what, target)
		return
	}
	if target != nil && !errors.Is(err, target) {
		e.t.Errorf("%s: %v; want an error matching %q", what, err, target)
	}
	for _, s := range texts {
		if !strings.Contains(err.Error(), s) {
			e.t.Errorf("%s: %q does not say %q", what, err, s)
		}
	}
}

// bodies returns the bodies of ds.
func bodies(ds []transport.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = string(d.Body)
	}
	return out
}

// withoutDeaths returns a copy of h without the headers dead-lettering
// writes (x-death, x-first-death-*, x-last-death-*).
func withoutDeaths(h transport.Table) transport.Table {
	out := maps.Clone(h)
	for _, k := range deathHeaders {
		delete(out, k)
	}
	return out
}

// drain takes every ready message from queue, acks it, and returns the bodies.
func (e *env) drain(queue string) []string {
	e.t.Helper()
	return e.drainAs(queue, func(d transport.Delivery) string { return string(d.Body) })
}

// drainAs takes every ready message from queue in turn (Get, then Ack) and
// returns each as describe says.
func (e *env) drainAs(queue string, describe func(transport.Delivery) string) []string {
	e.t.Helper()
	var out []string
	for {
		d, ok := e.get(queue)
		if !ok {
			return out
		}
		out = append(out, describe(d))
		e.ok("Ack", d.Ack())
	}
}
