package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Raw is plain amqp091-go: the baseline every ratio is measured against.
// As "raw+envelope" it sends the messages AceMQ's publisher sends (the
// envelope's headers), to tell the cost of the contract's headers on the
// wire and in the broker from the cost of the library's code.
type Raw struct {
	name       string
	conn       *amqp.Connection
	publishing func(seq int) (amqp.Publishing, error)
}

// NewRaw opens the baseline's connection.
func NewRaw(url string) (*Raw, error) { return dialRaw(url, "raw", rawPublishing) }

// NewRawEnvelope opens a connection for raw amqp091-go sending AceMQ's
// messages.
func NewRawEnvelope(url string) (*Raw, error) {
	return dialRaw(url, "raw+envelope", acemqPublishing)
}

func dialRaw(url, name string, publishing func(int) (amqp.Publishing, error)) (*Raw, error) {
	conn, err := amqp.Dial(url)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Raw{name: name, conn: conn, publishing: publishing}, nil
}

func (r *Raw) Name() string { return r.name }

func (r *Raw) Close() error { return r.conn.Close() }

func (r *Raw) Preloaded(seq int) (amqp.Publishing, error) { return r.publishing(seq) }

// PublishConfirmed marshals each payload and publishes it mandatory and
// persistent with deferred confirms, window deep, as AceMQ's batch does.
func (r *Raw) PublishConfirmed(ctx context.Context, queue string, n int) error {
	ch, err := r.conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	return publishPipelined(ctx, ch, n, defaultWindow, func(seq int) (string, amqp.Publishing, error) {
		p, err := r.publishing(seq)
		return queue, p, err
	})
}

// ConsumeAck runs concurrency goroutines over one deliveries channel
// (Qos prefetch), each decoding the body and acking.
func (r *Raw) ConsumeAck(ctx context.Context, queue string, n, concurrency int) error {
	return r.consume(ctx, queue, n, concurrency, func(d amqp.Delivery) (bool, error) {
		return true, d.Ack(false)
	})
}

// RetryInConsumer nacks each first delivery with requeue and acks the
// redelivery. Not equivalent to the others: there is no wait, and the
// broker, not the client, counts the attempt (the redelivered flag).
func (r *Raw) RetryInConsumer(ctx context.Context, queue string, n int) error {
	return r.consume(ctx, queue, n, 1, func(d amqp.Delivery) (bool, error) {
		if !d.Redelivered {
			return false, d.Nack(false, true)
		}
		return true, d.Ack(false)
	})
}

// consume delivers queue's messages to handle until it reported n of them
// done; handle decodes nothing itself, consume does that first.
func (r *Raw) consume(ctx context.Context, queue string, n, concurrency int, handle func(amqp.Delivery) (done bool, err error)) error {
	ch, err := r.conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.Qos(prefetch, 0, false); err != nil {
		return err
	}
	deliveries, err := ch.ConsumeWithContext(ctx, queue, "", false, false, false, false, nil)
	if err != nil {
		return err
	}
	finished := newCountdown(n)
	errs := make(chan error, concurrency)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for d := range deliveries {
				var p Payload
				if err := json.Unmarshal(d.Body, &p); err != nil {
					errs <- fmt.Errorf("decoding: %w", err)
					return
				}
				done, err := handle(d)
				if err != nil {
					errs <- err
					return
				}
				if done {
					finished.Tick()
				}
			}
		})
	}
	err = finished.Wait(ctx, errs)
	_ = ch.Close() // ends the deliveries channel, so the goroutines return
	wg.Wait()
	return err
}
