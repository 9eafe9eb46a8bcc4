//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/schedule"
)

// Delayed send across a broker restart (package schedule, docs/scheduling.md).
const (
	scheduleMessages = 300
	scheduleDelay    = 90 * time.Second
	// scheduleRestartAt is when the node is stopped, after the publishes:
	// the messages wait on the 1m rung then, half-way to its expiry.
	scheduleRestartAt = 30 * time.Second
)

// TestChaosScheduleRestart publishes scheduleMessages messages to be
// delivered in 90s (each on the scheduler's 1m rung, then three 10s ones),
// stops the broker node cleanly and starts it again while they wait, and
// counts what arrives: any message missing fails it. The lateness of each
// arrival against its due time is reported. It restarts the node this
// process's environment names, so it needs CHAOS_RESTART=yes and a node of
// its own (make chaos-schedule).
func TestChaosScheduleRestart(t *testing.T) {
	url := brokertest.URL(t)
	if os.Getenv("CHAOS_RESTART") != "yes" {
		t.Fatal("the schedule restart scenario restarts the broker node: it needs CHAOS_RESTART=yes and a node of its own (make chaos-schedule)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := acemq.Connect(ctx, url, acemq.WithConnectionName(t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sched, err := schedule.New(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	// A quorum queue with its dead-letter half: the default a topology
	// declares.
	target := brokertest.UniqueName(t, "acemq.chaos.reminders")
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: target, DeadLetter: true}}}).Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, q := range []string{contract.DeadLetterQueue(target), contract.ParkedQueue(target)} {
			_, _ = conn.Transport().DeleteQueue(context.Background(), q)
		}
	})

	var mu sync.Mutex
	due := make(map[string]time.Time, scheduleMessages)
	arrived := map[string][]time.Time{}
	consumer, err := acemq.Consume(ctx, conn, target, func(_ context.Context, m acemq.Message[[]byte]) acemq.Decision {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		key := string(m.Body)
		arrived[key] = append(arrived[key], now)
		return acemq.Accept()
	}, acemq.WithPrefetch(100), acemq.WithConcurrency(4))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close(context.Background())
	forwarder, err := sched.Forward(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer forwarder.Close(context.Background())

	start := time.Now()
	for i := range scheduleMessages {
		key := fmt.Sprintf("reminder-%04d", i)
		mu.Lock()
		due[key] = time.Now().Add(scheduleDelay)
		mu.Unlock()
		if err := sched.PublishIn(ctx, scheduleDelay, "", target, []byte(key)); err != nil {
			t.Fatalf("publishing %s: %v", key, err)
		}
	}
	t.Logf("published %d messages due in %v in %v", scheduleMessages, scheduleDelay, time.Since(start).Round(time.Millisecond))

	select {
	case <-time.After(time.Until(start.Add(scheduleRestartAt))):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	down := time.Now()
	if err := restartBroker(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("node stopped %v after the first publish and started again in %v", down.Sub(start).Round(time.Second), time.Since(down).Round(time.Millisecond))

	// Every message, once, or the deadline: due plus a minute.
	deadline := time.After(time.Until(start.Add(scheduleDelay + time.Minute)))
	for {
		mu.Lock()
		n := len(arrived)
		mu.Unlock()
		if n == scheduleMessages {
			break
		}
		select {
		case <-deadline:
		case <-time.After(100 * time.Millisecond):
			continue
		}
		break
	}

	mu.Lock()
	defer mu.Unlock()
	var lost []string
	var late []time.Duration
	duplicates := 0
	for key, d := range due {
		times := arrived[key]
		if len(times) == 0 {
			lost = append(lost, key)
			continue
		}
		duplicates += len(times) - 1
		late = append(late, times[0].Sub(d))
	}
	slices.Sort(lost)
	slices.Sort(late)
	pct := func(p int) time.Duration {
		if len(late) == 0 {
			return 0
		}
		return late[min(len(late)-1, (len(late)*p+99)/100-1)].Round(time.Millisecond)
	}
	f := forwarder.Forwarded()
	s := forwarder.Stats()
	t.Logf("arrived %d of %d (%d twice or more), lost %d; lateness against the due time: earliest %v, p50 %v, p99 %v, worst %v; "+
		"forwarder: %d hops, %d delivered, %d retried in the consumer, %d dead-lettered, %d parked; %d connection recoveries",
		len(due)-len(lost), len(due), duplicates, len(lost), pct(1), pct(50), pct(99), pct(100),
		f.Hops, f.Delivered, s.RetriedInConsumer, s.DeadLettered, s.Parked, conn.Health(ctx).Recoveries)
	if len(lost) > 0 {
		t.Errorf("lost %d of %d scheduled messages across the restart: %v", len(lost), len(due), abbreviateKeys(lost))
	}
	if s.DeadLettered+s.Parked > 0 {
		t.Errorf("the forwarder set %d messages aside", s.DeadLettered+s.Parked)
	}
}

func abbreviateKeys(keys []string) []string {
	if len(keys) > 10 {
		return append(keys[:10:10], fmt.Sprintf("... and %d more", len(keys)-10))
	}
	return keys
}
