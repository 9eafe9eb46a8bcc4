package harness

import (
	"context"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
)

// The rung-kinds scenario: every message of a quorum source queue fails
// once and waits rungWait on a rung, a contract rung (classic) or an
// at-least-once one (quorum), and comes home through acemq.retry. Beside
// them, raw amqp091-go publishes into a TTL queue with the same arguments
// (classic, or quorum dead-lettering at least once) that dead-letters to a
// consumed quorum queue. Lateness is counted from the moment the publish to
// the rung (or TTL queue) was confirmed: arrival - (confirmed + rungWait).

// rungPolicy is the policy of the rung scenarios: one retry, its 1s wait on
// the broker.
var rungPolicy = acemq.Fixed(2, rungWait).WaitInBrokerFrom(rungWait)

// rungQueues are the rungs of both kinds AceMQ declares beside queue under
// rungPolicy, for deleting them after a run.
func rungQueues(queue string) []string {
	var names []string
	for _, kind := range []contract.RungKind{contract.ContractRungs, contract.AtLeastOnceRungs} {
		l, err := retry.NewLadder(queue, rungPolicy, kind)
		if err != nil {
			continue // only a blank queue name fails, and it has no rung
		}
		names = append(names, l.Queues()...)
	}
	return names
}

// quorumQueue is the argument of a quorum source queue, the topology's default.
var quorumQueue = amqp.Table{contract.ArgQueueType: contract.QueueTypeQuorum}

// RungClock is an acemq.Observer that notes when each republish to one rung
// was confirmed, keyed by message id. Arm it before a run, Take after.
type RungClock struct {
	acemq.NopObserver
	mu        sync.Mutex
	rung      string
	confirmed map[string]time.Time
}

// Arm starts noting the confirmed republishes to rung, forgetting any
// earlier ones.
func (c *RungClock) Arm(rung string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rung, c.confirmed = rung, map[string]time.Time{}
}

// Take returns what was noted since Arm and stops noting.
func (c *RungClock) Take() map[string]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.confirmed
	c.rung, c.confirmed = "", nil
	return m
}

// PublishEnd notes a confirmed republish to the armed rung. It is called
// once the confirm is in, before the consumer acks the original.
func (c *RungClock) PublishEnd(_ context.Context, p *acemq.PublishInfo, r acemq.PublishResult) {
	if !p.Republish || r.Outcome != contract.PublishConfirmed {
		return
	}
	now := time.Now()
	id, _ := p.Headers[contract.HeaderID].(string)
	if id == "" {
		id = p.MessageID
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.confirmed != nil && p.RoutingKey == c.rung {
		c.confirmed[id] = now
	}
}

// NewAceMQClocked opens an AceMQ connection, as name, whose republishes to
// rungs are timed by its RungClock.
func NewAceMQClocked(ctx context.Context, url, name string) (*AceMQ, error) {
	clock := &RungClock{}
	a, err := NewAceMQ(ctx, url, name, acemq.WithObserver(clock))
	if err != nil {
		return nil, err
	}
	a.clock = clock
	return a, nil
}

// RungTrip is one run of the rung-kinds scenario: how late each message
// came home, and how long each publish to the rung took to be confirmed
// (from the handler's failure for AceMQ, from the publish call for raw).
type RungTrip struct {
	Late    []time.Duration
	Confirm []time.Duration
}

// RetryOnRungKind consumes the n preloaded messages of queue (a quorum
// queue) under Fixed(2, 1s).WaitInBrokerFrom(1s) with rungs of kind,
// prefetch 100, concurrency 8: each first attempt fails, is republished to
// the 1s rung (confirmed) and acked, and its second attempt is accepted
// once the broker has dead-lettered it home. a must come from
// NewAceMQClocked.
func (a *AceMQ) RetryOnRungKind(ctx context.Context, queue string, n int, kind contract.RungKind) (RungTrip, error) {
	if a.clock == nil {
		return RungTrip{}, fmt.Errorf("%s has no rung clock", a.name)
	}
	ladder, err := retry.NewLadder(queue, rungPolicy, kind)
	if err != nil {
		return RungTrip{}, err
	}
	rung, ok := ladder.RungFor(rungWait)
	if !ok {
		return RungTrip{}, fmt.Errorf("the policy puts no %s wait on a rung", rungWait)
	}
	a.clock.Arm(rung.Queue)
	finished := newCountdown(n)
	var mu sync.Mutex
	failed := make(map[string]time.Time, n)
	arrived := make(map[string]time.Time, n)
	err = a.consume(ctx, queue, finished, func(_ context.Context, m acemq.Message[Payload]) acemq.Decision {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if m.Envelope.Attempt == 1 {
			failed[m.Envelope.ID] = now
			return acemq.Retry(errFirstAttempt)
		}
		if _, seen := arrived[m.Envelope.ID]; !seen {
			arrived[m.Envelope.ID] = now
			finished.Tick()
		}
		return acemq.Accept()
	}, acemq.WithPrefetch(prefetch), acemq.WithConcurrency(8), acemq.WithPolicy(rungPolicy), acemq.WithRungs(kind))
	confirmed := a.clock.Take()
	if err != nil {
		return RungTrip{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	return trip(arrived, confirmed, failed, rungWait)
}

// trip is each arrival's lateness against its confirm + wait, and each
// confirm's time since start. Every arrival must have a confirm, and every
// confirm a start.
func trip[K comparable](arrived, confirmed, started map[K]time.Time, wait time.Duration) (RungTrip, error) {
	t := RungTrip{Late: make([]time.Duration, 0, len(arrived)), Confirm: make([]time.Duration, 0, len(arrived))}
	for k, at := range arrived {
		c, ok := confirmed[k]
		if !ok {
			return RungTrip{}, fmt.Errorf("message %v came home without a confirmed publish to its rung", k)
		}
		s, ok := started[k]
		if !ok {
			return RungTrip{}, fmt.Errorf("message %v came home without a first attempt", k)
		}
		t.Late = append(t.Late, at.Sub(c.Add(wait)))
		t.Confirm = append(t.Confirm, c.Sub(s))
	}
	return t, nil
}

// TTLQueueArgs are the arguments of raw's holding queue for kind: the
// arguments of a rung of that kind (its queue type included) for a wait of
// ttl home to target, but dead-lettered through the default exchange rather
// than acemq.retry.
func TTLQueueArgs(kind contract.RungKind, target string, ttl time.Duration) amqp.Table {
	args := retry.Rung{Source: target, Delay: ttl, Kind: kind}.Declaration().WireArguments()
	args[contract.ArgDeadLetterExchange] = ""
	return amqp.Table(args)
}

// TTLQueueTrip publishes n messages, confirmed and window deep, into
// holding (a queue with x-message-ttl ttl that dead-letters to target) and
// consumes and acks them from target (prefetch 100). It returns how late
// each arrived against the moment its publish was confirmed + ttl.
func (r *Raw) TTLQueueTrip(ctx context.Context, holding, target string, n int, ttl time.Duration) (RungTrip, error) {
	ch, err := r.conn.Channel()
	if err != nil {
		return RungTrip{}, err
	}
	defer ch.Close()
	if err := ch.Qos(prefetch, 0, false); err != nil {
		return RungTrip{}, err
	}
	deliveries, err := ch.ConsumeWithContext(ctx, target, "", false, false, false, false, nil)
	if err != nil {
		return RungTrip{}, err
	}

	pub, err := r.conn.Channel()
	if err != nil {
		return RungTrip{}, err
	}
	defer pub.Close()
	// The confirms as amqp091-go hands them on (a multiple ack as one per
	// message), stamped as they come; delivery tag seq+1 is message seq.
	confirms := pub.NotifyPublish(make(chan amqp.Confirmation, n))
	confirmed := make(map[int]time.Time, n)
	stamped := make(chan struct{})
	go func() {
		defer close(stamped)
		for c := range confirms {
			if c.Ack && c.DeliveryTag >= 1 && c.DeliveryTag <= uint64(n) {
				confirmed[int(c.DeliveryTag)-1] = time.Now()
			}
		}
	}()
	published := make(map[int]time.Time, n) // this goroutine's only
	err = publishPipelined(ctx, pub, n, defaultWindow, func(seq int) (string, amqp.Publishing, error) {
		msg, err := rawPublishing(seq)
		if err != nil {
			return "", msg, err
		}
		msg.Headers = amqp.Table{"bench-seq": int64(seq)}
		published[seq] = time.Now()
		return holding, msg, nil
	})
	if err != nil {
		return RungTrip{}, err
	}

	arrived := make(map[int]time.Time, n)
	for len(arrived) < n {
		select {
		case d, ok := <-deliveries:
			if !ok {
				return RungTrip{}, fmt.Errorf("the consumer of %s was cancelled", target)
			}
			now := time.Now()
			seq, ok := d.Headers["bench-seq"].(int64)
			if !ok || seq < 0 || int(seq) >= n {
				return RungTrip{}, fmt.Errorf("a message without its bench-seq header arrived in %s", target)
			}
			if _, seen := arrived[int(seq)]; !seen {
				arrived[int(seq)] = now
			}
			if err := d.Ack(false); err != nil {
				return RungTrip{}, err
			}
		case <-ctx.Done():
			return RungTrip{}, fmt.Errorf("%d of %d dead-lettered messages still missing: %w", n-len(arrived), n, ctx.Err())
		}
	}
	if err := pub.Close(); err != nil { // closes confirms, so the stamping ends
		return RungTrip{}, err
	}
	<-stamped
	return trip(arrived, confirmed, published, ttl)
}
