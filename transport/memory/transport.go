package memory

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acemq-go/acemq/transport"
)

var _ transport.Transport = (*Transport)(nil)

// Transport is a connection to a Broker, a transport.Transport. Like
// transport/rabbitmq, every subscription and every Get has a channel of its
// own; a failed operation harms nothing else.
type Transport struct {
	b    *Broker
	name string // memory://name, when dialled

	ctx    context.Context // ended by Close
	cancel context.CancelFunc
	done   chan struct{} // closed by Close
	wg     sync.WaitGroup

	// guarded by b.mu
	conn      *conn
	closed    bool
	blocked   bool // it published during the broker's alarm
	connects  int
	lastErr   error
	lastErrAt time.Time

	events notifier // Notify's
}

// String names the broker: memory://NAME.
func (t *Transport) String() string {
	if t.name == "" {
		return "memory broker"
	}
	return "memory://" + t.name
}

// address is the Event.Address of t's events: memory://NAME, or "" when
// not dialled.
func (t *Transport) address() string {
	if t.name == "" {
		return ""
	}
	return t.String()
}

// State reports the connection: open until Close, blocked once it publishes
// during an alarm (Broker.SetAlarm), and its connection exceptions.
func (t *Transport) State() transport.State {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	st := transport.State{Connected: !t.closed, Closed: t.closed, Blocked: t.blocked,
		Connects: t.connects, ServerVersion: t.b.em.version, LastError: t.lastErr, LastErrorAt: t.lastErrAt,
		Address: t.address()}
	if t.blocked {
		st.BlockedReason = t.b.alarm
	}
	return st
}

// Close closes the connection: every delivery it has not settled is
// requeued (redelivered), its exclusive queues are deleted, its
// subscriptions' Deliveries close, and it waits for their goroutines.
// Settling a delivery of it afterwards fails with an error matching both
// transport.ErrClosed and transport.ErrStaleDelivery; everything else fails
// with transport.ErrClosed. A second Close does nothing.
func (t *Transport) Close() error {
	b := t.b
	b.mu.Lock()
	if t.closed {
		b.mu.Unlock()
		return nil
	}
	t.closed = true
	b.closeConn(t.conn)
	delete(b.transports, t)
	b.mu.Unlock()
	t.cancel()
	close(t.done)
	t.wg.Wait()
	return nil
}

// begin locks the broker for an operation of t: transport.ErrClosed once t
// is closed, ctx's error once it has ended. The caller unlocks.
func (t *Transport) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	t.b.mu.Lock()
	if t.closed {
		t.b.mu.Unlock()
		return transport.ErrClosed
	}
	return nil
}

// connectionError ends the current connection as RabbitMQ does on a
// connection exception (503, 541), and opens the next one, as
// transport/rabbitmq reconnects: deliveries not settled are requeued and
// stale, exclusive queues are gone, subscriptions subscribe again. It queues
// the events (EventLost, EventUnblocked if blocked, EventRecovered); the
// caller flushes them once the broker is unlocked.
func (t *Transport) connectionError(err *amqpError) {
	if !err.connection || t.closed {
		return
	}
	t.b.closeConn(t.conn)
	t.conn = &conn{t: t}
	t.connects++
	t.lastErr, t.lastErrAt = fmt.Errorf("memory: connection closed by the broker: %w", classify(err)), t.b.clock.Now()
	addr := t.address()
	t.events.add(transport.Event{Kind: transport.EventLost, Address: addr, Err: t.lastErr})
	if t.blocked {
		t.blocked = false // a new connection is blocked only once it publishes
		t.events.add(transport.Event{Kind: transport.EventUnblocked, Address: addr})
	}
	t.events.add(transport.Event{Kind: transport.EventRecovered, Address: addr})
}

// shortstr checks what AMQP sends as a short string, with amqp091's words.
func shortstr(s string) error {
	if len(s) > 255 {
		return fmt.Errorf("amqp: shortstr %q exceeds 255 bytes", s)
	}
	return nil
}

// DeclareExchange declares e; an existing exchange with another type or
// durability is an error matching transport.ErrPreconditionFailed.
func (t *Transport) DeclareExchange(ctx context.Context, e transport.Exchange) error {
	what := "declare " + e.String()
	if err := shortstr(e.Name); err != nil {
		return fmt.Errorf("memory: %s: %w", what, err)
	}
	defer t.events.flush() // after the unlock: the events of a connection error
	if err := t.begin(ctx); err != nil {
		return err
	}
	defer t.b.mu.Unlock()
	err := t.b.declareExchange(e)
	if err != nil {
		t.connectionError(err)
		return mapErr(what, err)
	}
	return nil
}

func (b *Broker) declareExchange(e transport.Exchange) *amqpError {
	// RabbitMQ 3.10 refuses an exchange type on the connection, 4.0 on the
	// channel.
	refuse := commandInvalid
	if b.em.v4 {
		refuse = preconditionFailed
	}
	switch e.Type {
	case transport.Direct, transport.Fanout, transport.Topic, transport.Headers:
	case "":
		return refuse("invalid exchange type ''")
	default:
		return refuse("unknown exchange type '%s'", e.Type)
	}
	if e.Name == "" {
		return accessRefused("operation not permitted on the default exchange")
	}
	if x, ok := b.exchanges[e.Name]; ok {
		inequivalent := func(arg string, received, current any) *amqpError {
			return preconditionFailed("inequivalent arg '%s' for exchange '%s' in vhost '/': received '%v' but current is '%v'", arg, e.Name, received, current)
		}
		switch {
		case x.typ != e.Type:
			return inequivalent("type", e.Type, x.typ)
		case x.durable != e.Durable:
			return inequivalent("durable", e.Durable, x.durable)
		case x.internal:
			return inequivalent("internal", false, true)
		}
		return nil
	}
	if strings.HasPrefix(e.Name, "amq.") {
		return accessRefused("exchange name '%s' contains reserved prefix 'amq.*'", e.Name)
	}
	b.exchanges[e.Name] = &exchange{name: e.Name, typ: e.Type, durable: e.Durable}
	return nil
}

// DeleteExchange deletes an exchange and its bindings; deleting one that
// does not exist succeeds. The default exchange and the amq.* ones cannot be
// deleted. (transport.Transport has no such method; the conformance suite
// uses it to clean up.)
func (t *Transport) DeleteExchange(ctx context.Context, name string) error {
	what := "delete exchange " + name
	if err := t.begin(ctx); err != nil {
		return err
	}
	defer t.b.mu.Unlock()
	switch {
	case name == "":
		return mapErr(what, accessRefused("operation not permitted on the default exchange"))
	case strings.HasPrefix(name, "amq."):
		if _, ok := t.b.exchanges[name]; ok {
			return mapErr(what, accessRefused("deletion of system exchange '%s' in vhost '/' not allowed", name))
		}
	}
	delete(t.b.exchanges, name)
	return nil
}

// DeclareQueue declares q as RabbitMQ does: its checks, in its order,
// with its words. A queue that exists with other properties or arguments is
// an error matching transport.ErrPreconditionFailed that names the queue and
// the argument; another connection's exclusive queue, or another exclusive
// flag, is RESOURCE_LOCKED (matching no transport error). A stream queue is
// refused with an error matching errors.ErrUnsupported.
func (t *Transport) DeclareQueue(ctx context.Context, q transport.Queue) error {
	what := "declare " + q.String()
	if err := shortstr(q.Name); err != nil {
		return fmt.Errorf("memory: %s: %w", what, err)
	}
	args, err := wireTable(q.WireArguments())
	if err != nil {
		return fmt.Errorf("memory: %s: %w", what, err)
	}
	defer t.events.flush() // after the unlock: the events of a connection error
	if err := t.begin(ctx); err != nil {
		return err
	}
	defer t.b.mu.Unlock()
	if err := t.b.declareQueue(t.conn, q, args); err != nil {
		if ae, ok := errors.AsType[*amqpError](err); ok {
			t.connectionError(ae)
		}
		return mapErr(what, err)
	}
	return nil
}

func (b *Broker) declareQueue(c *conn, d transport.Queue, args transport.Table) error {
	name := d.Name
	if name == "" {
		name = generatedName()
	} else if strings.HasPrefix(name, "amq.") {
		return accessRefused("queue name '%s' contains reserved prefix 'amq.*'", name)
	}
	kept := keptArgs(b.em, args)
	if q, ok := b.queues[name]; ok {
		if err := q.checkEquivalent(b.em, c, d.Durable, d.Exclusive, d.AutoDelete, kept); err != nil {
			return err
		}
		b.used(q)
		return nil
	}
	spec, err := validateNew(b.em, name, d.Durable, d.Exclusive, d.AutoDelete, args)
	if err != nil {
		return err
	}
	q := &queue{
		name:       name,
		typ:        spec.typ,
		durable:    spec.durable,
		exclusive:  d.Exclusive,
		autoDelete: d.AutoDelete,
		args:       kept,
		spec:       spec,
	}
	if q.args == nil {
		q.args = transport.Table{}
	}
	if d.Exclusive {
		q.owner = c
	}
	b.queues[name] = q
	b.used(q)
	return nil
}

// generatedName is a server-named queue's name, as RabbitMQ makes them.
func generatedName() string {
	var r [16]byte
	_, _ = rand.Read(r[:])
	return "amq.gen-" + base64.RawURLEncoding.EncodeToString(r[:])
}

// queueFor finds a queue for an operation of connection c: NOT_FOUND when
// it does not exist, RESOURCE_LOCKED when it is another connection's
// exclusive queue.
func (b *Broker) queueFor(c *conn, name string) (*queue, *amqpError) {
	q, ok := b.queues[name]
	if !ok {
		return nil, noQueue(name)
	}
	if q.exclusive && q.owner != c {
		return nil, resourceLocked(name)
	}
	return q, nil
}

// Bind binds a queue to an exchange. A missing exchange or queue is an
// error matching transport.ErrNotFound (the exchange is looked for first);
// the default exchange cannot be bound to.
func (t *Transport) Bind(ctx context.Context, bd transport.Binding) error {
	what := "declare " + bd.String()
	for _, s := range []string{bd.Queue, bd.Exchange, bd.RoutingKey} {
		if err := shortstr(s); err != nil {
			return fmt.Errorf("memory: %s: %w", what, err)
		}
	}
	if err := t.begin(ctx); err != nil {
		return err
	}
	defer t.b.mu.Unlock()
	b := t.b
	switch {
	case bd.Queue == "":
		return mapErr(what, notFound("no previously declared queue"))
	case bd.Exchange == "":
		return mapErr(what, accessRefused("operation not permitted on the default exchange"))
	}
	x, ok := b.exchanges[bd.Exchange]
	if !ok {
		return mapErr(what, noExchange(bd.Exchange))
	}
	q, err := b.queueFor(t.conn, bd.Queue)
	if err != nil {
		return mapErr(what, err)
	}
	x.bind(q, bd.RoutingKey)
	return nil
}

// Ping answers at once, unless t is closed or ctx has ended.
func (t *Transport) Ping(ctx context.Context) error {
	if err := t.begin(ctx); err != nil {
		return err
	}
	t.b.mu.Unlock()
	return nil
}

// InspectQueue reports a queue's ready messages and consumers (a passive
// declare, which counts as a use for x-expires).
func (t *Transport) InspectQueue(ctx context.Context, queue string) (transport.QueueState, error) {
	if err := t.begin(ctx); err != nil {
		return transport.QueueState{}, err
	}
	defer t.b.mu.Unlock()
	q, err := t.b.queueFor(t.conn, queue)
	if err != nil {
		return transport.QueueState{}, mapErr("inspect queue "+queue, err)
	}
	t.b.used(q)
	return transport.QueueState{Name: q.name, Messages: len(q.ready), Consumers: q.consumerCount()}, nil
}

// PurgeQueue removes the ready messages of a queue (not those delivered and
// unsettled) and says how many. Purged messages are not dead-lettered.
func (t *Transport) PurgeQueue(ctx context.Context, queue string) (int, error) {
	defer t.events.flush() // after the unlock: the events of a connection error
	if err := t.begin(ctx); err != nil {
		return 0, err
	}
	defer t.b.mu.Unlock()
	q, err := t.b.queueFor(t.conn, queue)
	if err != nil {
		return 0, mapErr("purge queue "+queue, err)
	}
	if q.typ == transport.Stream {
		err := notImplemented("queue.purge not supported by stream queues queue '%s' in vhost '/'", q.name)
		t.connectionError(err)
		return 0, mapErr("purge queue "+queue, err)
	}
	n := len(q.ready)
	q.ready, q.readyBytes = nil, 0
	q.checkLimit()
	t.b.armExpiry(q)
	return n, nil
}

// DeleteQueue deletes a queue and says how many ready messages it held;
// deleting a queue that does not exist succeeds with 0. Its consumers are
// cancelled by the broker and subscribe again (running Setup first), as
// transport/rabbitmq's do. Deliveries from it not yet settled can still be
// settled, to no effect.
func (t *Transport) DeleteQueue(ctx context.Context, queue string) (int, error) {
	if err := t.begin(ctx); err != nil {
		return 0, err
	}
	defer t.b.mu.Unlock()
	q, err := t.b.queueFor(t.conn, queue)
	if err != nil {
		if err.code == codeNotFound {
			return 0, nil
		}
		return 0, mapErr("delete queue "+queue, err)
	}
	n := len(q.ready)
	t.b.deleteQueue(q)
	return n, nil
}

// Publish routes p and returns its Confirmation, already resolved: nil once
// the message is in every queue it routes to; transport.ErrUnroutable for a
// mandatory publish that reaches no queue; transport.ErrRefused when a
// queue's x-overflow refused it; transport.ErrNotFound, and not
// ErrNotConfirmed, for a missing exchange (the message was not routed).
// What else RabbitMQ answers by closing the channel (an invalid expiration,
// a body over max_message_size, 16 MiB from RabbitMQ 4.0 and 128 MiB
// before: ErrPreconditionFailed) resolves the Confirmation with
// transport.ErrNotConfirmed and that error, as transport/rabbitmq does.
// What amqp091 cannot encode (a header of an unsupported type, a property
// over 255 bytes) is Publish's own error.
func (t *Transport) Publish(ctx context.Context, p transport.Publishing) (*transport.Confirmation, error) {
	fail := func(err error) error {
		return fmt.Errorf("memory: publish to exchange %q with routing key %q: %w", p.Exchange, p.RoutingKey, err)
	}
	t.b.mu.Lock()
	closed := t.closed
	t.b.mu.Unlock()
	if closed {
		return nil, transport.ErrClosed
	}
	msg, err := wireMessage(p, t.b.em.maxMessageSize)
	if err != nil {
		return nil, fail(err)
	}
	if err := t.waitUnblocked(ctx); err != nil {
		return nil, fail(err)
	}
	if err := t.begin(ctx); err != nil {
		return nil, err
	}
	result := t.b.publish(p, msg)
	t.b.mu.Unlock()
	c, resolve := transport.NewConfirmation()
	switch err := result.(type) {
	case nil:
		resolve(nil)
	case *amqpError:
		if err.code == codeNotFound { // the exchange: certainly not routed
			resolve(fail(fmt.Errorf("the message was not routed: %w", classify(err))))
			break
		}
		resolve(fail(fmt.Errorf("%w: %w", transport.ErrNotConfirmed, classify(err))))
	default:
		resolve(fail(err))
	}
	return c, nil
}

// waitUnblocked holds a publish while the broker's alarm is raised, marking
// t blocked as RabbitMQ does a connection that publishes during one (and
// reporting EventBlocked the first time); it fails with transport.ErrBlocked
// when ctx ends first.
func (t *Transport) waitUnblocked(ctx context.Context) error {
	b := t.b
	b.mu.Lock()
	closed, reason, cleared := t.closed, b.alarm, b.alarmCleared
	if !closed && reason != "" && !t.blocked {
		t.blocked = true
		t.events.add(transport.Event{Kind: transport.EventBlocked, Address: t.address(), Reason: reason})
	}
	b.mu.Unlock()
	t.events.flush()
	if closed || reason == "" {
		return nil // a closed Transport fails in begin
	}
	select {
	case <-cleared:
		return nil
	case <-t.done:
		return transport.ErrClosed
	case <-ctx.Done():
		return fmt.Errorf("%w: %s (%w)", transport.ErrBlocked, reason, context.Cause(ctx))
	}
}

// wireMessage is p's message as it reaches the broker: a copy, in wire
// form, or amqp091's refusal. A body over maxSize is not copied: the broker
// refuses it unread.
func wireMessage(p transport.Publishing, maxSize int) (transport.Message, error) {
	m := p.Message
	for _, s := range []string{p.Exchange, p.RoutingKey, m.ContentType, m.ContentEncoding, m.MessageID,
		m.CorrelationID, m.ReplyTo, m.Type, m.Expiration, m.AppID, m.UserID} {
		if err := shortstr(s); err != nil {
			return m, err
		}
	}
	h, err := wireTable(m.Headers)
	if err != nil {
		return m, err
	}
	if len(h) == 0 {
		h = nil
	}
	m.Headers = h
	if len(m.Body) <= maxSize {
		m.Body = append([]byte{}, m.Body...)
	}
	if !m.Timestamp.IsZero() {
		m.Timestamp = time.Unix(m.Timestamp.Unix(), 0) // an AMQP timestamp is whole seconds
	}
	return m, nil
}

// publish is basic.publish on the broker, in RabbitMQ's order of checks.
func (b *Broker) publish(p transport.Publishing, msg transport.Message) error {
	if n, limit := len(msg.Body), b.em.maxMessageSize; n > limit {
		return preconditionFailed("message size %d is larger than configured max size %d", n, limit)
	}
	var x *exchange
	if p.Exchange != "" {
		var ok bool
		if x, ok = b.exchanges[p.Exchange]; !ok {
			return noExchange(p.Exchange)
		}
		if x.internal {
			return accessRefused("cannot publish to internal exchange '%s' in vhost '/'", p.Exchange)
		}
	}
	if msg.UserID != "" && msg.UserID != User {
		return preconditionFailed("user_id property set to '%s' but authenticated user was '%s'", msg.UserID, User)
	}
	expiration, err := parseExpiration(msg.Expiration)
	if err != nil {
		return err
	}
	keys := []string{p.RoutingKey}
	for _, header := range []string{"CC", "BCC"} {
		v, ok := msg.Headers[header]
		if !ok {
			continue
		}
		routes, ok := v.([]any)
		if !ok {
			return preconditionFailed("invalid message: {unacceptable_type_in_header,\"%s\",%s}", header, amqpType(v))
		}
		for _, r := range routes {
			if s, ok := r.(string); ok {
				keys = append(keys, s)
			}
		}
	}
	delete(msg.Headers, "BCC") // routed by, never delivered (an empty table stays)
	c := &content{exchange: p.Exchange, routingKeys: keys, msg: msg, expiration: expiration}
	queues := b.route(x, keys)
	if len(queues) == 0 {
		if p.Mandatory {
			return transport.ErrUnroutable
		}
		return nil
	}
	refused := false
	for _, q := range queues {
		if b.enqueue(q, c) {
			refused = true
		}
	}
	if refused {
		return transport.ErrRefused
	}
	return nil
}

// parseExpiration reads a per-message expiration as RabbitMQ does (Erlang's
// string:to_integer, then the range check): "" is none.
func parseExpiration(s string) (int64, *amqpError) {
	if s == "" {
		return -1, nil
	}
	invalid := func(detail string) (int64, *amqpError) {
		prefix := "invalid expiration '" + s + "': "
		return 0, preconditionFailed("%s%s", prefix, detail)
	}
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i = 1
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	col := len("invalid expiration '" + s + "': ")
	if j == i {
		return invalid("no_integer")
	}
	if j < len(s) {
		return invalid(erlangPair(col, "leftover_string", strconv.Quote(s[j:])))
	}
	digits := strings.TrimLeft(s[i:j], "0")
	if digits == "" {
		digits = "0"
	}
	negative := s[0] == '-' && digits != "0"
	n, err := strconv.ParseInt(digits, 10, 64)
	switch {
	case negative:
		return invalid(erlangPair(col, "value_negative", "-"+digits))
	case err != nil || n > maxTTL:
		return invalid(erlangPair(col, "value_too_large", digits))
	}
	return n, nil
}

// erlangPair prints {atom,value} as Erlang's ~p does at column col of an
// 80-column line: on one line when it fits, else broken after the comma
// with the value under the brace.
func erlangPair(col int, atom, value string) string {
	one := "{" + atom + "," + value + "}"
	if col+len(one) <= 78 {
		return one
	}
	return "{" + atom + ",\n" + strings.Repeat(" ", col+1) + value + "}"
}

// Get takes the head of queue (basic.get). The delivery must be settled;
// until then it is unacked on this connection, and settled or not it is on
// a channel of its own. ok is false when the queue has no ready message.
func (t *Transport) Get(ctx context.Context, queue string) (transport.Delivery, bool, error) {
	defer t.events.flush() // after the unlock: the events of a connection error
	if err := t.begin(ctx); err != nil {
		return transport.Delivery{}, false, err
	}
	defer t.b.mu.Unlock()
	d, ok, err := t.b.get(t.conn, nil, queue)
	if err != nil {
		t.connectionError(err)
		return transport.Delivery{}, false, mapErr("get from queue "+queue, err)
	}
	return d, ok, nil
}

// get is basic.get from queue on connection c: the head, delivered on ch,
// or on a new channel when ch is nil. A stream refuses it (a connection
// exception), and so does a quorum queue with single active consumer (a
// channel exception), empty or not, with a consumer or not.
func (b *Broker) get(c *conn, ch *channel, queue string) (transport.Delivery, bool, *amqpError) {
	q, err := b.queueFor(c, queue)
	if err != nil {
		return transport.Delivery{}, false, err
	}
	if q.typ == transport.Stream {
		return transport.Delivery{}, false, notImplemented("basic.get not supported by stream queues queue '%s' in vhost '/'", q.name)
	}
	if q.typ == transport.Quorum && q.spec.singleActive {
		return transport.Delivery{}, false, getLocked(q.name, b.em)
	}
	if len(q.ready) == 0 {
		b.used(q)
		return transport.Delivery{}, false, nil
	}
	if ch == nil {
		ch = c.newChannel(nil)
	}
	u := ch.add(q, q.popHead(), nil, b.clock.Now())
	if q.typ == transport.Quorum {
		q.getConsumers++
	}
	b.used(q)
	d := b.delivery(u, true)
	b.dropExpired(q)
	b.armTimeout(ch)
	return d, true, nil
}
