package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq"
)

// OpenLoop consumes queue on a channel of its own (Qos prefetch, eight
// goroutines on one deliveries channel, each decoding and acking) while
// it publishes the plan on another, with deferred confirms window deep as
// in PublishConfirmed: a full window holds the next send back (its lag).
func (r *Raw) OpenLoop(ctx context.Context, queue string, a *arrivals) error {
	consumer, err := r.conn.Channel()
	if err != nil {
		return err
	}
	if err := consumer.Qos(prefetch, 0, false); err != nil {
		consumer.Close()
		return err
	}
	deliveries, err := consumer.ConsumeWithContext(ctx, queue, "", false, false, false, false, nil)
	if err != nil {
		consumer.Close()
		return err
	}
	failed := make(chan error, openLoopConcurrency)
	var wg sync.WaitGroup
	for range openLoopConcurrency {
		wg.Go(func() {
			for d := range deliveries {
				var p Payload
				if err := json.Unmarshal(d.Body, &p); err != nil {
					failed <- fmt.Errorf("decoding: %w", err)
					return
				}
				a.handled(p.Seq)
				if err := d.Ack(false); err != nil {
					failed <- err
					return
				}
			}
		})
	}
	defer wg.Wait()
	defer consumer.Close() // ends the deliveries channel, so the goroutines return

	publisher, err := r.conn.Channel()
	if err != nil {
		return err
	}
	defer publisher.Close()
	p := a.begin()
	err = publishPipelined(ctx, publisher, a.n(), defaultWindow, func(seq int) (string, amqp.Publishing, error) {
		if _, err := p.Wait(ctx, seq); err != nil {
			return "", amqp.Publishing{}, err
		}
		a.sent(seq)
		pub, err := r.publishing(seq)
		return queue, pub, err
	})
	if err != nil {
		return err
	}
	return a.wait(ctx, failed)
}

// OpenLoop consumes queue with Consume (WithPrefetch(100),
// WithConcurrency(8)) while it publishes the plan with one Publisher, a
// goroutine per Publish (each waits for its confirm), at most
// DefaultBatchWindow at once: a full window holds the next send back (its
// lag).
func (a *AceMQ) OpenLoop(ctx context.Context, queue string, arr *arrivals) error {
	c, err := acemq.Consume(ctx, a.conn, queue, func(_ context.Context, m acemq.Message[Payload]) acemq.Decision {
		arr.handled(m.Body.Seq)
		return acemq.Accept()
	}, acemq.WithPrefetch(prefetch), acemq.WithConcurrency(openLoopConcurrency))
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = c.Close(closeCtx)
	}()
	pub, err := acemq.NewPublisher[Payload](a.conn, "")
	if err != nil {
		return err
	}
	p := arr.begin()
	window := make(chan struct{}, defaultWindow)
	failed := make(chan error, 1)
	var wg sync.WaitGroup
	for seq := range arr.n() {
		if _, err := p.Wait(ctx, seq); err != nil {
			break
		}
		select {
		case window <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		arr.sent(seq)
		wg.Go(func() {
			defer func() { <-window }()
			if err := pub.Publish(ctx, queue, NewPayload(seq)); err != nil {
				select {
				case failed <- err:
				default:
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-failed:
		return err
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := arr.wait(ctx, nil); err != nil {
		return err
	}
	if s := c.Stats(); s.DeadLettered+s.Parked > 0 {
		return fmt.Errorf("the consumer set messages aside: %+v", s)
	}
	return nil
}
