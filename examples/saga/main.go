// Command saga is a saga at work (package saga) inside a consumer: each trip
// request books a flight, a hotel and a payment, one step after the other;
// when a step fails, what was booked is cancelled, the last first. A trip
// whose cancellation fails is parked for a person to look at, with the list
// of what could not be undone.
//
//	go run ./examples/saga                  # memory://
//	go run ./examples/saga -broker amqp://guest:guest@localhost:5672/
//
// Against a real broker it uses a queue of its own, named for the run, and
// deletes it at the end.
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/examples/internal/example"
	"github.com/acemq-go/acemq/saga"
)

// Trip is a request to book a journey.
type Trip struct {
	ID   string `json:"id"`
	Card string `json:"card"`
	// HotelSystemDown: the hotel takes bookings but cannot cancel them.
	HotelSystemDown bool `json:"hotelSystemDown,omitempty"`
}

func main() { example.Main(run) }

func run(ctx context.Context, conn *acemq.Conn) error {
	trips := "trips." + example.Suffix()
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: trips, DeadLetter: true}}}
	if err := topology.Apply(ctx, conn); err != nil {
		return err
	}
	defer example.DeleteQueues(conn, example.WithDeadLetters(trips)...)

	handled := make(chan struct{})
	consumer, err := acemq.Consume(ctx, conn, trips, func(ctx context.Context, m acemq.Message[Trip]) acemq.Decision {
		defer func() { handled <- struct{}{} }()
		return book(ctx, m.Body)
	})
	if err != nil {
		return err
	}
	publisher, err := acemq.NewPublisher[Trip](conn, "")
	if err != nil {
		return err
	}
	for _, t := range []Trip{
		{ID: "trip-1", Card: "ok"},
		{ID: "trip-2", Card: "declined"},
		{ID: "trip-3", Card: "declined", HotelSystemDown: true},
	} {
		fmt.Printf("== %s\n", t.ID)
		if err := publisher.Publish(ctx, trips, t, acemq.WithMessageID(t.ID)); err != nil {
			return err
		}
		select {
		case <-handled:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if _, err := consumer.Close(ctx); err != nil {
		return err
	}
	s := consumer.Stats()
	fmt.Printf("== %d accepted, %d parked\n", s.Accepted, s.Parked)
	parked, ok, err := conn.Get(ctx, contract.ParkedQueue(trips))
	if err != nil || !ok {
		return fmt.Errorf("the parked trip: %v, found %v", err, ok)
	}
	env := acemq.ReadEnvelope(parked.Message)
	fmt.Printf("trips.parked holds %s: %s\n", env.ID, env.Error)
	return parked.Ack()
}

// book runs the trip's saga and decides what becomes of the request: done
// or cleanly undone, it is accepted (a declined card is an answer, not a
// fault); something left half done is parked for a person.
func book(ctx context.Context, t Trip) acemq.Decision {
	say := func(format string, args ...any) error {
		fmt.Printf("  "+format+"\n", args...)
		return nil
	}
	err := saga.Run(ctx,
		saga.Step{Name: "reserve flight",
			Do:   func(context.Context) error { return say("flight reserved") },
			Undo: func(context.Context) error { return say("flight cancelled") }},
		saga.Step{Name: "reserve hotel",
			Do: func(context.Context) error { return say("hotel reserved") },
			Undo: func(context.Context) error {
				if t.HotelSystemDown {
					return errors.New("the hotel's system is down")
				}
				return say("hotel cancelled")
			}},
		saga.Step{Name: "charge card",
			Do: func(context.Context) error {
				if t.Card == "declined" {
					return errors.New("card declined")
				}
				return say("card charged")
			}},
	)
	var failed *saga.Error
	switch {
	case err == nil:
		fmt.Printf("%s booked\n", t.ID)
		return acemq.Accept()
	case errors.Is(err, saga.ErrUncompensated):
		errors.As(err, &failed)
		for _, u := range failed.Uncompensated {
			fmt.Printf("ALERT %s: %q could not be undone: %v\n", t.ID, u.Step, u.Err)
		}
		return acemq.Park(err)
	case errors.As(err, &failed):
		fmt.Printf("%s not booked (%v); undone: %s\n", t.ID, failed.Err, strings.Join(failed.Compensated, ", "))
		return acemq.Accept()
	}
	return acemq.Retry(err) // the saga could not run at all
}
