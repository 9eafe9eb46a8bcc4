package idempotency_test

import (
	"context"
	"fmt"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/idempotency"
)

// A handler made idempotent: the second copy of order-1 is accepted
// without charging twice.
func ExampleHandler() {
	charge := func(_ context.Context, m acemq.Message[string]) acemq.Decision {
		fmt.Println("charging for", m.Envelope.ID)
		return acemq.Accept()
	}
	h, err := idempotency.Handler(idempotency.NewMemory(nil), charge)
	if err != nil {
		fmt.Println(err)
		return
	}
	order := acemq.Message[string]{Envelope: acemq.Envelope{ID: "order-1"}}
	fmt.Println(h(context.Background(), order))
	fmt.Println(h(context.Background(), order))
	// Output:
	// charging for order-1
	// accept
	// accept
}
