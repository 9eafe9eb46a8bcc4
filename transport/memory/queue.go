package memory

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// queue is a declared queue. Its ready messages are in position order;
// delivered and unsettled ones are held by the channels they went to.
type queue struct {
	name       string
	typ        transport.QueueType
	durable    bool
	exclusive  bool
	autoDelete bool
	owner      *conn           // the exclusive queue's connection
	args       transport.Table // as declared, in wire form
	spec       queueSpec
	deleted    bool

	ready      []*qmsg
	readyBytes int64
	consumers  []*consumer // in turn order; the first is next

	expiryStop func() bool // the timer of the head's expiry
	expiryAt   time.Time
	expiryGen  uint64

	unusedStop func() bool // x-expires
	unusedGen  uint64

	// sacHeld: with x-single-active-consumer on a classic queue, RabbitMQ
	// 3.10 hands the active role on only once the channel of the cancelled
	// active consumer closes (in transport/rabbitmq: once its deliveries are
	// settled). Until then no consumer gets anything. (4.0 hands it on at
	// once.)
	sacHeld *channel

	// getConsumers: RabbitMQ (3.10 and 4.0) counts each unsettled basic.get
	// from a quorum queue as a consumer (its channel's) until it is settled.
	getConsumers int

	rejecting bool // a quorum queue over its limit, with x-overflow reject-publish

	// log is a stream's: every message it was sent, its offset its index,
	// never removed (RabbitMQ's retention drops whole segments, 500 MB by
	// default). Each message is a chunk of its own.
	log []streamEntry

	// pending are the dead letters of an at-least-once queue that its
	// dead-letter worker has not placed yet, retried every settle timeout
	// (settleStop's timer); they count towards x-max-length, not as ready.
	pending      []*pendingDeadLetter
	pendingBytes int64
	settleStop   func() bool
	settleGen    uint64
}

// pendingDeadLetter is a dead letter an at-least-once queue's worker has not
// yet placed in every queue it routes to.
type pendingDeadLetter struct {
	c      *content
	reason string
	placed []*queue // the queues that took it
}

// consumerCount is what a passive declare reports.
// A stream reports none, as RabbitMQ's does.
func (q *queue) consumerCount() int {
	if q.typ == transport.Stream {
		return 0
	}
	return len(q.consumers) + q.getConsumers
}

// content is a message as the broker holds it: in wire form, never changed
// once made (a dead letter is a new content).
type content struct {
	exchange    string   // the exchange it was published (or dead-lettered) to
	routingKeys []string // its routing key, then those of its CC and BCC headers
	msg         transport.Message
	expiration  int64 // the per-message TTL in ms, -1 for none
	// deaths is the broker's own record of the message's deaths (RabbitMQ
	// 3.13 and later); nil for a message a client published.
	deaths *deathRecord
	// failures is a dead letter's: the failed deliveries of its message
	// before it died (RabbitMQ 4.3 keeps them with the message).
	failures int64
}

// copyMessage is what a consumer gets: a copy it may change.
func (c *content) copyMessage() transport.Message {
	m := c.msg
	m.Headers = copyTable(c.msg.Headers)
	m.Body = append([]byte{}, c.msg.Body...)
	return m
}

// qmsg is a message in one queue.
type qmsg struct {
	c           *content
	pos         uint64 // where it stands in the queue; kept across a classic requeue
	expires     bool
	expiry      time.Time
	redelivered bool
	returns     int64 // a quorum queue's count of every return: its delivery count, 4.3's acquired count
	failures    int64 // rejects and returns by a closing channel: RabbitMQ 4.3's delivery count
	returned    bool  // a quorum queue's, put back by a closing channel: ahead of the others (requeue)
}

// streamEntry is one message of a stream's log, with when it was written.
type streamEntry struct {
	c  *content
	at time.Time
}

// consumer is one basic.consume on a queue.
type consumer struct {
	q         *queue
	ch        *channel
	sub       *subscription
	prefetch  int
	unacked   int
	cancelled bool // no longer on the queue (cancelled by the client or the broker)
	next      int  // a stream consumer's next offset to deliver
}

func (c *consumer) hasRoom() bool { return c.prefetch == 0 || c.unacked < c.prefetch }

func (q *queue) stopTimers() {
	if q.expiryStop != nil {
		q.expiryStop()
		q.expiryStop = nil
	}
	q.expiryGen++
	if q.unusedStop != nil {
		q.unusedStop()
		q.unusedStop = nil
	}
	q.unusedGen++
	if q.settleStop != nil {
		q.settleStop()
		q.settleStop = nil
	}
	q.settleGen++
}

// insert puts m in its place: by position, so that a classic queue's
// requeued message goes back where it was, and a quorum queue's returned
// messages (by position among them) ahead of the others.
func (q *queue) insert(m *qmsg) {
	i := sort.Search(len(q.ready), func(i int) bool {
		r := q.ready[i]
		return m.returned && !r.returned || r.returned == m.returned && r.pos > m.pos
	})
	q.ready = slices.Insert(q.ready, i, m)
	q.readyBytes += int64(len(m.c.msg.Body))
}

func (q *queue) popHead() *qmsg {
	m := q.ready[0]
	q.ready[0] = nil
	q.ready = q.ready[1:]
	q.readyBytes -= int64(len(m.c.msg.Body))
	q.checkLimit()
	return m
}

// nextConsumer picks the consumer the head goes to: round robin among those
// with room under their prefetch (the one picked goes to the back), or only
// the first with x-single-active-consumer.
func (q *queue) nextConsumer() *consumer {
	if q.spec.singleActive {
		if q.sacHeld != nil {
			return nil
		}
		if len(q.consumers) > 0 && q.consumers[0].hasRoom() {
			return q.consumers[0]
		}
		return nil
	}
	for i, c := range q.consumers {
		if c.hasRoom() {
			q.consumers = append(slices.Delete(q.consumers, i, i+1), c)
			return c
		}
	}
	return nil
}

// overflowMode is x-overflow as the queue applies it: RabbitMQ's quorum
// queue (3.10 and 4.0) takes reject-publish-dlx for drop-head.
func overflowMode(typ transport.QueueType, overflow string) string {
	if typ == transport.Quorum && overflow == contract.OverflowRejectPublishDLX {
		return contract.OverflowDropHead
	}
	return overflow
}

// overflows reports whether one more message of size bytes goes past
// x-max-length or x-max-length-bytes (for x-overflow reject-publish*).
func (q *queue) overflows(size int64) bool {
	return q.spec.maxLen >= 0 && int64(len(q.ready))+1 > q.spec.maxLen ||
		q.spec.maxBytes >= 0 && q.readyBytes+size > q.spec.maxBytes
}

// ttlFor is the time-to-live of c in q: the shorter of the queue's
// x-message-ttl and the message's expiration, -1 for none.
func (q *queue) ttlFor(c *content) int64 {
	switch {
	case q.spec.ttl < 0:
		return c.expiration
	case c.expiration < 0:
		return q.spec.ttl
	}
	return min(q.spec.ttl, c.expiration)
}

// enqueue delivers c to q, as RabbitMQ's classic queue process does: refuse
// it when x-overflow says so (true: the publisher gets a nack), else take
// it, hand it to a consumer if one has room, drop from the head what is
// over x-max-length, and expire from the head what is due.
func (b *Broker) enqueue(q *queue, c *content) (refused bool) {
	if q.deleted {
		return false
	}
	if q.typ == transport.Stream {
		q.log = append(q.log, streamEntry{c: c, at: b.clock.Now()})
		b.dispatch(q)
		return false
	}
	size := int64(len(c.msg.Body))
	switch {
	case q.typ == transport.Quorum && q.spec.overflow == contract.OverflowRejectPublish:
		// RabbitMQ's quorum queue takes the message that goes over the
		// limit, then refuses until it is back to 80% of it.
		if q.rejecting {
			return true
		}
	case q.spec.overflow != contract.OverflowDropHead && q.overflows(size):
		if q.spec.overflow == contract.OverflowRejectPublishDLX {
			b.deadLetter(q, &qmsg{c: c}, contract.DeathReasonMaxLength)
		}
		return true
	}
	// RabbitMQ 4.3: a dead letter whose message failed is redelivered.
	m := &qmsg{c: c, pos: b.nextPos(), redelivered: b.em.v43 && c.failures > 0}
	if ttl := q.ttlFor(c); ttl >= 0 {
		m.expires, m.expiry = true, b.clock.Now().Add(time.Duration(ttl)*time.Millisecond)
	}
	q.insert(m)
	b.dispatch(q)
	b.dropHead(q)
	b.dropExpired(q)
	q.checkLimit()
	return false
}

// checkLimit keeps a quorum queue's reject-publish state: on once over
// x-max-length or x-max-length-bytes, off once at 80% of both or below. The
// dead letters its worker still holds count, as in RabbitMQ.
func (q *queue) checkLimit() {
	if q.typ != transport.Quorum || q.spec.overflow != contract.OverflowRejectPublish {
		return
	}
	n, size := int64(len(q.ready)+len(q.pending)), q.readyBytes+q.pendingBytes
	switch {
	case q.spec.maxLen >= 0 && n > q.spec.maxLen || q.spec.maxBytes >= 0 && size > q.spec.maxBytes:
		q.rejecting = true
	case (q.spec.maxLen < 0 || n <= q.spec.maxLen*8/10) && (q.spec.maxBytes < 0 || size <= q.spec.maxBytes*8/10):
		q.rejecting = false
	}
}

// dispatch hands ready messages to consumers with room, head first; after
// each, what has expired at the new head goes (RabbitMQ's fetch).
func (b *Broker) dispatch(q *queue) {
	if q.typ == transport.Stream {
		b.dispatchStream(q)
		return
	}
	for !q.deleted && len(q.ready) > 0 {
		c := q.nextConsumer()
		if c == nil {
			return
		}
		b.deliver(c, q.popHead())
		b.dropExpired(q)
	}
}

// dispatchStream hands each consumer of a stream what its log holds from
// the consumer's offset on, as far as its prefetch allows: every consumer
// reads the whole log, and nothing is taken from it.
func (b *Broker) dispatchStream(q *queue) {
	for _, c := range q.consumers {
		for !q.deleted && !c.cancelled && c.hasRoom() && c.next < len(q.log) {
			b.deliver(c, &qmsg{c: q.log[c.next].c, pos: uint64(c.next)})
			c.next++
		}
	}
}

// deliver hands m to consumer c: unacked on c's channel, and queued for the
// subscription's goroutine to pass on.
func (b *Broker) deliver(c *consumer, m *qmsg) {
	u := c.ch.add(c.q, m, c, b.clock.Now())
	c.unacked++
	c.sub.pending = append(c.sub.pending, b.delivery(u, false))
	c.sub.signal()
	b.armTimeout(c.ch)
}

// delivery is what the client receives for u: a copy of the message. A
// quorum queue writes x-delivery-count once the message has been returned,
// and RabbitMQ 3.10's on every basic.get too; until then a publisher's own
// x-delivery-count passes. RabbitMQ 4.3's writes x-delivery-count once a
// delivery failed and x-acquired-count once the message was returned (see
// emulation.v43); a dead letter shows the failures it came with until the
// queue has counted its own.
func (b *Broker) delivery(u *unacked, viaGet bool) transport.Delivery {
	m := u.m
	msg := m.c.copyMessage()
	if u.q.typ == transport.Stream {
		if msg.Headers == nil {
			msg.Headers = transport.Table{}
		}
		msg.Headers[contract.ArgStreamOffset] = int64(m.pos)
	}
	count := func(header string, n int64) {
		if msg.Headers == nil {
			msg.Headers = transport.Table{}
		}
		msg.Headers[header] = n
	}
	switch {
	case u.q.typ != transport.Quorum:
	case b.em.v43:
		if n := cmp.Or(m.failures, m.c.failures); n > 0 {
			count(contract.HeaderDeliveryCount, n)
		}
		if n := cmp.Or(m.returns, m.c.failures); n > 0 {
			count(contract.HeaderAcquiredCount, n)
		}
	case m.returns > 0 || viaGet && !b.em.v4:
		count(contract.HeaderDeliveryCount, m.returns)
	}
	return transport.Delivery{
		Message:     msg,
		Exchange:    m.c.exchange,
		RoutingKey:  m.c.routingKeys[0],
		Redelivered: m.redelivered,
		Settler:     &settler{u: u},
	}
}

// dropHead drops (dead-letters, reason maxlen) from the head while the
// queue is over x-max-length or x-max-length-bytes, with x-overflow
// drop-head.
func (b *Broker) dropHead(q *queue) {
	if q.spec.overflow != contract.OverflowDropHead {
		return
	}
	for !q.deleted && len(q.ready) > 0 &&
		(q.spec.maxLen >= 0 && int64(len(q.ready)) > q.spec.maxLen || q.spec.maxBytes >= 0 && q.readyBytes > q.spec.maxBytes) {
		b.deadLetter(q, q.popHead(), contract.DeathReasonMaxLength)
	}
}

// dropExpired expires messages from the head of the queue only, as RabbitMQ
// does: a message behind one that has not expired waits for it. Then the
// timer is set for the new head.
func (b *Broker) dropExpired(q *queue) {
	now := b.clock.Now()
	for !q.deleted && len(q.ready) > 0 && q.ready[0].expires && !now.Before(q.ready[0].expiry) {
		b.deadLetter(q, q.popHead(), contract.DeathReasonExpired)
	}
	b.armExpiry(q)
}

// armExpiry keeps the expiry timer on the head's expiry.
func (b *Broker) armExpiry(q *queue) {
	need := !q.deleted && !b.closed && len(q.ready) > 0 && q.ready[0].expires
	var at time.Time
	if need {
		at = q.ready[0].expiry
		if q.expiryStop != nil && q.expiryAt.Equal(at) {
			return
		}
	}
	if q.expiryStop != nil {
		q.expiryStop()
		q.expiryStop = nil
	}
	q.expiryGen++
	if !need {
		return
	}
	gen := q.expiryGen
	q.expiryAt = at
	q.expiryStop = b.clock.AfterFunc(at.Sub(b.clock.Now()), func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.closed || q.deleted || q.expiryGen != gen {
			return
		}
		q.expiryStop = nil
		b.dropExpired(q)
	})
}

// requeue puts a message back, redelivered: in a classic queue where it
// was. A quorum queue counts the return, dead-lettering the message (reason
// delivery_limit) past x-delivery-limit, and puts it in its returns queue,
// delivered before any other message in the order returned: every return
// in RabbitMQ 4.0, only what a closing channel returned (closing) in 3.10,
// whose quorum queue puts a message nacked or rejected with requeue at the
// back. failed is a reject's or a closing channel's return, not a nack's:
// RabbitMQ 4.3's x-delivery-limit counts only those.
func (b *Broker) requeue(q *queue, m *qmsg, closing, failed bool) {
	if q.typ == transport.Stream {
		return // the log still has it; a consumer reads from its own offset
	}
	m.redelivered = true
	if failed {
		m.failures++
	}
	if q.typ == transport.Quorum {
		m.returns++
		counted := m.returns
		if b.em.v43 {
			counted = m.failures
		}
		if q.spec.deliveryLimit >= 0 && counted > q.spec.deliveryLimit {
			b.deadLetter(q, m, contract.DeathReasonDeliveryLimit)
			return
		}
		m.pos, m.returned = b.nextPos(), closing || b.em.v4
	}
	q.insert(m)
	b.dropHead(q)
	b.dropExpired(q)
	b.dispatch(q)
}

// deadLetter republishes m through q's x-dead-letter-exchange, as RabbitMQ
// does: x-death updated, the expiration moved into it, routed under
// x-dead-letter-routing-key or the message's own keys. Without a
// dead-letter exchange the message is dropped. From a classic queue or an
// at-most-once quorum queue, a dead letter whose exchange is missing or
// routes nowhere is dropped without a word; an at-least-once quorum queue
// keeps it (see forward).
func (b *Broker) deadLetter(q *queue, m *qmsg, reason string) {
	if !q.spec.hasDLX {
		return
	}
	old := m.c
	h := copyTable(old.msg.Headers)
	if h == nil {
		h = transport.Table{}
	}
	keys := []any{old.routingKeys[0]}
	if cc, ok := h["CC"].([]any); ok {
		for _, k := range cc {
			if s, ok := k.(string); ok {
				keys = append(keys, s)
			}
		}
	}
	info := transport.Table{
		"reason":       reason,
		"queue":        q.name,
		"time":         time.Unix(b.clock.Now().Unix(), 0),
		"exchange":     old.exchange,
		"routing-keys": keys,
	}
	if old.msg.Expiration != "" {
		info["original-expiration"] = old.msg.Expiration
	}
	var deaths *deathRecord
	if b.em.deathRecords {
		deaths = old.deaths.add(info)
		deaths.write(h)
	} else {
		updateXDeath(h, info)
	}
	routingKeys := old.routingKeys
	if q.spec.hasDLRK {
		routingKeys = []string{q.spec.dlrk}
		delete(h, "CC")
	}
	msg := old.msg
	msg.Headers = h
	msg.Expiration = ""
	p := &pendingDeadLetter{reason: reason,
		c: &content{exchange: q.spec.dlx, routingKeys: routingKeys, msg: msg, expiration: -1, deaths: deaths,
			failures: m.failures + old.failures}}
	if q.spec.atLeastOnce {
		if !b.forward(p) {
			q.pending = append(q.pending, p)
			q.pendingBytes += int64(len(msg.Body))
			q.checkLimit()
			b.armSettle(q)
		}
		return
	}
	targets, _ := b.deadLetterRoute(p)
	for _, target := range targets {
		b.enqueue(target, p.c)
	}
}

// deadLetterRoute is where dead letter p goes: the queues its dead-letter
// exchange routes it to, less any it would go round a cycle to (RabbitMQ's
// cycle detection: a dead letter that would go back to a queue it already
// died in, with no rejection since, does not). ok is false when the
// exchange is missing.
func (b *Broker) deadLetterRoute(p *pendingDeadLetter) (targets []*queue, ok bool) {
	var x *exchange
	if p.c.exchange != "" {
		if x, ok = b.exchanges[p.c.exchange]; !ok {
			return nil, false
		}
	}
	deaths, _ := p.c.msg.Headers[contract.HeaderDeath].([]any)
	for _, target := range b.route(x, p.c.routingKeys) {
		if p.reason == contract.DeathReasonRejected || !isCycle(target.name, deaths) {
			targets = append(targets, target)
		}
	}
	return targets, true
}

// forward is an at-least-once queue's dead-letter worker placing p in every
// queue it routes to; true once it is done. A dead letter that routes
// nowhere (or only round a cycle), whose exchange is missing or that a
// queue refuses (x-overflow) stays with the worker, which tries again every
// settle timeout, as RabbitMQ's does; it is done when every queue it routes
// to then took it, or when it routes nowhere any more but some queue took
// it before.
func (b *Broker) forward(p *pendingDeadLetter) bool {
	targets, ok := b.deadLetterRoute(p)
	if !ok {
		return false
	}
	if len(targets) == 0 {
		return len(p.placed) > 0
	}
	done := true
	for _, target := range targets {
		if slices.Contains(p.placed, target) {
			continue
		}
		if b.enqueue(target, p.c) {
			done = false
			continue
		}
		p.placed = append(p.placed, target)
	}
	return done
}

// armSettle starts q's dead-letter worker's timer, unless it is running or
// there is nothing to retry: every settle timeout, it forwards what it holds
// again, and starts again while anything is left.
func (b *Broker) armSettle(q *queue) {
	if q.settleStop != nil || len(q.pending) == 0 || q.deleted || b.closed {
		return
	}
	gen := q.settleGen
	q.settleStop = b.clock.AfterFunc(b.settleTimeout, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.closed || q.deleted || q.settleGen != gen {
			return
		}
		q.settleStop = nil
		held := q.pending
		q.pending, q.pendingBytes = nil, 0
		var kept []*pendingDeadLetter
		for _, p := range held {
			if !b.forward(p) {
				kept = append(kept, p)
			}
		}
		q.pending, q.pendingBytes = append(kept, q.pending...), 0 // and what died meanwhile
		for _, p := range q.pending {
			q.pendingBytes += int64(len(p.c.msg.Body))
		}
		q.checkLimit()
		b.armSettle(q)
	})
}

// deathRecord is a message's deaths as RabbitMQ 3.13 and later keep them,
// beside its headers: what x-death and x-first-death-* and x-last-death-*
// say on each of its dead letters, whatever a client published in them.
type deathRecord struct {
	entries     []transport.Table // x-death's, latest first
	first, last transport.Table   // reason, queue, exchange
}

// add returns the record with one more death: the entry for the same queue
// and reason has its count incremented (nothing else changed) and moves to
// the front, or a new one, count 1, goes in front.
func (r *deathRecord) add(info transport.Table) *deathRecord {
	out := &deathRecord{}
	var entry transport.Table
	if r != nil {
		out.first = r.first
		for _, e := range r.entries {
			if entry == nil && sameDeath(e, info) {
				entry = copyTable(e)
				continue
			}
			out.entries = append(out.entries, e)
		}
	}
	if entry == nil {
		entry = copyTable(info)
		entry["count"] = int64(0)
	}
	n, _ := asInt(entry["count"])
	entry["count"] = n + 1
	out.entries = append([]transport.Table{entry}, out.entries...)
	out.last = transport.Table{"reason": info["reason"], "queue": info["queue"], "exchange": info["exchange"]}
	if out.first == nil {
		out.first = out.last
	}
	return out
}

// write puts the record in headers h, replacing what was there.
func (r *deathRecord) write(h transport.Table) {
	deaths := make([]any, len(r.entries))
	for i, e := range r.entries {
		deaths[i] = copyTable(e)
	}
	h[contract.HeaderDeath] = deaths
	for _, k := range []string{"reason", "queue", "exchange"} {
		h[contract.HeaderFirstDeathPrefix+k] = r.first[k]
		h[contract.HeaderLastDeathPrefix+k] = r.last[k]
	}
}

// updateXDeath records a death in the headers as RabbitMQ 3.10 does, from
// the x-death header alone: when there is none, an entry, count 1, and
// x-first-death-* for this death; when it is an array, the entry for the
// same queue and reason has its count incremented (nothing else changed)
// and moves to the front, or a new entry, count 1, goes in front; when it
// is anything else, it becomes that one entry.
func updateXDeath(h, info transport.Table) {
	v, ok := h[contract.HeaderDeath]
	deaths, isArray := v.([]any)
	if !isArray {
		info["count"] = int64(1)
		h[contract.HeaderDeath] = []any{info}
		if !ok {
			h[contract.HeaderFirstDeathPrefix+"reason"] = info["reason"]
			h[contract.HeaderFirstDeathPrefix+"queue"] = info["queue"]
			h[contract.HeaderFirstDeathPrefix+"exchange"] = info["exchange"]
		}
		return
	}
	var (
		entry  transport.Table
		others []any
	)
	for _, d := range groupDeaths(deaths) {
		if t, ok := d.(transport.Table); ok && entry == nil && sameDeath(t, info) {
			entry = t
			continue
		}
		others = append(others, d)
	}
	if entry == nil {
		entry = info
		entry["count"] = int64(1)
	} else {
		n, _ := asInt(entry["count"])
		entry["count"] = n + 1
	}
	h[contract.HeaderDeath] = append([]any{entry}, others...)
}

// groupDeaths merges entries for the same queue and reason into the first
// of them, adding up their counts (RabbitMQ's group_by_queue_and_reason).
func groupDeaths(deaths []any) []any {
	out := make([]any, 0, len(deaths))
	for _, d := range deaths {
		t, ok := d.(transport.Table)
		if !ok {
			out = append(out, d)
			continue
		}
		merged := false
		for _, o := range out {
			if ot, ok := o.(transport.Table); ok && sameDeath(ot, t) {
				a, _ := asInt(ot["count"])
				c, _ := asInt(t["count"])
				ot["count"] = max(a, 1) + max(c, 1)
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, t)
		}
	}
	return out
}

// sameDeath reports whether two x-death entries are for the same queue and
// reason.
func sameDeath(a, b transport.Table) bool {
	return field(a, "queue") == field(b, "queue") && field(a, "reason") == field(b, "reason")
}

// field is a string field of a table ("" when it is not a string).
func field(t transport.Table, k string) string {
	s, _ := t[k].(string)
	return s
}

// isCycle is RabbitMQ's cycle detection: a dead letter that would go back
// to a queue it already died in, with no rejection since, is dropped.
func isCycle(queue string, deaths []any) bool {
	for i, d := range deaths {
		t, ok := d.(transport.Table)
		if !ok || field(t, "queue") != queue {
			continue
		}
		for _, e := range deaths[:i+1] {
			et, ok := e.(transport.Table)
			if !ok || field(et, "reason") == contract.DeathReasonRejected {
				return false
			}
		}
		return true
	}
	return false
}

// deleteQueue removes q: its bindings go, its consumers are cancelled by
// the broker (their subscriptions subscribe again, as transport/rabbitmq's
// do), its ready messages are dropped. Deliveries of it not yet settled can
// still be settled, to no effect.
func (b *Broker) deleteQueue(q *queue) {
	if q.deleted {
		return
	}
	q.deleted = true
	delete(b.queues, q.name)
	q.stopTimers()
	for _, x := range b.exchanges {
		x.unbindQueue(q)
	}
	for _, c := range q.consumers {
		c.cancelled = true
		c.sub.signal()
	}
	q.consumers = nil
	q.ready, q.readyBytes = nil, 0
	q.pending, q.pendingBytes = nil, 0
}

// removeConsumer takes c off its queue; an auto-delete queue goes with its
// last consumer.
func (b *Broker) removeConsumer(c *consumer) {
	if c.cancelled {
		return
	}
	c.cancelled = true
	q := c.q
	if i := slices.Index(q.consumers, c); i >= 0 {
		if i == 0 && q.spec.singleActive && q.typ == transport.Classic && !b.em.v4 && !c.ch.closed && q.sacHeld == nil {
			q.sacHeld, c.ch.holds = c.ch, q
		}
		q.consumers = slices.Delete(q.consumers, i, i+1)
	}
	if q.deleted {
		return
	}
	if len(q.consumers) == 0 {
		if q.autoDelete {
			b.deleteQueue(q)
			return
		}
		b.used(q)
	}
	b.dispatch(q) // with x-single-active-consumer, the next one is active now
}

// used restarts the x-expires clock of q: a declaration, a basic.get, a
// consumer leaving (publishing does not count). A queue with consumers is in
// use and does not expire.
func (b *Broker) used(q *queue) {
	if q.spec.expires < 0 || q.deleted {
		return
	}
	if q.unusedStop != nil {
		q.unusedStop()
		q.unusedStop = nil
	}
	q.unusedGen++
	if q.consumerCount() > 0 || b.closed {
		return
	}
	gen := q.unusedGen
	q.unusedStop = b.clock.AfterFunc(time.Duration(q.spec.expires)*time.Millisecond, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.closed || q.deleted || q.unusedGen != gen || q.consumerCount() > 0 {
			return
		}
		b.deleteQueue(q)
	})
}
