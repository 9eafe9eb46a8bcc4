package harness

import (
	"context"
	"time"

	"github.com/acemq-go/acemq"
	amqp "github.com/rabbitmq/amqp091-go"
)

// defaultWindow is the publish window: AceMQ's default batch window, which
// raw amqp091-go uses too so the two pipeline equally deep.
const defaultWindow = acemq.DefaultBatchWindow

// prefetch is every consumer scenario's prefetch.
const prefetch = 100

// retryWait is the in-consumer wait of the retry-in-consumer scenario.
const retryWait = 10 * time.Millisecond

// Implementation is one way of talking to RabbitMQ, measured scenario by
// scenario. Each call works on a queue that exists and is deleted after it;
// its connections are opened once per run, outside the timings.
type Implementation interface {
	Name() string
	// Preloaded is message seq as this implementation's publisher sends
	// it, for the queues its consumer scenarios start from.
	Preloaded(seq int) (amqp.Publishing, error)
	// PublishConfirmed publishes n messages to queue and returns once the
	// broker confirmed every one.
	PublishConfirmed(ctx context.Context, queue string, n int) error
	// ConsumeAck consumes and acknowledges the n messages of queue with
	// concurrency handlers at a time.
	ConsumeAck(ctx context.Context, queue string, n, concurrency int) error
	// RetryInConsumer consumes the n messages of queue, failing each once
	// and accepting it on its second delivery.
	RetryInConsumer(ctx context.Context, queue string, n int) error
	Close() error
}
