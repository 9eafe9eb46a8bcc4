package acemq

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// BenchmarkRetryMemory is one retry in the consumer on memory://: a
// confirmed publish, its delivery failing, held on a timer of no wait, the
// republish with the next attempt (confirmed) and the ack, then the second
// delivery accepted. Its allocations are the figure to watch: its time is
// mostly the timer's and the goroutines' wake-ups.
func BenchmarkRetryMemory(b *testing.B) {
	ctx := context.Background()
	tr, err := memory.Dial(ctx, fmt.Sprintf("memory://bench-%d", benchBrokers.Add(1)))
	if err != nil {
		b.Fatal(err)
	}
	conn, err := New(tr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Transport().DeclareQueue(ctx, transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		b.Fatal(err)
	}
	handled := make(chan struct{}, 1)
	c, err := Consume(ctx, conn, "orders", func(_ context.Context, m Message[benchItem]) Decision {
		if m.Envelope.Attempt == 1 {
			return Retry(errors.New("boom"))
		}
		handled <- struct{}{}
		return Accept()
	}, WithPolicy(Fixed(2, 0)))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if _, err := c.Close(ctx); err != nil {
			b.Error(err)
		}
	}()
	pub := mustPublisher[benchItem](b, conn, "")
	item := newBenchItem(1)
	b.ReportAllocs()
	for b.Loop() {
		if err := pub.Publish(ctx, "orders", item); err != nil {
			b.Fatal(err)
		}
		<-handled
	}
}
