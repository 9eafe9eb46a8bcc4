// Command pause-resume pauses, rescales and resumes a consumer under a
// steady stream of messages, as an operator does through the actuator
// (POST /acemq-consumers/{id}/pause) or the console: nothing is handled
// while it is paused, and nothing is lost, retried or dead-lettered.
//
//	go run ./examples/pause-resume                  # memory://
//	go run ./examples/pause-resume -broker amqp://guest:guest@localhost:5672/
//
// It names its queue for the run, so that runs on a shared broker never
// meet, and deletes it at the end.
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/examples/internal/example"
)

// Order is what the stream carries.
type Order struct {
	ID int `json:"id"`
}

const (
	total       = 300                    // the stream's length
	pace        = time.Millisecond       // between two publishes
	work        = time.Millisecond       // a handler's time
	pauseAfter  = 50                     // handled before the pause
	pausedFor   = 300 * time.Millisecond // how long it stays paused
	busyTimeout = 20 * time.Second       // bounds every wait below
)

func main() { example.Main(run) }

// handler counts what it handles, by order and attempt, and how many run at
// once; while gate is set, the handlers wait at it.
type handler struct {
	running, most atomic.Int64
	handled       atomic.Int64
	mu            sync.Mutex
	seen          map[int]int // handlings by order
	later         int         // handlings at an attempt past the first
	gate          chan struct{}
}

func (h *handler) handle(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for most := h.most.Load(); n > most; most = h.most.Load() {
		if h.most.CompareAndSwap(most, n) {
			break
		}
	}
	h.mu.Lock()
	gate := h.gate
	h.seen[m.Body.ID]++
	if m.Envelope.Attempt > 1 {
		h.later++
	}
	h.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	time.Sleep(work)
	h.handled.Add(1)
	return acemq.Accept()
}

func run(ctx context.Context, conn *acemq.Conn) error {
	queue := "orders." + example.Suffix()
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: queue, DeadLetter: true}}}
	if err := topology.Apply(ctx, conn); err != nil {
		return err
	}
	defer example.DeleteQueues(conn, example.Queues(topology)...)
	name := func(s string) string { return strings.ReplaceAll(s, queue, "orders") }

	h := &handler{seen: map[int]int{}}
	c, err := acemq.Consume(ctx, conn, queue, h.handle, acemq.WithConcurrency(1), acemq.WithPrefetch(10))
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	fmt.Printf("consumer %s: concurrency 1, prefetch 10, taking a steady stream of %d orders\n", name(c.ID()), total)
	published := make(chan error, 1)
	go func() { published <- publish(ctx, conn, queue) }()

	// Paused: the subscription ends, what was prefetched goes back to the
	// queue unhandled (no attempt spent), and nothing is handled however
	// long the stream goes on.
	if err := until(ctx, func() bool { return h.handled.Load() >= pauseAfter }); err != nil {
		return err
	}
	if err := c.Pause(ctx); err != nil {
		return err
	}
	before := h.handled.Load()
	time.Sleep(pausedFor) // the stream goes on meanwhile
	st := c.Status()
	if h.handled.Load() != before {
		return fmt.Errorf("%d orders were handled while the consumer was paused", h.handled.Load()-before)
	}
	fmt.Printf("paused once %d were handled: %s by %s, %d running, nothing handled in the %s it was paused\n",
		pauseAfter, st.State, causes(st.PausedBy), st.Running, pausedFor)

	// Rescaled while paused, and resumed: eight handlers at once, shown by
	// holding the first ones until eight are running.
	h.mu.Lock()
	h.gate = make(chan struct{})
	h.mu.Unlock()
	if err := c.Rescale(ctx, acemq.Scale{Concurrency: 8, Prefetch: 40}); err != nil {
		return err
	}
	if err := c.Resume(ctx); err != nil {
		return err
	}
	if err := until(ctx, func() bool { return c.Status().Running == 8 }); err != nil {
		return err
	}
	st = c.Status()
	fmt.Printf("rescaled to concurrency %d, prefetch %d while paused, and resumed: %s, %d handlers ran at once\n",
		st.Scale.Concurrency, st.Scale.Prefetch, st.State, st.Running)
	h.mu.Lock()
	close(h.gate)
	h.gate = nil
	h.mu.Unlock()

	// Back to one under load: the handlers running finish, and from then
	// on one runs at a time.
	if err := c.Rescale(ctx, acemq.Scale{Concurrency: 1, Prefetch: 10}); err != nil {
		return err
	}
	if err := until(ctx, func() bool { return h.running.Load() <= 1 }); err != nil {
		return err
	}
	h.most.Store(h.running.Load())
	if err := <-published; err != nil {
		return err
	}
	if err := until(ctx, func() bool { return h.handled.Load() == total }); err != nil {
		return err
	}
	if most := h.most.Load(); most > 1 {
		return fmt.Errorf("%d handlers ran at once after rescaling to 1", most)
	}
	st = c.Status()
	fmt.Printf("rescaled to concurrency %d, prefetch %d under load: one handler at a time from then on\n",
		st.Scale.Concurrency, st.Scale.Prefetch)

	if _, err := c.Close(ctx); err != nil {
		return err
	}
	return report(ctx, conn, queue, h, c.Stats())
}

// report prints the final counts, and fails when an order was lost,
// handled twice or retried.
func report(ctx context.Context, conn *acemq.Conn, queue string, h *handler, s acemq.Stats) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	twice := 0
	for _, n := range h.seen {
		if n > 1 {
			twice++
		}
	}
	if len(h.seen) != total || twice > 0 || h.later > 0 {
		return fmt.Errorf("%d orders of %d handled, %d more than once, %d handlings past the first attempt", len(h.seen), total, twice, h.later)
	}
	fmt.Printf("drained: %d published, %d handled, each once and at its first attempt\n", total, len(h.seen))
	left, err := conn.InspectQueue(ctx, queue)
	if err != nil {
		return err
	}
	fmt.Printf("retried %d, dead-lettered %d, parked %d; %d left in the queue\n",
		s.RetriedInConsumer+s.RetriedOnRung, s.DeadLettered, s.Parked, left.Messages)
	return nil
}

// publish publishes the stream, one order every pace, each confirmed.
func publish(ctx context.Context, conn *acemq.Conn, queue string) error {
	p, err := acemq.NewPublisher[Order](conn, "")
	if err != nil {
		return err
	}
	tick := time.NewTicker(pace)
	defer tick.Stop()
	for i := 1; i <= total; i++ {
		if err := p.Publish(ctx, queue, Order{ID: i}); err != nil {
			return err
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// until waits for cond, within busyTimeout.
func until(ctx context.Context, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, busyTimeout)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			return errors.New("waited too long: " + context.Cause(ctx).Error())
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

func causes(cs []acemq.PauseCause) string {
	var s []string
	for _, c := range cs {
		s = append(s, string(c))
	}
	return strings.Join(s, ", ")
}
