package request_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/request"
	"github.com/acemq-go/acemq/transport/memory"
)

// A responder pricing quotes and a client asking it, on memory://.
func Example() {
	ctx := context.Background()
	broker := memory.NewBroker()
	defer broker.Close()
	conn, err := acemq.New(broker.Connect())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "quotes", DeadLetter: true}}}
	if err := topology.Apply(ctx, conn); err != nil {
		log.Fatal(err)
	}

	responder, err := request.Serve(ctx, conn, "quotes", func(_ context.Context, m acemq.Message[Quote]) (Price, error) {
		if m.Body.Qty <= 0 {
			return Price{}, fmt.Errorf("quantity %d is not positive", m.Body.Qty)
		}
		return Price{SKU: m.Body.SKU, Cents: 250 * m.Body.Qty}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	defer responder.Close(ctx)

	client, err := request.NewClient(ctx, conn)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close(ctx)

	price, err := request.Do[Quote, Price](ctx, client, "", "quotes", Quote{SKU: "sku-1", Qty: 4})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(price.SKU, price.Cents)

	_, err = request.Do[Quote, Price](ctx, client, "", "quotes", Quote{SKU: "sku-1"})
	var failed *request.ResponderError
	fmt.Println(errors.As(err, &failed), failed.Message)
	// Output:
	// sku-1 1000
	// true quantity 0 is not positive
}
