package acemq_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

type tenantKey struct{}

// A publish interceptor of a Conn stamps every message with the tenant of
// its context, and refuses a message without one.
func ExampleWithPublishInterceptors() {
	ctx := context.Background()
	b := memory.NewBroker()
	defer b.Close()
	conn, err := acemq.New(b.Connect(), acemq.WithPublishInterceptors(
		func(ctx context.Context, m *acemq.Intercepted) error {
			tenant, ok := ctx.Value(tenantKey{}).(string)
			if !ok {
				return errors.New("no tenant")
			}
			m.Headers["tenant"] = tenant
			return nil
		}))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	if err := conn.Transport().DeclareQueue(ctx, transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		panic(err)
	}
	orders, err := acemq.NewPublisher[string](conn, "")
	if err != nil {
		panic(err)
	}

	fmt.Println(orders.Publish(ctx, "orders", "o-1", acemq.WithMessageID("m-1")))
	fmt.Println(orders.Publish(context.WithValue(ctx, tenantKey{}, "acme"), "orders", "o-2", acemq.WithMessageID("m-2")))
	d, _, err := conn.Transport().Get(ctx, "orders")
	if err != nil {
		panic(err)
	}
	fmt.Println(d.MessageID, d.Headers["tenant"])
	// Output:
	// acemq: publish of message m-1 to exchange (default) with routing key "orders": publish interceptor 1 of 1 refused it: no tenant
	// <nil>
	// m-2 acme
}
