package harness

import (
	"context"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/contract"
)

// Broker is the harness's own connection, for setting up and tearing down
// queues and preloading them; never timed.
type Broker struct {
	URL  string
	conn *amqp.Connection
}

// Dial connects the harness to the broker at url.
func Dial(url string) (*Broker, error) {
	conn, err := amqp.Dial(url)
	if err != nil {
		return nil, fmt.Errorf("connecting to the broker: %w", err)
	}
	return &Broker{URL: url, conn: conn}, nil
}

// Close closes the harness's connection.
func (b *Broker) Close() error { return b.conn.Close() }

// Version is the broker's product and version from the connection's server
// properties, e.g. "RabbitMQ 3.12.1".
func (b *Broker) Version() string {
	product, _ := b.conn.Properties["product"].(string)
	version, _ := b.conn.Properties["version"].(string)
	return product + " " + version
}

// DeclareQueue declares a durable classic queue with extra arguments
// (x-queue-type among them makes it another type).
func (b *Broker) DeclareQueue(name string, args amqp.Table) error {
	ch, err := b.conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	all := amqp.Table{contract.ArgQueueType: contract.QueueTypeClassic}
	for k, v := range args {
		all[k] = v
	}
	if _, err := ch.QueueDeclare(name, true, false, false, false, all); err != nil {
		return fmt.Errorf("declaring %s: %w", name, err)
	}
	return nil
}

// DeleteScenarioQueues deletes queue and everything AceMQ declares beside
// it (dead-letter, parked, the 1s rungs of both kinds); deleting a missing
// queue is fine.
func (b *Broker) DeleteScenarioQueues(queue string) error {
	ch, err := b.conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	for _, q := range append([]string{queue, contract.DeadLetterQueue(queue), contract.ParkedQueue(queue)}, rungQueues(queue)...) {
		if _, err := ch.QueueDelete(q, false, false, false); err != nil {
			return fmt.Errorf("deleting %s: %w", q, err)
		}
	}
	return nil
}

// Preload puts n messages made by message into queue with confirms, so
// that a consumer scenario starts from a full queue.
func (b *Broker) Preload(ctx context.Context, queue string, n int, message func(seq int) (amqp.Publishing, error)) error {
	ch, err := b.conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	return publishPipelined(ctx, ch, n, defaultWindow, func(seq int) (string, amqp.Publishing, error) {
		p, err := message(seq)
		return queue, p, err
	})
}

// publishPipelined publishes n messages on ch with confirms, keeping up to
// window unconfirmed, and waits for every confirm. next gives the routing
// key (the default exchange is used) and the message for each sequence.
func publishPipelined(ctx context.Context, ch *amqp.Channel, n, window int, next func(seq int) (string, amqp.Publishing, error)) error {
	return publishPipelinedTo(ctx, ch, "", n, window, next)
}

// publishPipelinedTo is publishPipelined to exchange.
func publishPipelinedTo(ctx context.Context, ch *amqp.Channel, exchange string, n, window int, next func(seq int) (string, amqp.Publishing, error)) error {
	if err := ch.Confirm(false); err != nil {
		return fmt.Errorf("enabling confirms: %w", err)
	}
	inFlight := make([]*amqp.DeferredConfirmation, 0, window)
	wait := func(dc *amqp.DeferredConfirmation) error {
		ok, err := dc.WaitContext(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("message %d refused by the broker", dc.DeliveryTag)
		}
		return nil
	}
	for seq := range n {
		if len(inFlight) == window {
			if err := wait(inFlight[0]); err != nil {
				return err
			}
			inFlight = inFlight[1:]
		}
		key, msg, err := next(seq)
		if err != nil {
			return err
		}
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, true, false, msg)
		if err != nil {
			return fmt.Errorf("publishing: %w", err)
		}
		inFlight = append(inFlight, dc)
	}
	for _, dc := range inFlight {
		if err := wait(dc); err != nil {
			return err
		}
	}
	return nil
}
