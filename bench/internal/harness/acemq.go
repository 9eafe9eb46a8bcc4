package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acemq-go/acemq"
	amqp "github.com/rabbitmq/amqp091-go"
)

// AceMQ is this library, through its public API only.
type AceMQ struct {
	name string
	conn *acemq.Conn
	// clock times republishes to rungs (NewAceMQClocked); nil otherwise.
	clock *RungClock
}

// NewAceMQ opens AceMQ's connection, as name ("acemq", or a variant with
// options such as an observer).
func NewAceMQ(ctx context.Context, url, name string, opts ...acemq.ConnOption) (*AceMQ, error) {
	all := []acemq.ConnectOption{acemq.WithConnectionName("bench " + name)}
	for _, o := range opts {
		all = append(all, o)
	}
	conn, err := acemq.Connect(ctx, url, all...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &AceMQ{name: name, conn: conn}, nil
}

func (a *AceMQ) Name() string { return a.name }

func (a *AceMQ) Close() error { return a.conn.Close() }

func (a *AceMQ) Preloaded(seq int) (amqp.Publishing, error) { return acemqPublishing(seq) }

// PublishConfirmed sends every message in one PublishBatch, which keeps
// the default batch window in flight.
func (a *AceMQ) PublishConfirmed(ctx context.Context, queue string, n int) error {
	msgs := make([]acemq.Outgoing[Payload], n)
	for i := range msgs {
		msgs[i] = acemq.Outgoing[Payload]{RoutingKey: queue, Body: NewPayload(i)}
	}
	pub, err := acemq.NewPublisher[Payload](a.conn, "")
	if err != nil {
		return err
	}
	return pub.PublishBatch(ctx, msgs)
}

// ConsumeAck accepts every message: WithPrefetch(100), WithConcurrency(n).
func (a *AceMQ) ConsumeAck(ctx context.Context, queue string, n, concurrency int) error {
	finished := newCountdown(n)
	return a.consume(ctx, queue, finished, func(context.Context, acemq.Message[Payload]) acemq.Decision {
		finished.Tick()
		return acemq.Accept()
	}, acemq.WithPrefetch(prefetch), acemq.WithConcurrency(concurrency))
}

var errFirstAttempt = errors.New("the first attempt fails on purpose")

// RetryInConsumer fails each message's first attempt under Fixed(2, 10ms):
// the consumer holds it 10ms, republishes it to its queue and acks the
// original; the second attempt is accepted.
func (a *AceMQ) RetryInConsumer(ctx context.Context, queue string, n int) error {
	finished := newCountdown(n)
	return a.consume(ctx, queue, finished, func(_ context.Context, m acemq.Message[Payload]) acemq.Decision {
		if m.Envelope.Attempt == 1 {
			return acemq.Retry(errFirstAttempt)
		}
		finished.Tick()
		return acemq.Accept()
	}, acemq.WithPrefetch(prefetch), acemq.WithPolicy(acemq.Fixed(2, retryWait)))
}

// consume runs h on queue until finished, then closes the consumer.
func (a *AceMQ) consume(ctx context.Context, queue string, finished *countdown, h acemq.Handler[Payload], opts ...acemq.ConsumeOption) error {
	c, err := acemq.Consume(ctx, a.conn, queue, h, opts...)
	if err != nil {
		return err
	}
	waitErr := finished.Wait(ctx, nil)
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := c.Close(closeCtx); err != nil && waitErr == nil {
		return fmt.Errorf("closing the consumer: %w", err)
	}
	if waitErr == nil {
		if s := c.Stats(); s.DeadLettered+s.Parked+s.RungMissing > 0 {
			return fmt.Errorf("the consumer set messages aside or found a rung missing: %+v", s)
		}
	}
	return waitErr
}
