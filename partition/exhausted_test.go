package partition_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/conntest"
	"github.com/acemq-go/acemq/partition"
	"github.com/acemq-go/acemq/transport/memory"
)

// ends records how the observer is told each delivery ended.
type ends struct {
	acemq.NopObserver
	mu  sync.Mutex
	got []acemq.SettleResult
}

func (e *ends) DeliveryEnd(_ context.Context, _ *acemq.DeliveryInfo, r acemq.SettleResult) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, r)
}

// A partition message the policy gives up on is settled by the consumer
// as any consumer's: told and counted dead-lettered, exhausted, once, and
// deadletter.ReasonOf reads the copy in the dead-letter queue the same way.
func TestExhaustedPartitionMessage(t *testing.T) {
	run := func(t *testing.T, connect func(obs acemq.Observer) *acemq.Conn, name string) {
		obs := &ends{}
		conn := connect(obs)
		s := partition.Set{Name: name, Partitions: 1}
		declare(t, conn, s)
		var tries atomic.Int32
		cs, err := partition.Consume(t.Context(), conn, s, func(context.Context, acemq.Message[event]) acemq.Decision {
			tries.Add(1)
			return acemq.Retry(errors.New("not yet"))
		}, partition.Ordering{Policy: acemq.Fixed(2, time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = cs.Close(context.Background()) })
		pub, err := partition.NewPublisher[event](conn, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := pub.Publish(t.Context(), "k", event{Key: "k"}); err != nil {
			t.Fatal(err)
		}
		dlq := contract.DeadLetterQueue(s.Queue(0))
		deadline := time.Now().Add(10 * time.Second)
		for {
			d, ok, err := conn.Get(t.Context(), dlq)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				if r := deadletter.ReasonOf(dlq, d.Message); r.Class != contract.ReasonExhausted || r.Text != "exhausted 2 attempts: not yet" {
					t.Errorf("ReasonOf the dead letter = %+v, want exhausted 2 attempts: not yet, class exhausted", r)
				}
				_ = d.Ack()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("nothing in %s within 10s", dlq)
			}
			time.Sleep(5 * time.Millisecond)
		}
		for cs.Stats().DeadLettered == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		obs.mu.Lock()
		defer obs.mu.Unlock()
		if got := fmt.Sprint(obs.got); len(obs.got) != 1 || obs.got[0].Outcome != contract.DeadLettered || obs.got[0].ReasonClass != contract.ReasonExhausted {
			t.Errorf("the observer was told %s, want one settlement, dead-lettered, exhausted", got)
		}
		if st := cs.Stats(); st.DeadLettered != 1 || st.RetriedInConsumer != 0 || tries.Load() != 2 {
			t.Errorf("Stats = %+v after %d tries; want 1 dead-lettered, none retried through the queue, 2 tries", st, tries.Load())
		}
	}
	t.Run("memory", func(t *testing.T) {
		run(t, func(obs acemq.Observer) *acemq.Conn {
			b := memory.NewBroker()
			t.Cleanup(b.Close)
			conn, err := acemq.New(b.Connect(), acemq.WithObserver(obs))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			return conn
		}, "orders")
	})
	t.Run("rabbitmq", func(t *testing.T) {
		run(t, func(obs acemq.Observer) *acemq.Conn {
			return conntest.Connect(t, brokertest.URL(t), t.Name(), acemq.WithObserver(obs))
		}, brokertest.UniqueName(t, "partition"))
	})
}
