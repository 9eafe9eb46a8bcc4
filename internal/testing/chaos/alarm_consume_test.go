//go:build chaos

package chaos

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/rabbitmq"
	"github.com/acemq-go/acemq/transport/transporttest"
)

// TestDiskAlarmKeepsConsumersRunning: a Transport that has published, and
// has gone on publishing during a disk alarm until the broker blocked it,
// still consumes and acknowledges what was queued before the alarm, while
// the alarm lasts; a publish during it fails with ErrBlocked at its
// deadline. RabbitMQ stops reading a connection it has blocked, its acks
// included: the Transport's consumers are on a connection apart from the
// publishing one (issue 31). The alarm blocks every publisher of the node,
// so make chaos-disk-alarm runs it on the chaos node, beside the disk-alarm
// run.
func TestDiskAlarmKeepsConsumersRunning(t *testing.T) {
	const queued = 500
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // rabbitmqctl boots a VM of its own
	defer cancel()
	q := brokertest.UniqueName(t, "acemq.alarm")
	tr, err := rabbitmq.Dial(ctx, brokertest.URL(t), rabbitmq.Options{ConnectionName: q})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	for i := range queued {
		c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: q, Mandatory: true, More: i < queued-1,
			Message: transport.Message{Body: fmt.Appendf(nil, "%d", i)}})
		if err == nil {
			err = c.Wait(ctx)
		}
		if err != nil {
			t.Fatalf("publish %d before the alarm: %v", i, err)
		}
	}

	alarm := diskAlarm(nil)
	if err := alarm(ctx, true); err != nil {
		t.Fatalf("raising the disk alarm: %v", err)
	}
	t.Cleanup(func() {
		clear, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := alarm(clear, false); err != nil {
			t.Errorf("clearing the disk alarm: %v", err)
		}
	})
	blockedErr := publishUntilBlocked(t, ctx, tr, q+".probe")
	t.Logf("a publish during the alarm: %v", blockedErr)

	// Consumed and acked while the alarm lasts: the broker says the
	// publishing connection is blocked before and after.
	consuming, stop := context.WithTimeout(ctx, 60*time.Second)
	defer stop()
	s := consumeWithin(t, consuming, tr, q)
	acked := 0
	for acked < queued {
		select {
		case d := <-transporttest.Chan(s):
			if err := d.Ack(); err != nil {
				t.Fatalf("Ack of delivery %d during the alarm: %v", acked, err)
			}
			acked++
		case <-consuming.Done():
			t.Fatalf("consumed and acked %d of the %d messages queued before the alarm, during it", acked, queued)
		}
	}
	if st, err := tr.InspectQueue(consuming, q); err != nil || st.Messages != 0 {
		t.Errorf("the queue after consuming during the alarm: %+v (%v), want empty", st, err)
	}
	if st := tr.State(); !st.Blocked {
		t.Errorf("the Transport's State after consuming: %+v, want still blocked (the alarm held)", st)
	}
	if err := s.Cancel(consuming); err != nil {
		t.Errorf("Cancel during the alarm: %v", err)
	}
}

// consumeWithin subscribes to q within ctx: amqp091 opens a channel
// without a context, and on a connection the broker no longer reads that
// would wait for the alarm to clear.
func consumeWithin(t *testing.T, ctx context.Context, tr *rabbitmq.Transport, q string) transport.Subscription {
	t.Helper()
	type subscribed struct {
		s   transport.Subscription
		err error
	}
	got := make(chan subscribed, 1)
	go func() {
		s, err := tr.Consume(ctx, q, transport.ConsumeOptions{Prefetch: 50})
		got <- subscribed{s, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("Consume during the alarm: %v", r.err)
		}
		return r.s
	case <-ctx.Done():
		t.Fatalf("Consume during the alarm did not return: %v", ctx.Err())
	}
	panic("unreachable")
}

// publishUntilBlocked publishes to key (no queue takes it) until a publish
// with a 1s deadline fails with ErrBlocked, and returns that error.
// RabbitMQ reads a connection's first publishes of an alarm before it
// blocks the connection and says so; those wait for their confirms until
// the alarm clears, and are not waited for here.
func publishUntilBlocked(t *testing.T, ctx context.Context, tr *rabbitmq.Transport, key string) error {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond) // a publish every 100ms until the broker blocks one
	defer tick.Stop()
	for {
		probe, cancel := context.WithTimeout(ctx, time.Second)
		_, err := tr.Publish(probe, transport.Publishing{RoutingKey: key})
		cancel()
		if errors.Is(err, transport.ErrBlocked) && errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if err != nil {
			t.Fatalf("a publish during the alarm: %v, want ErrBlocked at its deadline", err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("no publish blocked during the alarm: %v", ctx.Err())
		}
	}
}
