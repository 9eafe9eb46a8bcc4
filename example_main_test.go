package acemq_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/transport/memory"
)

// Order is the message the examples publish and consume.
type Order struct {
	ID string `json:"id"`
}

// The main path on the in-process broker: connect, declare what the
// service needs, publish, consume with a retry policy, close.
func Example() {
	ctx := context.Background()
	broker := memory.NewBroker() // as strict as RabbitMQ; nothing installed
	defer broker.Close()
	conn, err := acemq.New(broker.Connect())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	policy := acemq.Fixed(3, 10*time.Millisecond) // short waits: the consumer's
	topology := acemq.Topology{
		Exchanges: []acemq.ExchangeSpec{{Name: "orders", Type: "topic"}},
		Queues: []acemq.QueueSpec{{Name: "orders.new", DeadLetter: true, Retry: &policy,
			Bindings: []acemq.BindingSpec{{Exchange: "orders", RoutingKey: "order.*"}}}},
	}
	if err := topology.Apply(ctx, conn); err != nil {
		log.Fatal(err)
	}

	orders, err := acemq.NewPublisher[Order](conn, "orders")
	if err != nil {
		log.Fatal(err)
	}
	if err := orders.Publish(ctx, "order.new", Order{ID: "o-1"}); err != nil {
		log.Fatal(err)
	}

	shipped := make(chan struct{})
	consumer, err := acemq.Consume(ctx, conn, "orders.new",
		func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
			fmt.Printf("%s, attempt %d\n", m.Body.ID, m.Envelope.Attempt)
			if m.Envelope.Attempt == 1 {
				return acemq.Retry(errors.New("the warehouse is busy"))
			}
			close(shipped)
			return acemq.Accept()
		}, acemq.WithPolicy(policy))
	if err != nil {
		log.Fatal(err)
	}
	<-shipped
	if _, err := consumer.Close(ctx); err != nil {
		log.Fatal(err)
	}
	s := consumer.Stats()
	fmt.Printf("accepted %d, retried in the consumer %d\n", s.Accepted, s.RetriedInConsumer)
	// Output:
	// o-1, attempt 1
	// o-1, attempt 2
	// accepted 1, retried in the consumer 1
}

// A message the handler rejects is set aside in Q.dlq with its reason in
// x-acemq-error; one that does not decode is parked in Q.parked.
func ExampleReject() {
	ctx := context.Background()
	broker := memory.NewBroker()
	defer broker.Close()
	conn, err := acemq.New(broker.Connect())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: "orders.new", DeadLetter: true}}}).Apply(ctx, conn); err != nil {
		log.Fatal(err)
	}
	orders, err := acemq.NewPublisher[Order](conn, "")
	if err != nil {
		log.Fatal(err)
	}
	if err := orders.Publish(ctx, "orders.new", Order{ID: "o-2"}); err != nil {
		log.Fatal(err)
	}
	handled := make(chan struct{})
	consumer, err := acemq.Consume(ctx, conn, "orders.new",
		func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
			defer close(handled)
			return acemq.Reject(fmt.Errorf("order %s has no lines", m.Body.ID))
		})
	if err != nil {
		log.Fatal(err)
	}
	<-handled
	// Close waits for the settlement under way: the copy in Q.dlq
	// confirmed, then the original acked.
	if _, err := consumer.Close(ctx); err != nil {
		log.Fatal(err)
	}
	set, err := broker.Peek("orders.new.dlq")
	if err != nil || len(set) != 1 {
		log.Fatalf("orders.new.dlq holds %d messages (%v)", len(set), err)
	}
	fmt.Println(acemq.ReadEnvelope(set[0]).Error)
	// Output:
	// order o-2 has no lines
}
