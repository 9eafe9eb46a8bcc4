// Command request-reply is request-reply at work: a responder pricing
// quotes (request.Serve) and a client asking it (request.Do), with a
// request the responder fails, one to a queue nobody serves, and one that
// no queue takes.
//
//	go run ./examples/request-reply                  # memory://
//	go run ./examples/request-reply -broker amqp://guest:guest@localhost:5672/
//
// Against a real broker it uses queues of its own, named for the run, and
// deletes them at the end.
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/examples/internal/example"
	"github.com/acemq-go/acemq/request"
)

// Quote asks the price of Qty of SKU.
type Quote struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

// Price answers a Quote.
type Price struct {
	SKU   string `json:"sku"`
	Cents int    `json:"cents"`
}

func main() { example.Main(run) }

func run(ctx context.Context, conn *acemq.Conn) error {
	// The queues of this run's own, so that runs on a shared broker never
	// meet; deleted at the end. Nobody serves idle.
	run := example.Suffix()
	quotes, idle := "quotes."+run, "idle."+run
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: quotes, DeadLetter: true}, {Name: idle}}}
	if err := topology.Apply(ctx, conn); err != nil {
		return err
	}
	defer example.DeleteQueues(conn, example.Queues(topology)...)

	responder, err := request.Serve(ctx, conn, quotes, func(_ context.Context, m acemq.Message[Quote]) (Price, error) {
		if m.Body.Qty <= 0 {
			return Price{}, fmt.Errorf("quantity %d is not positive", m.Body.Qty)
		}
		return Price{SKU: m.Body.SKU, Cents: 250 * m.Body.Qty}, nil
	})
	if err != nil {
		return err
	}
	client, err := request.NewClient(ctx, conn)
	if err != nil {
		return err
	}

	// Answered.
	price, err := request.Do[Quote, Price](ctx, client, "", quotes, Quote{SKU: "sku-1", Qty: 4})
	if err != nil {
		return err
	}
	fmt.Printf("4 of sku-1: %d cents\n", price.Cents)

	// The responder's handler fails: its error comes back.
	_, err = request.Do[Quote, Price](ctx, client, "", quotes, Quote{SKU: "sku-1", Qty: 0})
	var failed *request.ResponderError
	if !errors.As(err, &failed) {
		return fmt.Errorf("a failing responder: want its error, got %v", err)
	}
	fmt.Printf("0 of sku-1: %v\n", failed)

	// Nobody serves idle: no reply before the deadline. The request waits
	// in idle still, and may yet be handled. (Long enough for the broker to
	// confirm the request on a loaded machine: at 200ms it sometimes had
	// not, and the error said so instead.)
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	_, err = request.Do[Quote, Price](short, client, "", idle, Quote{SKU: "sku-2", Qty: 1})
	cancelShort()
	if !errors.Is(err, acemq.ErrTimeout) {
		return fmt.Errorf("a request nobody serves: want acemq.ErrTimeout, got %v", err)
	}
	fmt.Printf("to a queue nobody serves: %v\n", cause(err))

	// No queue takes the routing key: refused at once.
	_, err = request.Do[Quote, Price](ctx, client, "", "nobody."+run, Quote{SKU: "sku-3", Qty: 1})
	if !errors.Is(err, acemq.ErrUnroutable) {
		return fmt.Errorf("a request no queue takes: want acemq.ErrUnroutable, got %v", err)
	}
	fmt.Println("to a routing key no queue takes: acemq.ErrUnroutable")

	if err := client.Close(ctx); err != nil {
		return err
	}
	if _, err := responder.Close(ctx); err != nil {
		return err
	}
	cs, rs := client.Stats(), responder.Replies()
	fmt.Printf("client: %d replies, %d unmatched\n", cs.Replies, cs.Unmatched)
	fmt.Printf("responder: %d answered, %d failed\n", rs.Answered, rs.Failed)
	// The failed request was dead-lettered; the one that timed out waits.
	for _, q := range []struct{ shown, name string }{{contract.DeadLetterQueue("quotes"), contract.DeadLetterQueue(quotes)}, {"idle", idle}} {
		state, err := conn.InspectQueue(ctx, q.name)
		if err != nil {
			return err
		}
		fmt.Printf("%s holds %d request(s)\n", q.shown, state.Messages)
	}
	return nil
}

// cause is a request's error without the request's own name (its
// correlation id is new on every run).
func cause(err error) error {
	var re *request.Error
	if errors.As(err, &re) {
		return re.Err
	}
	return err
}
