// Package memory is an in-process broker with RabbitMQ's semantics, behind
// memory://NAME URLs: exchanges and their routing, classic and quorum queues
// with their arguments, TTLs that expire from the head of the queue,
// dead-lettering with x-death (at least once from a quorum queue that asks
// for it), publisher confirms, prefetch, requeues in place, exclusive and
// auto-delete queues, and RabbitMQ's refusals, word for word. It behaves as
// RabbitMQ 4.3.6 by default, or as 4.0.5 or 3.10.8 (WithRabbitMQVersion,
// or memory://NAME?rabbitmq=4.0). It is never kinder than RabbitMQ: a test
// that passes on memory:// and fails on RabbitMQ is a bug here. Stream
// queues are append-only logs read from an offset, as RabbitMQ's.
//
// Time is a Clock: SystemClock by default, a ManualClock in tests, where
// Advance(5*time.Minute) expires a five-minute rung at once.
//
// One mutex guards a broker. Nothing blocks while holding it: a delivery is
// handed to a consumer by the subscription's own goroutine.
package memory

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acemq-go/acemq/internal/option"
	"github.com/acemq-go/acemq/transport"
)

// User is the user every memory:// connection is, RabbitMQ's default one: a
// message's user-id property must be it or nothing.
const User = "guest"

// defaultConsumerTimeout is RabbitMQ's default consumer_timeout: a
// delivery left unacknowledged for 30 minutes closes its channel.
const defaultConsumerTimeout = 30 * time.Minute

// defaultSettleTimeout is RabbitMQ's default
// dead_letter_worker_publisher_confirm_timeout: a quorum queue's
// at-least-once dead-letter worker tries again every 3 minutes to route what
// it could not.
const defaultSettleTimeout = 3 * time.Minute

// Option configures a Broker; one out of range is Open's error.
type Option func(*brokerOptions) error

type brokerOptions struct {
	clock           Clock
	consumerTimeout time.Duration
	settleTimeout   time.Duration
	em              *emulation
}

// WithClock runs the broker on c (default SystemClock).
func WithClock(c Clock) Option { return func(o *brokerOptions) error { o.clock = c; return nil } }

// WithConsumerTimeout sets RabbitMQ's consumer_timeout: a channel holding a
// delivery unsettled for d is closed, its deliveries requeued (default 30
// minutes, as RabbitMQ; 0 turns it off, as consumer_timeout = false).
func WithConsumerTimeout(d time.Duration) Option {
	return func(o *brokerOptions) error {
		if d < 0 {
			return fmt.Errorf("WithConsumerTimeout: the timeout is %s but must be at least 0 (0 turns it off)", d)
		}
		o.consumerTimeout = d
		return nil
	}
}

// withSettleTimeout sets dead_letter_worker_publisher_confirm_timeout
// (default 3 minutes): the conformance suite, on real time, waits less.
func withSettleTimeout(d time.Duration) Option {
	return func(o *brokerOptions) error { o.settleTimeout = d; return nil }
}

// WithRabbitMQVersion makes the broker behave as RabbitMQ version v: "4.3"
// (also "4.3.6"; the default), "4.0" (also "4" or "4.0.5") or "3.10" (also
// "3.10.8"). Its
// transports report that version as their State's ServerVersion. An
// unsupported version is Open's error saying which are supported
// (memory.Dial's for a URL's ?rabbitmq=).
func WithRabbitMQVersion(v string) Option {
	return func(o *brokerOptions) error {
		em, err := emulationOf(v)
		if err != nil {
			return fmt.Errorf("WithRabbitMQVersion: %w", err)
		}
		o.em = em
		return nil
	}
}

// Broker is one in-process broker: one vhost, '/'.
type Broker struct {
	clock           Clock
	consumerTimeout time.Duration
	settleTimeout   time.Duration
	em              *emulation

	mu         sync.Mutex
	closed     bool
	exchanges  map[string]*exchange
	queues     map[string]*queue
	transports map[*Transport]struct{}
	pos        uint64 // the position of the last message enqueued anywhere
	// alarm is the reason of the raised resource alarm ("" when none);
	// alarmCleared closes when it is cleared.
	alarm        string
	alarmCleared chan struct{}
}

// NewBroker is Open for options known to be right, as a test's or an
// example's are (none, or constants): it panics on Open's error, as
// regexp.MustCompile does.
func NewBroker(opts ...Option) *Broker {
	b, err := Open(opts...)
	if err != nil {
		panic(err)
	}
	return b
}

// Open returns a broker with RabbitMQ's predeclared exchanges. It fails
// only on an option out of range, such as a version memory:// does not
// emulate.
func Open(opts ...Option) (*Broker, error) {
	o := brokerOptions{clock: SystemClock, consumerTimeout: defaultConsumerTimeout, settleTimeout: defaultSettleTimeout, em: emulations[0]}
	if err := option.ApplyFuncs(&o, opts); err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	if o.clock == nil {
		o.clock = SystemClock
	}
	b := &Broker{
		clock:           o.clock,
		consumerTimeout: o.consumerTimeout,
		settleTimeout:   o.settleTimeout,
		em:              o.em,
		exchanges:       map[string]*exchange{},
		queues:          map[string]*queue{},
		transports:      map[*Transport]struct{}{},
	}
	for _, x := range []*exchange{
		{name: "amq.direct", typ: transport.Direct, durable: true},
		{name: "amq.fanout", typ: transport.Fanout, durable: true},
		{name: "amq.topic", typ: transport.Topic, durable: true},
		{name: "amq.headers", typ: transport.Headers, durable: true},
		{name: "amq.match", typ: transport.Headers, durable: true},
		{name: "amq.rabbitmq.trace", typ: transport.Topic, durable: true, internal: true},
	} {
		b.exchanges[x.name] = x
	}
	return b, nil
}

// Connect opens a connection to the broker. After Close it returns a
// connection that is already closed.
func (b *Broker) Connect() *Transport {
	return b.connect("")
}

func (b *Broker) connect(name string) *Transport {
	t := &Transport{b: b, name: name, done: make(chan struct{})}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		t.closed = true
		t.cancel()
		close(t.done)
		return t
	}
	t.conn = &conn{t: t}
	t.connects = 1
	b.transports[t] = struct{}{}
	return t
}

// SetAlarm raises a resource alarm, as RabbitMQ does when memory or disk
// runs low: a connection that publishes is blocked (its State says so, with
// reason, and its Notify handler gets transport.EventBlocked) and its
// publishes wait until ClearAlarm, failing with an error
// matching transport.ErrBlocked when their context ends first. Consuming,
// settling and declaring go on, on that connection too, as with
// transport/rabbitmq, whose consumers are on a connection apart from the
// publishing one RabbitMQ blocks. (RabbitMQ reads the first publish after the
// alarm before it stops reading; memory:// holds that one too.) A second
// SetAlarm changes the reason.
func (b *Broker) SetAlarm(reason string) {
	if reason == "" {
		reason = "resource alarm"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.alarm == "" {
		b.alarmCleared = make(chan struct{})
	}
	b.alarm = reason
}

// ClearAlarm clears the alarm: every blocked connection is unblocked (its
// Notify handler gets transport.EventUnblocked) and the publishes it held go
// on.
func (b *Broker) ClearAlarm() {
	b.mu.Lock()
	if b.alarm == "" {
		b.mu.Unlock()
		return
	}
	b.alarm = ""
	close(b.alarmCleared)
	var unblocked []*Transport
	for t := range b.transports {
		if t.blocked {
			t.blocked = false
			t.events.add(transport.Event{Kind: transport.EventUnblocked, Address: t.address()})
			unblocked = append(unblocked, t)
		}
	}
	b.mu.Unlock()
	for _, t := range unblocked {
		t.events.flush()
	}
}

// Close closes every connection (as Transport.Close does) and stops the
// broker's timers. The broker keeps nothing running afterwards.
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	ts := make([]*Transport, 0, len(b.transports))
	for t := range b.transports {
		ts = append(ts, t)
	}
	b.mu.Unlock()
	for _, t := range ts {
		_ = t.Close()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, q := range b.queues {
		q.stopTimers()
	}
}

// Peek returns copies of the ready messages of queue, head first, without
// taking them: what a test reads to see what a queue holds. Messages
// delivered and not yet settled are not ready and not included. A missing
// queue is an error matching transport.ErrNotFound.
func (b *Broker) Peek(queue string) ([]transport.Message, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q, ok := b.queues[queue]
	if !ok {
		return nil, mapErr("peek at queue "+queue, noQueue(queue))
	}
	out := make([]transport.Message, len(q.ready))
	for i, m := range q.ready {
		out[i] = m.c.copyMessage()
	}
	return out, nil
}

// nextPos is a new position, after every message enqueued so far.
func (b *Broker) nextPos() uint64 {
	b.pos++
	return b.pos
}

var registry struct {
	sync.Mutex
	brokers map[string]*Broker
}

// Register makes b the broker of memory://name. It is an error if the name
// is empty or taken.
func Register(name string, b *Broker) error {
	if name == "" {
		return errors.New("memory: register: the broker name is empty")
	}
	if b == nil {
		return fmt.Errorf("memory: register %s: the broker is nil", name)
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.brokers == nil {
		registry.brokers = map[string]*Broker{}
	}
	if _, taken := registry.brokers[name]; taken {
		return fmt.Errorf("memory: register %s: the name is taken (Unregister it first)", name)
	}
	registry.brokers[name] = b
	return nil
}

// Unregister forgets the broker of memory://name, without closing it; the
// next Dial of that name starts a new broker.
func Unregister(name string) {
	registry.Lock()
	defer registry.Unlock()
	delete(registry.brokers, name)
}

// Dial connects to memory://NAME: the broker registered under NAME, or a new
// broker on SystemClock, registered under NAME, when there is none. Each
// distinct NAME is a separate broker. memory://NAME?rabbitmq=4.0 makes a
// new broker behave as RabbitMQ 4.0 (see WithRabbitMQVersion), and refuses
// a broker of NAME that emulates another version.
func Dial(ctx context.Context, url string) (*Transport, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: dial %s: %w", url, context.Cause(ctx))
	}
	rest, ok := strings.CutPrefix(url, "memory://")
	name, query, _ := strings.Cut(rest, "?")
	switch {
	case !ok:
		return nil, fmt.Errorf("memory: dial %q: not a memory:// URL (want memory://NAME)", url)
	case name == "":
		return nil, fmt.Errorf("memory: dial %q: the broker name is empty (want memory://NAME)", url)
	case strings.ContainsAny(name, "/#@"):
		return nil, fmt.Errorf("memory: dial %q: a broker name has no '/', '?', '#' or '@' (want memory://NAME)", url)
	}
	var opts []Option
	em := emulations[0]
	if query != "" {
		v, err := versionQuery(query)
		if err != nil {
			return nil, fmt.Errorf("memory: dial %q: %w", url, err)
		}
		if em, err = emulationOf(v); err != nil {
			return nil, fmt.Errorf("memory: dial %q: %w", url, err)
		}
		opts = append(opts, WithRabbitMQVersion(v))
	}
	registry.Lock()
	if registry.brokers == nil {
		registry.brokers = map[string]*Broker{}
	}
	b, ok := registry.brokers[name]
	if !ok {
		b = NewBroker(opts...)
		registry.brokers[name] = b
	}
	registry.Unlock()
	if query != "" && b.em != em {
		return nil, fmt.Errorf("memory: dial %q: memory://%s is a broker that emulates RabbitMQ %s", url, name, b.em.version)
	}
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("memory: dial %s: the broker is closed: %w", url, transport.ErrClosed)
	}
	return b.connect(name), nil
}

// versionQuery reads the one parameter a memory:// URL takes: rabbitmq, the
// version to emulate.
func versionQuery(query string) (string, error) {
	params, err := neturl.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("the query does not parse: %w", err)
	}
	for k, vs := range params {
		if k != "rabbitmq" || len(vs) != 1 {
			return "", fmt.Errorf("a memory:// URL takes one parameter, rabbitmq=VERSION (such as rabbitmq=3.10), not %s", k)
		}
	}
	return params.Get("rabbitmq"), nil
}

// conn is one AMQP connection of a Transport. Close ends it for good; a
// connection error (RabbitMQ's 503 or 541) ends it and the Transport opens
// another at once, as transport/rabbitmq reconnects.
type conn struct {
	t        *Transport
	closed   bool
	channels []*channel // open, in the order opened
}

// channel holds the deliveries of one subscription (a consumer channel), of
// one basic.get, or of a Taker's: as in transport/rabbitmq, every
// subscription, every Get and every Taker has a channel of its own, and a
// delivery is settled on it only.
type channel struct {
	conn    *conn
	sub     *subscription // nil for a basic.get
	taking  bool          // an open Taker's: kept, with nothing to settle too, until it closes
	closed  bool
	unacked []*unacked // in delivery order

	lastTag uint64
	holds   *queue // the single-active-consumer role it keeps (queue.sacHeld)

	timerStop func() bool // the consumer timeout of unacked[0]
	timerAt   time.Time
	timerGen  uint64
}

func (c *conn) newChannel(s *subscription) *channel {
	ch := &channel{conn: c, sub: s}
	c.channels = append(c.channels, ch)
	return ch
}

// unacked is one delivery not yet settled.
type unacked struct {
	ch       *channel
	tag      uint64 // the delivery tag, on its channel
	q        *queue
	m        *qmsg
	consumer *consumer // nil for a basic.get
	at       time.Time
	done     bool
}

// release undoes what an unsettled delivery holds: its consumer's room
// under the prefetch, or the consumer a quorum queue counts for a get.
func (b *Broker) release(u *unacked) {
	switch {
	case u.consumer != nil:
		u.consumer.unacked--
	case u.q.typ == transport.Quorum:
		u.q.getConsumers--
		b.used(u.q)
	}
}

// add records the delivery of m on ch.
func (ch *channel) add(q *queue, m *qmsg, c *consumer, at time.Time) *unacked {
	ch.lastTag++
	u := &unacked{ch: ch, tag: ch.lastTag, q: q, m: m, consumer: c, at: at}
	ch.unacked = append(ch.unacked, u)
	return u
}

func (ch *channel) remove(u *unacked) {
	if i := slices.Index(ch.unacked, u); i >= 0 {
		ch.unacked = slices.Delete(ch.unacked, i, i+1)
	}
}

// retire forgets a channel that has nothing left to do (a basic.get's, once
// its delivery is settled).
func (b *Broker) retire(ch *channel) {
	ch.stopTimer()
	c := ch.conn
	if i := slices.Index(c.channels, ch); i >= 0 {
		c.channels = slices.Delete(c.channels, i, i+1)
	}
	if q := ch.holds; q != nil {
		ch.holds = nil
		if q.sacHeld == ch {
			q.sacHeld = nil
			b.dispatch(q)
		}
	}
}

func (ch *channel) stopTimer() {
	if ch.timerStop != nil {
		ch.timerStop()
		ch.timerStop = nil
	}
	ch.timerGen++
}

// closeChannel is the broker closing a channel (the consumer timeout, the
// connection going): its consumer is gone and every delivery not settled is
// requeued; settling one now fails with transport.ErrStaleDelivery.
func (b *Broker) closeChannel(ch *channel) {
	if ch.closed {
		return
	}
	ch.closed = true
	b.retire(ch)
	if s := ch.sub; s != nil {
		if c := s.cur; c != nil && c.ch == ch && !c.cancelled {
			b.removeConsumer(c)
		}
	}
	unacked := ch.unacked
	ch.unacked = nil
	for _, u := range unacked {
		b.release(u)
		if !u.q.deleted {
			b.requeue(u.q, u.m, true, true)
		}
	}
	if ch.sub != nil {
		ch.sub.signal()
	}
}

// closeConn ends a connection: its channels close (requeueing what they
// held) and its exclusive queues are deleted.
func (b *Broker) closeConn(c *conn) {
	if c.closed {
		return
	}
	c.closed = true
	for _, ch := range slices.Clone(c.channels) {
		b.closeChannel(ch)
	}
	for _, name := range sortedNames(b.queues) {
		if q := b.queues[name]; q.owner == c {
			b.deleteQueue(q)
		}
	}
}

// armTimeout keeps the consumer-timeout timer of ch on its oldest delivery.
func (b *Broker) armTimeout(ch *channel) {
	if b.consumerTimeout <= 0 {
		return
	}
	need := !ch.closed && !b.closed && len(ch.unacked) > 0
	var at time.Time
	if need {
		at = ch.unacked[0].at.Add(b.consumerTimeout)
		if ch.timerStop != nil && ch.timerAt.Equal(at) {
			return
		}
	}
	ch.stopTimer()
	if !need {
		return
	}
	gen := ch.timerGen
	ch.timerAt = at
	ch.timerStop = b.clock.AfterFunc(at.Sub(b.clock.Now()), func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.closed || ch.closed || ch.timerGen != gen {
			return
		}
		ch.timerStop = nil
		if len(ch.unacked) > 0 && !b.clock.Now().Before(ch.unacked[0].at.Add(b.consumerTimeout)) {
			// RabbitMQ: PRECONDITION_FAILED - delivery acknowledgement on
			// channel 1 timed out.
			b.closeChannel(ch)
			return
		}
		b.armTimeout(ch)
	})
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
