package acemq_test

import (
	"context"

	"github.com/acemq-go/acemq"
)

// ship is what the README's example does with an order.
func ship(context.Context, Order) error { return nil }

// readmeFirstLook is the README's first Go example, exactly as it is there
// (TestREADMEExampleIsCompiled holds the two together): what a service
// author reads first compiles, importing only the root package.
func readmeFirstLook(ctx context.Context) error {
	conn, err := acemq.Connect(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		return err
	}
	defer conn.Close()

	// Declare what the service needs: its exchange, its queue with the
	// dead-letter half (orders.new.dlq, orders.new.parked) and the retry ladder.
	policy, err := acemq.ParsePolicy("exponential(6, 10s, 5m)")
	if err != nil {
		return err // says where the notation went wrong and what was expected
	}
	topology := acemq.Topology{
		Exchanges: []acemq.ExchangeSpec{{Name: "orders", Type: "topic"}},
		Queues: []acemq.QueueSpec{{Name: "orders.new", DeadLetter: true, Retry: &policy,
			Bindings: []acemq.BindingSpec{{Exchange: "orders", RoutingKey: "order.*"}}}},
	}
	if err := topology.Apply(ctx, conn); err != nil {
		return err
	}

	// Publish: returns once the broker confirmed it, or says why not.
	orders, err := acemq.NewPublisher[Order](conn, "orders")
	if err != nil {
		return err
	}
	if err := orders.Publish(ctx, "order.new", Order{ID: "o-1"}); err != nil {
		return err
	}

	// Consume: short waits in the consumer, long ones on the retry ladder,
	// Q.dlq and Q.parked for what cannot be handled.
	consumer, err := acemq.Consume(ctx, conn, "orders.new",
		func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
			if err := ship(ctx, m.Body); err != nil {
				return acemq.Retry(err)
			}
			return acemq.Accept()
		}, acemq.WithPolicy(policy))
	if err != nil {
		return err
	}
	defer consumer.Close(context.Background())
	return nil
}

var _ = readmeFirstLook
