package rabbitmq

import (
	"context"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/transporttest"
)

// TestConformance runs the transport conformance suite against RabbitMQ,
// the truth the memory:// broker is held to.
func TestConformance(t *testing.T) {
	t.Parallel()
	url := brokertest.URL(t)
	transporttest.Run(t, transporttest.Target{
		Name: "RabbitMQ",
		Connect: func(t *testing.T) transport.Transport {
			tr, err := Dial(t.Context(), url, Options{})
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			t.Cleanup(func() { _ = tr.Close() })
			return conformanceTransport{tr}
		},
	})
}

// conformanceTransport lets the suite delete the exchanges it declares
// (transporttest.ExchangeDeleter), which transport.Transport cannot.
type conformanceTransport struct{ *Transport }

func (c conformanceTransport) DeleteExchange(ctx context.Context, name string) error {
	return c.do(ctx, "delete exchange "+name, func(ch *amqp.Channel) error {
		return ch.ExchangeDelete(name, false, false)
	})
}
