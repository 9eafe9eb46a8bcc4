package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/contract"
)

// Watermill is watermill-amqp's durable queue config: the default exchange,
// the queue named by the topic, persistent messages.
type Watermill struct {
	url       string
	publisher *wamqp.Publisher
}

// NewWatermill opens Watermill's publisher (its own connection).
func NewWatermill(url string) (*Watermill, error) {
	pub, err := wamqp.NewPublisher(watermillConfig(url), watermill.NopLogger{})
	if err != nil {
		return nil, fmt.Errorf("watermill: %w", err)
	}
	return &Watermill{url: url, publisher: pub}, nil
}

// watermillConfig is NewDurableQueueConfig with confirms, mandatory
// publishes, prefetch 100 and the queue declared classic, as the harness
// declared it (so Watermill's own declare matches).
func watermillConfig(url string) wamqp.Config {
	c := wamqp.NewDurableQueueConfig(url)
	c.Queue.Arguments = amqp.Table{contract.ArgQueueType: contract.QueueTypeClassic}
	c.Publish.Mandatory = true
	c.Publish.ConfirmDelivery = true
	c.Consume.Qos.PrefetchCount = prefetch
	return c
}

func (w *Watermill) Name() string { return "watermill" }

func (w *Watermill) Close() error { return w.publisher.Close() }

func (w *Watermill) Preloaded(seq int) (amqp.Publishing, error) { return watermillPublishing(seq) }

// PublishConfirmed hands every message to one Publish call. With
// ConfirmDelivery, Watermill waits for each confirm before the next publish
// (a window of one): its config has no pipelining.
func (w *Watermill) PublishConfirmed(_ context.Context, queue string, n int) error {
	msgs := make([]*message.Message, n)
	for i := range msgs {
		p := NewPayload(i)
		body, err := json.Marshal(p)
		if err != nil {
			return err
		}
		msgs[i] = message.NewMessage(p.ID, body)
	}
	return w.publisher.Publish(queue, msgs...)
}

// ConsumeAck runs a router with concurrency handlers on the queue; each
// handler is its own subscription (channel, prefetch 100), because a
// Watermill AMQP subscription handles one message at a time.
func (w *Watermill) ConsumeAck(ctx context.Context, queue string, n, concurrency int) error {
	finished := newCountdown(n)
	return w.route(ctx, queue, concurrency, finished, nil, func(m *message.Message) error {
		var p Payload
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			return err
		}
		finished.Tick()
		return nil
	})
}

// RetryInConsumer uses the Retry middleware (MaxRetries 1, 10ms): the
// handler runs again in-process on the same delivery, which is acked after.
func (w *Watermill) RetryInConsumer(ctx context.Context, queue string, n int) error {
	finished := newCountdown(n)
	var failed sync.Map // message ids whose first attempt has failed
	retry := middleware.Retry{MaxRetries: 1, InitialInterval: retryWait, MaxInterval: retryWait, Multiplier: 1}
	return w.route(ctx, queue, 1, finished, retry.Middleware, func(m *message.Message) error {
		var p Payload
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			return err
		}
		if _, seen := failed.LoadOrStore(m.UUID, true); !seen {
			return errFirstAttempt
		}
		finished.Tick()
		return nil
	})
}

// route runs a router of handlers on queue until finished.
func (w *Watermill) route(ctx context.Context, queue string, handlers int, finished *countdown, mw message.HandlerMiddleware, h message.NoPublishHandlerFunc) error {
	sub, err := wamqp.NewSubscriber(watermillConfig(w.url), watermill.NopLogger{})
	if err != nil {
		return err
	}
	defer sub.Close()
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 10 * time.Second}, watermill.NopLogger{})
	if err != nil {
		return err
	}
	if mw != nil {
		router.AddMiddleware(mw)
	}
	for i := range handlers {
		router.AddConsumerHandler(fmt.Sprintf("bench-%d", i), queue, sub, h)
	}
	runErr := make(chan error, 1)
	go func() {
		err := router.Run(context.WithoutCancel(ctx))
		if err == nil {
			err = errors.New("the router stopped before the last message")
		}
		runErr <- err
	}()
	err = finished.Wait(ctx, runErr)
	if closeErr := router.Close(); closeErr != nil && err == nil {
		err = closeErr
	}
	return err
}
