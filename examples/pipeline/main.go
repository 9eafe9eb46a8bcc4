// Command pipeline is a three-step pipeline at work (package pipeline):
// orders validated, priced and stored, the pricing step failing once for
// every order and retried on its own rung; an order that ends at the first
// step; slips started by the Java library (the step form) and by the
// Python one (the JSON form) continued each in its own form; and a message
// with no slip, dead-lettered.
//
//	go run ./examples/pipeline                  # memory://
//	go run ./examples/pipeline -broker amqp://guest:guest@localhost:5672/
//
// Against a real broker it uses a pipeline of its own, named for the run,
// and deletes its queues at the end (its two exchanges stay: the transport
// deletes queues only).
package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/examples/internal/example"
	"github.com/acemq-go/acemq/pipeline"
	"github.com/acemq-go/acemq/slip"
)

// Order goes through the pipeline.
type Order struct {
	ID       string `json:"id"`
	SKU      string `json:"sku"`
	Qty      int    `json:"qty"`
	Valid    bool   `json:"valid,omitempty"`
	Cents    int    `json:"cents,omitempty"`
	Stored   bool   `json:"stored,omitempty"`
	FreeGift bool   `json:"freeGift,omitempty"`
}

func main() { example.Main(run) }

func run(ctx context.Context, conn *acemq.Conn) error {
	// The pipeline's name is this run's own, so that runs on a shared
	// broker never meet; it is shown as "orders".
	suffix := example.Suffix()
	runs := newFinishes()
	orders := pipeline.Pipeline{Name: "orders." + suffix, Steps: []string{"validate", "price", "store"}, OnFinish: runs.add}
	if err := orders.Declare(ctx, conn); err != nil {
		return err
	}
	var queues []string
	for _, s := range orders.Steps {
		q := orders.Queue(s)
		queues = append(queues, append(example.WithDeadLetters(q), contract.RungQueue(q, time.Second, contract.DefaultRungKind))...)
	}
	defer example.DeleteQueues(conn, queues...)

	validate, err := pipeline.Run(ctx, conn, orders, "validate", func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
		if m.Body.Qty <= 0 {
			return acemq.Reject(fmt.Errorf("order %s: quantity %d is not positive", m.Body.ID, m.Body.Qty))
		}
		if m.Body.FreeGift {
			return pipeline.End(ctx) // nothing to price or store
		}
		m.Body.Valid = true
		return pipeline.Next(ctx, m.Body)
	})
	if err != nil {
		return err
	}
	// The price list is still loading at every order's first attempt: the
	// step retries on its own rung, orders.price.retry.quorum.1s.
	price, err := pipeline.Run(ctx, conn, orders, "price", func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
		if m.Envelope.Attempt == 1 {
			return acemq.Retry(errors.New("the price list is loading"))
		}
		m.Body.Cents = 250 * m.Body.Qty
		return pipeline.Next(ctx, m.Body)
	}, acemq.WithPolicy(acemq.Fixed(3, time.Second).WaitInBrokerFrom(time.Second)))
	if err != nil {
		return err
	}
	store, err := pipeline.Run(ctx, conn, orders, "store", func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
		m.Body.Stored = true
		return pipeline.Next(ctx, m.Body)
	})
	if err != nil {
		return err
	}

	fmt.Println("== three steps, the middle one retried")
	for i, qty := range []int{1, 2, 3} {
		id := fmt.Sprintf("order-%d", i+1)
		if err := orders.Start(ctx, conn, Order{ID: id, SKU: "sku-1", Qty: qty}, acemq.WithMessageID(id)); err != nil {
			return err
		}
	}
	finished, err := runs.await(ctx, 3)
	if err != nil {
		return err
	}
	for _, f := range finished {
		fmt.Printf("%s: %s, done %s: %s\n", f.Envelope.ID, complete(f), strings.Join(names(f.Slip.Done()), ", "), f.Body)
	}
	// Closed, the price step has settled all it handled. From here on only
	// validate and store run: what validate sends on waits in
	// orders.price.
	if _, err := price.Close(ctx); err != nil {
		return err
	}
	ps := price.Stats()
	fmt.Printf("price: %d retried on its rung, %d accepted\n", ps.RetriedOnRung, ps.Accepted)

	fmt.Println("== a step that ends the run")
	if err := orders.Start(ctx, conn, Order{ID: "order-4", SKU: "gift", Qty: 1, FreeGift: true}, acemq.WithMessageID("order-4")); err != nil {
		return err
	}
	if finished, err = runs.await(ctx, 1); err != nil {
		return err
	}
	f := finished[0]
	fmt.Printf("%s: %s at %s, still to come %s\n", f.Envelope.ID, complete(f), f.Step, strings.Join(names(f.Slip.Remaining()[1:]), ", "))

	fmt.Println("== slips from other libraries, continued in their own form")
	show := func(s string) string { return strings.ReplaceAll(s, orders.Name, "orders") }
	for _, from := range []struct {
		library string
		slip    acemq.Table
	}{
		{"Java (step form)", acemq.Table{contract.HeaderRoute: "validate,price,store", contract.HeaderRoutePosition: int32(0),
			contract.HeaderRouteID: "0b7f3c52-9e1d-4c8a-a4f0-5d6e7f8091a2"}},
		{"Python (JSON form)", acemq.Table{contract.HeaderRoutingSlip: fmt.Sprintf(`{"steps": [{"exchange": %q, "routingKey": "validate", "name": "validate"}, `+
			`{"exchange": %q, "routingKey": "price", "name": "price"}, {"exchange": %q, "routingKey": "store", "name": "store"}]}`,
			orders.Name, orders.Name, orders.Name)}},
	} {
		h := from.slip
		h[contract.HeaderType] = orders.Name
		if err := publish(ctx, conn, orders.Name, "validate", Order{ID: "from-" + strings.Fields(from.library)[0], SKU: "sku-2", Qty: 1}, h); err != nil {
			return err
		}
		d, err := take(ctx, conn, orders.Queue("price"))
		if err != nil {
			return err
		}
		fmt.Printf("from %s, price receives:\n", from.library)
		for _, k := range []string{contract.HeaderRoutingSlip, contract.HeaderRoute, contract.HeaderRoutePosition, contract.HeaderRouteID} {
			if v, ok := d.Headers[k]; ok {
				fmt.Printf("  %s: %v\n", k, show(completedAt.ReplaceAllString(fmt.Sprint(v), `"completedAt":"<now, to the second>"`)))
			}
		}
	}

	fmt.Println("== a message with no slip")
	if err := publish(ctx, conn, orders.Name, "validate", Order{ID: "order-5", SKU: "sku-1", Qty: 1}, acemq.Table{contract.HeaderType: orders.Name}); err != nil {
		return err
	}
	d, err := take(ctx, conn, contract.DeadLetterQueue(orders.Queue("validate")))
	if err != nil {
		return err
	}
	fmt.Printf("dead-lettered: %s\n", show(acemq.ReadEnvelope(d.Message).Error))

	for _, c := range []*pipeline.Consumer{validate, store} {
		if _, err := c.Close(ctx); err != nil {
			return err
		}
	}
	v, st := validate.Runs(), store.Runs()
	fmt.Printf("validate: %d forwarded, %d ended, %d refused; store: %d completed\n", v.Forwarded, v.Ended, v.Refused, st.Completed)
	return nil
}

// completedAt finds a done step's time in a JSON slip, which changes from
// run to run.
var completedAt = regexp.MustCompile(`"completedAt":"[0-9T:-]+Z"`)

func complete(f pipeline.Finished) string {
	if f.Early {
		return "ended early"
	}
	return "complete"
}

func names(steps []slip.Step) []string {
	out := []string{}
	for _, s := range steps {
		out = append(out, s.Name)
	}
	return out
}

// finishes collects the runs that finish (Pipeline.OnFinish).
type finishes struct {
	mu   sync.Mutex
	runs []pipeline.Finished
	more chan struct{}
}

func newFinishes() *finishes { return &finishes{more: make(chan struct{}, 16)} }

func (f *finishes) add(_ context.Context, r pipeline.Finished) {
	f.mu.Lock()
	f.runs = append(f.runs, r)
	f.mu.Unlock()
	f.more <- struct{}{}
}

// await waits for n more runs to finish and returns them by message id.
func (f *finishes) await(ctx context.Context, n int) ([]pipeline.Finished, error) {
	for range n {
		select {
		case <-f.more:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %d runs to finish: %w", n, ctx.Err())
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	got := f.runs
	f.runs = nil
	slices.SortFunc(got, func(a, b pipeline.Finished) int { return strings.Compare(a.Envelope.ID, b.Envelope.ID) })
	return got, nil
}

// publish sends an order into a step as another library would, with the
// headers h (its slip) as that library writes them.
func publish(ctx context.Context, conn *acemq.Conn, exchange, key string, o Order, h acemq.Table) error {
	body, err := acemq.JSON.Marshal(o)
	if err != nil {
		return err
	}
	h[contract.HeaderID] = o.ID
	sent, err := conn.Publish(ctx, exchange, key, acemq.RawMessage{Body: body, ContentType: contract.ContentTypeJSON, Headers: h, Persistent: true})
	if err != nil {
		return err
	}
	return sent.Wait(ctx)
}

// take waits for a message in queue and acks it.
func take(ctx context.Context, conn *acemq.Conn, queue string) (acemq.RawDelivery, error) {
	for {
		d, ok, err := conn.Get(ctx, queue)
		if err != nil || ok {
			if ok {
				err = d.Ack()
			}
			return d, err
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return d, fmt.Errorf("waiting for a message in %s: %w", queue, ctx.Err())
		}
	}
}
