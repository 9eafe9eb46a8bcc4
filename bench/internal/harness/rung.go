package harness

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/acemq-go/acemq"
	amqp "github.com/rabbitmq/amqp091-go"
)

// rungWait is the broker wait of the retry-on-rung scenario.
const rungWait = time.Second

// RetryOnRung consumes the n preloaded messages of queue with AceMQ, failing
// each first attempt under Fixed(2, 1s).WaitInBrokerFrom(1s), so every
// message waits 1s on the rung <queue>.retry.1s and comes home through
// acemq.retry. It returns how late each message came home: a message is due
// 1s after its handler returned the failure, just before the consumer
// republishes it to the rung, so the republish itself counts as lateness.
func (a *AceMQ) RetryOnRung(ctx context.Context, queue string, n int) ([]time.Duration, error) {
	finished := newCountdown(n)
	var mu sync.Mutex
	due := make(map[string]time.Time, n)
	late := make([]time.Duration, 0, n)
	policy := acemq.Fixed(2, rungWait).WaitInBrokerFrom(rungWait)
	err := a.consume(ctx, queue, finished, func(_ context.Context, m acemq.Message[Payload]) acemq.Decision {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if m.Envelope.Attempt == 1 {
			due[m.Envelope.ID] = now.Add(rungWait)
			return acemq.Retry(errFirstAttempt)
		}
		if d, ok := due[m.Envelope.ID]; ok {
			late = append(late, now.Sub(d))
		}
		finished.Tick()
		return acemq.Accept()
	}, acemq.WithPrefetch(prefetch), acemq.WithConcurrency(8), acemq.WithPolicy(policy))
	mu.Lock()
	defer mu.Unlock()
	return late, err
}

// PerMessageTTL is what the rungs avoid: n messages on one classic queue,
// with per-message expirations alternating long and short, dead-lettered
// to target when they expire. RabbitMQ expires only from the head of a
// classic queue, so a short message behind a long one waits for it. It
// returns how late each message arrived in target.
func (b *Broker) PerMessageTTL(ctx context.Context, holding, target string, n int, long, short time.Duration) ([]time.Duration, error) {
	ch, err := b.conn.Channel()
	if err != nil {
		return nil, err
	}
	defer ch.Close()
	if err := ch.Qos(prefetch, 0, false); err != nil {
		return nil, err
	}
	deliveries, err := ch.ConsumeWithContext(ctx, target, "", false, false, false, false, nil)
	if err != nil {
		return nil, err
	}
	due := make([]time.Time, n) // written while publishing, read after: one goroutine
	ttl := func(seq int) time.Duration {
		if seq%2 == 0 {
			return long
		}
		return short
	}

	pub, err := b.conn.Channel()
	if err != nil {
		return nil, err
	}
	defer pub.Close()
	err = publishPipelined(ctx, pub, n, defaultWindow, func(seq int) (string, amqp.Publishing, error) {
		msg, err := rawPublishing(seq)
		if err != nil {
			return "", msg, err
		}
		msg.Headers = amqp.Table{}
		msg.Expiration = strconv.FormatInt(ttl(seq).Milliseconds(), 10)
		msg.Headers["bench-seq"] = int64(seq)
		due[seq] = time.Now().Add(ttl(seq))
		return holding, msg, nil
	})
	if err != nil {
		return nil, err
	}

	late := make([]time.Duration, 0, n)
	for len(late) < n {
		select {
		case d, ok := <-deliveries:
			if !ok {
				return nil, fmt.Errorf("the consumer of %s was cancelled", target)
			}
			now := time.Now()
			seq, ok := d.Headers["bench-seq"].(int64)
			if !ok || seq < 0 || int(seq) >= n {
				return nil, fmt.Errorf("a message without its bench-seq header arrived in %s", target)
			}
			late = append(late, now.Sub(due[seq]))
			if err := d.Ack(false); err != nil {
				return nil, err
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("%d of %d expired messages still missing: %w", n-len(late), n, ctx.Err())
		}
	}
	return late, nil
}
