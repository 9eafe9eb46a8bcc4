// Command streams is a stream at work (package stream): declared with a
// week's retention, refused a day's on a second declaration, read
// from each kind of offset with every message's offset, and a failure
// stopping one consumer and skipped (copied to S.dlq) by another.
//
//	go run ./examples/streams                  # memory://
//	go run ./examples/streams -broker amqp://guest:guest@localhost:5672/
//
// Against a real broker it uses a stream of its own, named for the run, and
// deletes it at the end.
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/examples/internal/example"
	"github.com/acemq-go/acemq/stream"
)

// Event is one event of the stream.
type Event struct {
	N int `json:"n"`
}

func main() { example.Main(run) }

func run(ctx context.Context, conn *acemq.Conn) error {
	name := "events." + example.Suffix()
	shown := func(s string) string { return strings.ReplaceAll(s, name, "events") } // as printed
	spec := stream.Spec{Name: name, MaxAge: 7 * 24 * time.Hour, MaxLengthBytes: 1 << 30}
	if err := spec.Declare(ctx, conn); err != nil {
		return err
	}
	defer example.DeleteQueues(conn, example.WithDeadLetters(name)...)
	args := spec.Arguments()
	fmt.Printf("declared events: x-max-age %v, x-max-length-bytes %v\n", args[contract.ArgMaxAge], args[contract.ArgMaxLengthBytes])
	// Redeclaring with another retention is refused by every RabbitMQ
	// version (the message goes on to name both values, as text up to 4.2,
	// in milliseconds from 4.3: docs/streams.md).
	retention := acemq.Topology{Queues: []acemq.QueueSpec{{Name: name, Type: "stream",
		Arguments: acemq.Table{contract.ArgMaxAge: "86400s", contract.ArgMaxLengthBytes: int64(1 << 30)}}}}
	err := retention.Apply(ctx, conn)
	if !errors.Is(err, acemq.ErrPreconditionFailed) {
		return fmt.Errorf("redeclaring with 86400s: want PRECONDITION_FAILED, got %v", err)
	}
	refusal := err.Error()[strings.Index(err.Error(), "PRECONDITION_FAILED"):]
	fmt.Printf("declared again with x-max-age 86400s: %s\n", shown(refusal[:strings.Index(refusal, ": received")]))

	pub, err := acemq.NewPublisher[Event](conn, "")
	if err != nil {
		return err
	}
	publish := func(from, to int) error {
		for n := from; n < to; n++ {
			if err := pub.Publish(ctx, name, Event{N: n}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := publish(0, 3); err != nil {
		return err
	}
	// Timestamps are whole seconds: 3 and 4 are written after a second
	// boundary that 0, 1 and 2 were written before.
	boundary := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(boundary))
	if err := publish(3, 5); err != nil {
		return err
	}

	for _, from := range []struct {
		shown  string
		offset stream.Offset
		n      int
	}{
		{"first", stream.First(), 5},
		{"last", stream.Last(), 1},
		{"offset 2", stream.At(2), 3},
		{"a timestamp (after event 2)", stream.Since(boundary), 2},
		{"an interval (the last hour)", stream.Interval(time.Hour), 5},
	} {
		got, err := read(ctx, conn, name, stream.Options{Offset: from.offset}, from.n, nil)
		if err != nil {
			return err
		}
		fmt.Printf("from %s: %s\n", from.shown, got)
	}
	// Next: what comes once the consumer is there.
	var got string
	done := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		var err error
		got, err = read(ctx, conn, name, stream.Options{Offset: stream.Next()}, 1, started)
		done <- err
	}()
	<-started
	if err := publish(5, 6); err != nil {
		return err
	}
	if err := <-done; err != nil {
		return err
	}
	fmt.Printf("from next, then event 5 published: %s\n", got)

	// Stop: event 2 fails, the consumer ends there; reading again from its
	// offset starts with it.
	c, err := stream.Consume(ctx, conn, name, func(_ context.Context, m stream.Message[Event]) acemq.Decision {
		if m.Body.N == 2 {
			return acemq.Reject(errors.New("no stock"))
		}
		return acemq.Accept()
	}, stream.Options{Offset: stream.First()})
	if err != nil {
		return err
	}
	<-c.Done()
	var stopped *stream.StoppedError
	if !errors.As(c.Err(), &stopped) {
		return fmt.Errorf("want the consumer stopped, got %v", c.Err())
	}
	pos, _ := c.Position()
	fmt.Printf("stop: %s; position %d\n", shown(stopped.Error()), pos)
	again, err := read(ctx, conn, name, stream.Options{Offset: stream.At(stopped.Offset)}, 4, nil)
	if err != nil {
		return err
	}
	fmt.Printf("from offset %d again: %s\n", stopped.Offset, again)

	// Skip: event 2 is copied to events.dlq and the consumer goes on.
	skipped, err := read(ctx, conn, name, stream.Options{Offset: stream.First(), OnFailure: stream.Skip}, 6, nil, 2)
	if err != nil {
		return err
	}
	fmt.Printf("skip: %s\n", skipped)
	d, ok, err := conn.Get(ctx, contract.DeadLetterQueue(name))
	if err != nil || !ok {
		return fmt.Errorf("reading events.dlq: %v, %t", err, ok)
	}
	_ = d.Ack()
	fmt.Printf("events.dlq holds %s: %v\n", d.Body, d.Headers[contract.HeaderError])
	return nil
}

// read consumes stream from o until n messages were handled and returns
// them as offset:event; started, when not nil, is closed once the
// consumer is there; the events fail names fail with "no stock".
func read(ctx context.Context, conn *acemq.Conn, name string, o stream.Options, n int, started chan struct{}, fail ...int) (string, error) {
	var mu sync.Mutex
	var got []string
	enough := make(chan struct{})
	c, err := stream.Consume(ctx, conn, name, func(_ context.Context, m stream.Message[Event]) acemq.Decision {
		for _, f := range fail {
			if m.Body.N == f {
				return acemq.Reject(errors.New("no stock"))
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if got = append(got, fmt.Sprintf("%d:%d", m.Offset, m.Body.N)); len(got) == n-len(fail) {
			close(enough)
		}
		return acemq.Accept()
	}, o)
	if err != nil {
		return "", err
	}
	if started != nil {
		close(started)
	}
	select {
	case <-enough:
	case <-c.Done():
		return "", fmt.Errorf("the consumer stopped: %w", c.Err())
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if err := c.Close(ctx); err != nil {
		return "", err
	}
	mu.Lock()
	defer mu.Unlock()
	return strings.Join(got[:n-len(fail)], " "), nil
}
