// Command circuit-breaker is a consumer's circuit breaker at work: the bank
// a payment consumer calls is down; after three failures in a row the
// breaker opens and pauses the consumer, so that the payments wait on their
// queue instead of spending their retries; after a cool-down it probes with
// one payment, and once the bank is back the consumer charges them all.
//
//	go run ./examples/circuit-breaker                    # memory://
//	go run ./examples/circuit-breaker -broker amqp://guest:guest@localhost:5672/
//
// Against a real broker it uses a queue of its own, named for the run, and
// deletes it at the end.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/examples/internal/example"
)

// Payment is what the consumer handles: charge Cents.
type Payment struct {
	Cents int `json:"cents"`
}

const payments = 20

var errBankDown = errors.New("the bank answers 503")

func main() {
	brokerURL := flag.String("broker", "memory://", "the broker: memory:// (in-process) or an amqp:// URL")
	flag.Parse()
	if err := run(*brokerURL); err != nil {
		fmt.Fprintln(os.Stderr, "circuit-breaker:", err)
		os.Exit(1)
	}
}

// transitions passes on the breaker's transitions, as an Observer.
type transitions struct {
	acemq.NopObserver
	events chan acemq.Event
}

func (t transitions) Event(e acemq.Event) {
	if e.Kind == acemq.EventBreakerChanged {
		t.events <- e
	}
}

func run(brokerURL string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seen := transitions{events: make(chan acemq.Event, 16)}
	conn, err := example.Connect(ctx, brokerURL, acemq.WithObserver(seen))
	if err != nil {
		return err
	}
	defer conn.Close()

	queue := "payments." + example.Suffix()
	policy := acemq.Fixed(5, time.Second)
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: queue, DeadLetter: true, Retry: &policy}}}
	if err := topology.Apply(ctx, conn); err != nil {
		return err
	}
	defer example.DeleteQueues(conn, example.Queues(topology)...)
	pub, err := acemq.NewPublisher[Payment](conn, "")
	if err != nil {
		return err
	}
	for i := range payments {
		if err := pub.Publish(ctx, queue, Payment{Cents: 100 * (i + 1)}); err != nil {
			return err
		}
	}
	fmt.Printf("published %d payments; the bank is down\n", payments)

	var bankUp atomic.Bool
	charge := func(_ context.Context, m acemq.Message[Payment]) acemq.Decision {
		if !bankUp.Load() {
			return acemq.Retry(errBankDown)
		}
		return acemq.Accept()
	}
	// One payment at a time, so that the run prints the same every time.
	consumer, err := acemq.Consume(ctx, conn, queue, charge, acemq.WithPolicy(policy),
		acemq.WithPrefetch(1), acemq.WithCircuitBreaker(acemq.CircuitBreaker{
			ConsecutiveFailures: 3, FailureRatio: -1, CoolDown: 200 * time.Millisecond,
		}))
	if err != nil {
		return err
	}
	defer consumer.Close(context.Background())

	// The bank comes back once a probe has failed.
	for opened := 0; ; {
		e, err := next(ctx, seen.events)
		if err != nil {
			return err
		}
		fmt.Printf("breaker %s: %s\n", e.Breaker, e.Reason)
		if e.Breaker == acemq.BreakerOpen {
			if opened++; opened == 2 {
				bankUp.Store(true)
				fmt.Println("the bank is back")
			}
		}
		if e.Breaker == acemq.BreakerClosed {
			break
		}
	}
	for consumer.Stats().Accepted < payments {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the payments: %w (%+v)", ctx.Err(), consumer.Stats())
		case <-time.After(10 * time.Millisecond):
		}
	}
	s := consumer.Stats()
	fmt.Printf("consumer: %d charged, %d retried before the breaker opened, %d dead-lettered\n",
		s.Accepted, s.RetriedInConsumer+s.RetriedOnRung, s.DeadLettered)
	return nil
}

// next is the next transition, or ctx's end.
func next(ctx context.Context, events <-chan acemq.Event) (acemq.Event, error) {
	select {
	case e := <-events:
		return e, nil
	case <-ctx.Done():
		return acemq.Event{}, fmt.Errorf("waiting for the breaker: %w", ctx.Err())
	}
}
