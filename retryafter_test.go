package acemq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport/memory"
)

// retryAfterPolicy's rungs are 40s, 80s and 160s (all at or above the
// threshold of 30s); no jitter, so that a consumer wait is the one asked.
var retryAfterPolicy = acemq.Exponential(4, 40*time.Second, 160*time.Second).WithJitter(0)

// retryAfterHandler asks, on a message's first attempt, for the wait its
// item's N names in seconds, and accepts the second.
func retryAfterHandler(_ context.Context, m acemq.Message[item]) acemq.Decision {
	if m.Envelope.Attempt == 1 {
		return acemq.RetryAfter(time.Duration(m.Body.N)*time.Second, errors.New("503 Service Unavailable"))
	}
	return acemq.Accept()
}

// RetryAfter(90s) on a ladder of 40s/80s/160s waits on the 160s rung (read
// there, not waited for); RetryAfter(5s) waits in the consumer, 5s.
func TestRetryAfterOnMemory(t *testing.T) {
	b := acemqtest.NewBroker(t)
	waits := eventsOf(acemq.EventWaitStarted)
	conn := b.Connect(t, acemq.WithObserver(waits))
	declareClassic(t, conn, "orders")
	rungHolds := func(rung string) []acemq.Envelope {
		var envs []acemq.Envelope
		for _, m := range b.Messages(t, rung) {
			envs = append(envs, m.Envelope)
		}
		return envs
	}
	c := retryAfter(t, conn, "orders", waits, rungHolds, b.Advance)
	b.Advance(160 * time.Second)
	acemqtest.WaitFor(t, c, "the message back from the 160s rung", func(s acemq.Stats) bool { return s.Accepted == 2 })
}

// On RabbitMQ, with the consumer's waits on a manual clock.
func TestRetryAfter(t *testing.T) {
	clock := memory.NewManualClock(time.Now())
	waits := eventsOf(acemq.EventWaitStarted)
	conn := connect(t, acemq.WithClock(clock), acemq.WithObserver(waits))
	q := testQueue(t, conn, retryAfterPolicy)
	rungHolds := func(rung string) []acemq.Envelope {
		if depth(t, conn, rung) == 0 {
			return nil
		}
		d, ok, err := conn.Transport().Get(context.Background(), rung)
		if err != nil || !ok {
			t.Fatalf("reading %s: %v, %v", rung, ok, err)
		}
		defer func() { _ = d.Nack(true) }()
		return []acemq.Envelope{acemq.ReadEnvelope(d.Message)}
	}
	retryAfter(t, conn, q, waits, rungHolds, clock.Advance)
}

// retryAfter publishes a message asking for 90s, which lands on the 160s
// rung with attempt 2, and one asking for 5s, which waits 5s in the
// consumer and is accepted on its second attempt.
func retryAfter(t *testing.T, conn *acemq.Conn, q string, waits *events, rungHolds func(string) []acemq.Envelope, advance func(time.Duration)) *acemq.Consumer {
	t.Helper()
	c := consume(t, conn, q, retryAfterHandler, acemq.WithPolicy(retryAfterPolicy))
	rung := func(d time.Duration) string { return contract.RungQueue(q, d, contract.DefaultRungKind) }

	publish(t, conn, q, item{N: 90})
	acemqtest.WaitFor(t, c, "the retry on a rung", func(s acemq.Stats) bool { return s.RetriedOnRung == 1 })
	if on := rungHolds(rung(160 * time.Second)); len(on) != 1 || on[0].Attempt != 2 {
		t.Errorf("the 160s rung holds %+v, want the message with attempt 2", on)
	}
	for _, d := range []time.Duration{40 * time.Second, 80 * time.Second} {
		if on := rungHolds(rung(d)); len(on) != 0 {
			t.Errorf("the %s rung holds %+v", d, on)
		}
	}

	publish(t, conn, q, item{N: 5})
	acemqtest.WaitFor(t, c, "the wait in the consumer", func(s acemq.Stats) bool { return s.Waiting == 1 })
	if ev := waits.next(t); ev.Delay != 5*time.Second || ev.Class != contract.ReasonRetry {
		t.Errorf("the wait started is %+v, want 5s", ev)
	}
	advance(5 * time.Second)
	acemqtest.WaitFor(t, c, "the second attempt accepted", func(s acemq.Stats) bool {
		return s.RetriedInConsumer == 1 && s.Accepted == 1 && s.Waiting == 0
	})
	return c
}
