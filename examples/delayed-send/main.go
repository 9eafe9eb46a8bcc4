// Command delayed-send is delayed send at work (package schedule): three
// reminders published at once, to be delivered now, in a second and in
// three seconds, a forwarder moving them over the scheduler's rungs, and a
// message that is not a scheduled one, parked.
//
//	go run ./examples/delayed-send                  # memory://
//	go run ./examples/delayed-send -broker amqp://guest:guest@localhost:5672/
//
// A service uses the family's exchange, acemq.schedule (schedule.New
// without WithExchange); this example names one of its own for the run,
// so that runs on a shared broker never meet, and deletes its queues at
// the end.
package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/examples/internal/example"
	"github.com/acemq-go/acemq/schedule"
)

// Reminder is what is sent later.
type Reminder struct {
	Order string `json:"order"`
	Say   string `json:"say"`
}

func main() { example.Main(run) }

func run(ctx context.Context, conn *acemq.Conn) error {
	id := example.Suffix()
	exchange, reminders := "acemq.schedule.example."+id, "reminders."+id
	sched, err := schedule.New(ctx, conn, schedule.WithExchange(exchange))
	if err != nil {
		return err
	}
	target := acemq.Topology{Queues: []acemq.QueueSpec{{Name: reminders, DeadLetter: true}}}
	if err := target.Apply(ctx, conn); err != nil {
		return err
	}
	// The scheduler's and the target's queues, and the forwarder's dead-letter
	// half, which it declares as every consumer does.
	queues := append(example.Queues(sched.Topology()), example.Queues(target)...)
	queues = append(queues, contract.DeadLetterQueue(sched.DueQueue()), contract.ParkedQueue(sched.DueQueue()))
	defer example.DeleteQueues(conn, queues...)

	// The reminders' consumer: an ordinary one, on the target queue.
	arrived := make(chan acemq.Message[Reminder], 3)
	consumer, err := acemq.Consume(ctx, conn, reminders, func(_ context.Context, m acemq.Message[Reminder]) acemq.Decision {
		arrived <- m
		return acemq.Accept()
	})
	if err != nil {
		return err
	}
	forwarder, err := sched.Forward(ctx)
	if err != nil {
		return err
	}

	// One call each; published in this order, they arrive in the other.
	for _, r := range []struct {
		in   time.Duration
		body Reminder
	}{{3 * time.Second, Reminder{"o-1", "pay"}}, {time.Second, Reminder{"o-2", "ship"}}} {
		if err := sched.PublishIn(ctx, r.in, "", reminders, r.body); err != nil {
			return err
		}
		fmt.Printf("published %s %s, due in %v\n", r.body.Say, r.body.Order, r.in)
	}
	if err := sched.PublishAt(ctx, time.Now(), "", reminders, Reminder{"o-3", "thank"}); err != nil {
		return err
	}
	fmt.Println("published thank o-3, due now")

	for range 3 {
		select {
		case m := <-arrived:
			fmt.Printf("delivered %s %s: type %s, %s\n", m.Body.Say, m.Body.Order, m.Envelope.Type, m.Envelope.ContentType)
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	// A message no scheduler sent, put straight into the due queue.
	sent, err := conn.Publish(ctx, "", sched.DueQueue(),
		acemq.RawMessage{Body: []byte(`{}`), ContentType: contract.ContentTypeJSON, Persistent: true})
	if err == nil {
		err = sent.Wait(ctx)
	}
	if err != nil {
		return err
	}
	parked := contract.ParkedQueue(sched.DueQueue())
	for forwarder.Forwarded().Foreign == 0 || forwarder.Stats().Parked == 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	d, ok, err := conn.Get(ctx, parked)
	if err != nil || !ok {
		return fmt.Errorf("reading %s: %v (a message: %v)", parked, err, ok)
	}
	_ = d.Ack()
	fmt.Printf("parked in %s: %s\n", strings.Replace(parked, exchange, contract.ScheduleExchange, 1), acemq.ReadEnvelope(d.Message).Error)

	if _, err := forwarder.Close(ctx); err != nil {
		return err
	}
	if _, err := consumer.Close(ctx); err != nil {
		return err
	}
	s := forwarder.Forwarded()
	fmt.Printf("forwarder: %d hop(s), %d delivered, %d foreign\n", s.Hops, s.Delivered, s.Foreign)
	return nil
}
