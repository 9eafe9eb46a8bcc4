package acemq_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
)

// waitsStarted counts the consumer waits the observer is told of.
type waitsStarted struct {
	acemq.NopObserver
	mu sync.Mutex
	n  int
}

func (w *waitsStarted) Event(e acemq.Event) {
	if e.Kind == acemq.EventWaitStarted {
		w.mu.Lock()
		w.n++
		w.mu.Unlock()
	}
}

func (w *waitsStarted) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// WithRetryInPlace: a retry waits in the consumer's goroutine, the message
// after it held behind, and the handler runs again with the next attempt;
// when the policy gives up, the message is dead-lettered exhausted. No
// rung is declared, nothing is republished to the queue.
func TestRetryInPlace(t *testing.T) {
	b := acemqtest.NewBroker(t)
	waits := &waitsStarted{}
	conn := b.Connect(t, acemq.WithObserver(waits))
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: "q"}}}).Apply(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	c, err := acemq.Consume(t.Context(), conn, "q", func(_ context.Context, m acemq.Message[string]) acemq.Decision {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s@%d", m.Body, m.Envelope.Attempt))
		mu.Unlock()
		if m.Body == "a" {
			return acemq.Retry(errors.New("not yet"))
		}
		return acemq.Accept()
	}, acemq.WithPolicy(acemq.Fixed(3, time.Minute).WithJitter(0)), acemq.WithRetryInPlace())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	pub := acemqtest.NewPublisher[string](t, conn, "")
	for _, body := range []string{"a", "b"} {
		if err := pub.Publish(t.Context(), "q", body); err != nil {
			t.Fatal(err)
		}
	}
	for want := 1; want <= 2; want++ {
		deadline := time.Now().Add(10 * time.Second)
		for waits.count() < want {
			if time.Now().After(deadline) {
				t.Fatalf("%d waits in 10s, want %d", waits.count(), want)
			}
			time.Sleep(time.Millisecond)
		}
		b.Advance(time.Minute)
	}
	acemqtest.WaitFor(t, c, "a dead-lettered and b accepted", func(s acemq.Stats) bool { return s.DeadLettered == 1 && s.Accepted == 1 })
	mu.Lock()
	if got := fmt.Sprint(seen); got != "[a@1 a@2 a@3 b@1]" {
		t.Errorf("handled %s, want [a@1 a@2 a@3 b@1]: a's tries in place, b behind them", got)
	}
	mu.Unlock()
	if s := c.Stats(); s.RetriedInConsumer != 0 || s.RetriedOnRung != 0 {
		t.Errorf("Stats = %+v; want no retry settled through the queue or a rung", s)
	}
	dlq := b.Messages(t, contract.DeadLetterQueue("q"))
	if len(dlq) != 1 || dlq[0].Envelope.Error != "exhausted 3 attempts: not yet" {
		t.Errorf("q.dlq holds %+v, want a, exhausted 3 attempts: not yet", dlq)
	}
}
