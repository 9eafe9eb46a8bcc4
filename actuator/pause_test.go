package actuator_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
)

// Paused through the actuator under load, a consumer handles nothing: the
// broker holds every message not handled, those it had prefetched handed
// back; resumed, it handles every one, each once and at its first attempt,
// none retried or dead-lettered.
func TestPauseThroughTheActuator(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		pauseThroughTheActuator(t, acemqtest.NewBroker(t).Connect(t), "orders")
	})
	t.Run("rabbitmq", func(t *testing.T) {
		conn, err := acemq.Connect(t.Context(), brokertest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		pauseThroughTheActuator(t, conn, brokertest.UniqueName(t, "paused"))
	})
}

func pauseThroughTheActuator(t *testing.T, conn *acemq.Conn, queue string) {
	const total = 200
	var (
		mu    sync.Mutex
		seen  = map[string]int{}
		later int // handlings past the first attempt
	)
	handled := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range seen {
			n += c
		}
		return n
	}
	c := consume(t, conn, queue, func(_ context.Context, m acemq.Message[string]) acemq.Decision {
		time.Sleep(time.Millisecond)
		mu.Lock()
		seen[m.Body]++
		if m.Envelope.Attempt > 1 {
			later++
		}
		mu.Unlock()
		return acemq.Accept()
	}, acemq.WithConcurrency(2), acemq.WithPrefetch(20))
	base := serve(t, conn, nil)
	pub := acemqtest.NewPublisher[string](t, conn, "")
	publish := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := pub.Publish(t.Context(), queue, fmt.Sprint(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	await := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30s (%d handled)", what, handled())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	ready := func() int {
		st, err := conn.Transport().InspectQueue(t.Context(), queue)
		if err != nil {
			t.Fatal(err)
		}
		return st.Messages
	}

	publish(0, total/2)
	await("the first handled", func() bool { return handled() >= 10 })
	r := call(t, http.MethodPost, base+"/acemq-consumers/"+c.ID()+"/pause", "", nil)
	wantCode(t, "pause", r, http.StatusOK)
	if s := decode[status](t, r); s.State != "paused" || s.Running != 0 {
		t.Fatalf("after the pause: %s with %d running, want paused with none", s.State, s.Running)
	}
	atPause := handled()
	publish(total/2, total)
	// Every message not handled is on the queue, ready: the prefetched
	// ones were handed back, and nothing takes the rest.
	await("the queue holding every message not handled", func() bool { return ready() == total-atPause })
	if n := handled(); n != atPause {
		t.Fatalf("%d handled while paused", n-atPause)
	}

	wantCode(t, "resume", call(t, http.MethodPost, base+"/acemq-consumers/"+c.ID()+"/resume", "", nil), http.StatusOK)
	await("every message handled", func() bool { return handled() == total })
	// A handling is counted in the stats once it is settled, just after
	// the handler returns.
	await("every handling settled", func() bool { return c.Stats().Accepted >= total })
	mu.Lock()
	defer mu.Unlock()
	for i := range total {
		if n := seen[fmt.Sprint(i)]; n != 1 {
			t.Errorf("message %d handled %d times, want once", i, n)
		}
	}
	if later > 0 {
		t.Errorf("%d handlings past the first attempt: the pause spent attempts", later)
	}
	if s := c.Stats(); s.RetriedInConsumer+s.RetriedOnRung+s.DeadLettered+s.Parked != 0 || s.Accepted != total {
		t.Errorf("stats %+v, want %d accepted and nothing retried or set aside", s, total)
	}
}
