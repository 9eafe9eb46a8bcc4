package stream_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/conntest"
	"github.com/acemq-go/acemq/stream"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// settlements records what the observer is told of each queue's
// deliveries: "outcome/class", in order.
type settlements struct {
	acemq.NopObserver
	mu  sync.Mutex
	got map[string][]string
}

func (s *settlements) DeliveryEnd(_ context.Context, d *acemq.DeliveryInfo, r acemq.SettleResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[d.Queue] = append(s.got[d.Queue], fmt.Sprintf("%s/%s", r.Outcome, r.ReasonClass))
}

// wait returns queue's settlements once there are n, failing t after 10s.
func (s *settlements) wait(t *testing.T, queue string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		got := slices.Clone(s.got[queue])
		s.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// observed runs test on memory:// and on the test broker with a Conn
// whose observer is obs.
func observed(t *testing.T, test func(t *testing.T, conn *acemq.Conn, obs *settlements, name string)) {
	t.Run("memory", func(t *testing.T) {
		obs := &settlements{got: map[string][]string{}}
		b := memory.NewBroker()
		t.Cleanup(b.Close)
		conn, err := acemq.New(b.Connect(), acemq.WithObserver(obs))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		test(t, conn, obs, declare(t, conn, "events"))
	})
	t.Run("rabbitmq", func(t *testing.T) {
		obs := &settlements{got: map[string][]string{}}
		conn := conntest.Connect(t, brokertest.URL(t), t.Name(), acemq.WithObserver(obs))
		test(t, conn, obs, declare(t, conn, brokertest.UniqueName(t, "stream")))
	})
}

// A stream consumer is an acemq consumer: the observer is told of its
// deliveries in the words it is told a queue consumer's, for the same
// messages handled the same way (accepted, a failure set aside in the
// dead-letter queue, an undecodable body parked); a failure that stops a
// consumer is handed back (the message stays in the stream).
func TestStreamDeliveriesAreObserved(t *testing.T) {
	observed(t, func(t *testing.T, conn *acemq.Conn, obs *settlements, name string) {
		queue := name + ".queue"
		if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: queue}}}).Apply(t.Context(), conn); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{queue, contract.DeadLetterQueue(queue), contract.ParkedQueue(queue)} {
			t.Cleanup(func() { _, _ = conn.DeleteQueue(context.Background(), q) })
		}
		for _, to := range []string{name, queue} {
			publish(t, conn, to, 0, 2)
			if _, err := conn.Publish(t.Context(), "", to, transport.Message{ContentType: contract.ContentTypeJSON, Body: []byte("not json")}); err != nil {
				t.Fatal(err)
			}
		}
		failed := errors.New("no stock")
		s, err := stream.Consume(t.Context(), conn, name, func(_ context.Context, m stream.Message[event]) acemq.Decision {
			if m.Body.N == 1 {
				return acemq.Reject(failed)
			}
			return acemq.Accept()
		}, stream.Options{Offset: stream.First(), OnFailure: stream.Skip})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = s.Close(context.Background()) }()
		q, err := acemq.Consume(t.Context(), conn, queue, func(_ context.Context, m acemq.Message[event]) acemq.Decision {
			if m.Body.N == 1 {
				return acemq.Reject(failed)
			}
			return acemq.Accept()
		})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _, _ = q.Close(context.Background()) }()
		want := []string{"accepted/", "dead_lettered/rejected", "parked/undecodable"}
		for _, on := range []string{name, queue} {
			if got := obs.wait(t, on, 3); !slices.Equal(got, want) {
				t.Errorf("the observer was told %q of %s, want %q", got, on, want)
			}
		}
		if handled, skipped := s.Counts(); handled != 1 || skipped != 2 {
			t.Errorf("Counts = %d handled, %d skipped; want 1 and 2", handled, skipped)
		}

		stopping, err := stream.Consume(t.Context(), conn, name, func(_ context.Context, m stream.Message[event]) acemq.Decision {
			if m.Body.N == 1 {
				return acemq.Reject(failed)
			}
			return acemq.Accept()
		}, stream.Options{Offset: stream.First(), Tag: "stopping"})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = stopping.Close(context.Background()) }()
		select {
		case <-stopping.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the consumer did not stop within 10s")
		}
		if !errors.Is(stopping.Err(), failed) {
			t.Errorf("Err = %v, want the handler's error", stopping.Err())
		}
		want = append(want, "accepted/", "requeued/rejected")
		if got := obs.wait(t, name, 5); len(got) < 5 || !slices.Equal(got[:5], want) {
			t.Errorf("the observer was told %q of %s, want %q first", got, name, want)
		}
	})
}
