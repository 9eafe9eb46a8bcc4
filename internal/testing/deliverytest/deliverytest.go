// Package deliverytest is what the tests of codecs (codec/..., encryption)
// share to see a typed consumer read messages published by a raw client,
// as another AceMQ library would publish them: a connection with the
// queue declared, on memory:// or on the RabbitMQ of internal/testing/brokertest,
// and Deliver, which publishes, consumes and says what became of each.
package deliverytest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// Memory is a connection to a fresh memory:// broker (acemqtest.NewBroker
// with opts) with queue declared.
func Memory(t *testing.T, queue string, opts ...memory.Option) *acemq.Conn {
	t.Helper()
	conn := acemqtest.NewBroker(t, opts...).Connect(t)
	declare(t, conn, queue)
	return conn
}

// RabbitMQ is a connection to the test broker (internal/testing/brokertest) with
// queue declared, removed with its dead-letter queues when t ends.
func RabbitMQ(t *testing.T, queue string) *acemq.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := acemq.Connect(ctx, brokertest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	declare(t, conn, queue)
	t.Cleanup(func() {
		for _, q := range []string{queue, contract.DeadLetterQueue(queue), contract.ParkedQueue(queue)} {
			_, _ = conn.Transport().DeleteQueue(context.Background(), q)
		}
	})
	return conn
}

func declare(t *testing.T, conn *acemq.Conn, queue string) {
	t.Helper()
	if err := conn.Transport().DeclareQueue(context.Background(), transport.Queue{Name: queue, Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
}

// Outcome is what became of the messages Deliver published, by message id.
type Outcome[T any] struct {
	Accepted     map[string]T
	Parked       map[string]string // the reason, x-acemq-error
	DeadLettered map[string]string
}

// Deliver publishes msgs to queue with a raw client, as another library
// would (each needs a MessageID), consumes them with a typed consumer of
// codec under NoRetry, waits until every one is settled and says how.
func Deliver[T any](t *testing.T, conn *acemq.Conn, queue string, codec acemq.Codec, msgs []transport.Message) Outcome[T] {
	t.Helper()
	ctx := context.Background()
	out := Outcome[T]{Accepted: map[string]T{}, Parked: map[string]string{}, DeadLettered: map[string]string{}}
	var mu sync.Mutex
	c, err := acemq.Consume(ctx, conn, queue, func(_ context.Context, m acemq.Message[T]) acemq.Decision {
		mu.Lock()
		defer mu.Unlock()
		out.Accepted[m.Envelope.ID] = m.Body
		return acemq.Accept()
	}, acemq.WithCodec(codec), acemq.WithPolicy(acemq.NoRetry()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	for _, m := range msgs {
		conf, err := conn.Transport().Publish(ctx, transport.Publishing{RoutingKey: queue, Mandatory: true, Message: m})
		if err == nil {
			err = conf.Wait(ctx)
		}
		if err != nil {
			t.Fatalf("publishing %s: %v", m.MessageID, err)
		}
	}
	acemqtest.WaitFor(t, c, "every message settled", func(s acemq.Stats) bool {
		return s.Accepted+s.Parked+s.DeadLettered == int64(len(msgs))
	})
	for queue, into := range map[string]map[string]string{contract.ParkedQueue(queue): out.Parked, contract.DeadLetterQueue(queue): out.DeadLettered} {
		for {
			d, ok, err := conn.Transport().Get(ctx, queue)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			into[d.MessageID] = acemq.ReadEnvelope(d.Message).Error
			_ = d.Ack()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return out
}

// TakeAll takes every message of queue out, in order, acking each.
func TakeAll(t *testing.T, tr transport.Transport, queue string) []transport.Message {
	t.Helper()
	taker, err := tr.Take(t.Context(), queue)
	if err != nil {
		t.Fatal(err)
	}
	defer taker.Close()
	var out []transport.Message
	for {
		d, ok, err := taker.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		if err := d.Ack(); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Message)
	}
}
