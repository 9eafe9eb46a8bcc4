package harness

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/schedule"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// The delayed-send scenarios (package schedule): n messages published
// with PublishIn, moved over the scheduler's rungs by a forwarder and
// consumed from the scenario's queue; lateness is each arrival against its
// due time, negative when it came early (the rule delivers with under a
// second left).
const (
	DelayedSend1s  = "delayed send 1s"
	DelayedSend90s = "delayed send 90s"
	DelayedSend1h  = "delayed send 1h (memory://, moved clock)"
	// DelayedSend1sPaced200 and DelayedSend1sPaced1000 offer the 1s delays
	// at a fixed rate, where DelayedSend1s sends them as fast as eight
	// publishers can (2,000 due within about a third of a second): the
	// lateness of a delay, not of a burst's backlog.
	DelayedSend1sPaced200  = "delayed send 1s (paced, 200/s)"
	DelayedSend1sPaced1000 = "delayed send 1s (paced, 1000/s)"
)

// delayedRounds bounds the rounds of the 90s scenario: each one is a
// minute and a half of waiting.
const delayedRounds = 2

// DelayedSend publishes n messages to queue with PublishIn(delay), eight
// publishers at once, on a scheduler exchange of the run's own
// (<queue>.schedule, deleted with its queues afterwards), forwarded by
// schedule's defaults, and returns how late each arrived.
func (a *AceMQ) DelayedSend(ctx context.Context, b *Broker, queue string, n int, delay time.Duration) ([]time.Duration, error) {
	exchange := queue + ".schedule"
	defer func() { _ = b.deleteSchedule(exchange) }()
	return delayedSend(ctx, a.conn, transport.SystemClock, nil, 0, exchange, queue, n, delay, nil)
}

// DelayedSendPaced is DelayedSend offering the messages at rate a second
// to a plan; it also returns how far behind its plan each send started
// (the generator's lag).
func (a *AceMQ) DelayedSendPaced(ctx context.Context, b *Broker, queue string, n int, delay time.Duration, rate float64) (late, lag []time.Duration, err error) {
	exchange := queue + ".schedule"
	defer func() { _ = b.deleteSchedule(exchange) }()
	lag = make([]time.Duration, n)
	late, err = delayedSend(ctx, a.conn, transport.SystemClock, nil, rate, exchange, queue, n, delay, lag)
	return late, lag, err
}

// DelayedSendOnMemory is DelayedSend on a memory:// broker of its own on a
// manual clock, moved a second at a time, each step only once every
// message due by then has arrived: a delay of an hour takes no hour, and
// the lateness (on that clock) is what the rule and the rungs add, the
// broker's and the forwarder's work taking no time on it. The messages are
// published a tenth at a time, a second apart.
func DelayedSendOnMemory(ctx context.Context, queue string, n int, delay time.Duration) ([]time.Duration, error) {
	clock := memory.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	broker := memory.NewBroker(memory.WithClock(clock))
	defer broker.Close()
	conn, err := acemq.New(broker.Connect(), acemq.WithClock(clock))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	q := transport.Queue{Name: queue, Type: transport.Classic, Durable: true}
	if err := conn.Transport().DeclareQueue(ctx, q); err != nil {
		return nil, err
	}
	return delayedSend(ctx, conn, clock, clock, 0, contract.ScheduleExchange, queue, n, delay, nil)
}

// delayedSend runs a delayed-send scenario on conn: moved, when it is
// not nil, is the clock to move (a second at a time) until every message
// has arrived; rate, when above 0, paces the sends (see publishPaced),
// each one's lag written to lag.
func delayedSend(ctx context.Context, conn *acemq.Conn, clock transport.Clock, moved *memory.ManualClock, rate float64, exchange, queue string, n int, delay time.Duration, lag []time.Duration) ([]time.Duration, error) {
	sched, err := schedule.New(ctx, conn, schedule.WithExchange(exchange), schedule.WithClock(clock))
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	due := make([]time.Time, n)
	late := make([]time.Duration, 0, n)
	finished := newCountdown(n)
	consumer, err := acemq.Consume(ctx, conn, queue, func(_ context.Context, m acemq.Message[Payload]) acemq.Decision {
		now := clock.Now()
		mu.Lock()
		defer mu.Unlock()
		if seq := m.Body.Seq; seq >= 0 && seq < n && m.Envelope.Type == contract.ScheduledMessageType {
			late = append(late, now.Sub(due[seq]))
			finished.Tick()
		}
		return acemq.Accept()
	}, acemq.WithPrefetch(prefetch), acemq.WithConcurrency(8))
	if err != nil {
		return nil, err
	}
	defer func() { _, _ = consumer.Close(context.WithoutCancel(ctx)) }()
	forwarder, err := sched.Forward(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _, _ = forwarder.Close(context.WithoutCancel(ctx)) }()

	if rate > 0 {
		err = publishPaced(ctx, sched, clock, rate, queue, delay, due, lag, &mu)
	} else {
		err = publishDelayed(ctx, sched, clock, moved, queue, n, delay, due, &mu)
	}
	if err != nil {
		return nil, err
	}
	if moved != nil {
		if err := moveUntilArrived(ctx, moved, n, due, &mu, func() int { mu.Lock(); defer mu.Unlock(); return len(late) }); err != nil {
			return nil, err
		}
	}
	if err := finished.Wait(ctx, nil); err != nil {
		return nil, err
	}
	if s := forwarder.Stats(); s.DeadLettered+s.Parked > 0 {
		return nil, fmt.Errorf("the forwarder set messages aside: %+v", s)
	}
	mu.Lock()
	defer mu.Unlock()
	return late, nil
}

// publishDelayed publishes the n messages, eight at a time in real time,
// or a tenth at a time a second apart on a moved clock, noting each one's
// due time before it is sent.
func publishDelayed(ctx context.Context, sched *schedule.Scheduler, clock transport.Clock, moved *memory.ManualClock, queue string, n int, delay time.Duration, due []time.Time, mu *sync.Mutex) error {
	send := func(seq int) error {
		mu.Lock()
		due[seq] = clock.Now().Add(delay)
		mu.Unlock()
		return sched.PublishIn(ctx, delay, "", queue, NewPayload(seq))
	}
	if moved != nil {
		batch := max(n/10, 1)
		for seq := range n {
			if seq > 0 && seq%batch == 0 {
				moved.Advance(time.Second)
			}
			if err := send(seq); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for seq := w; seq < n; seq += 8 {
				if err := send(seq); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// publishPaced publishes len(due) messages at rate a second to a plan
// (open loop: see plan), each send a goroutine of its own started on
// time, so that slow confirms do not hold the next sends back; lag[seq] is
// how late its send started. Its due time is its send's start + delay, as
// in publishDelayed: a due time from the plan would leave a late send
// under a second to wait, which the scheduler delivers at once instead of
// on the 1s rung; the lag is reported instead (logLag flags a generator
// that fell behind).
func publishPaced(ctx context.Context, sched *schedule.Scheduler, clock transport.Clock, rate float64, queue string, delay time.Duration, due []time.Time, lag []time.Duration, mu *sync.Mutex) error {
	p := newPlan(rate)
	errs := make(chan error, len(due))
	var wg sync.WaitGroup
	for seq := range due {
		planned, err := p.Wait(ctx, seq)
		if err != nil {
			break
		}
		wg.Go(func() {
			now := clock.Now()
			lag[seq] = now.Sub(planned)
			mu.Lock()
			due[seq] = now.Add(delay)
			mu.Unlock()
			if err := sched.PublishIn(ctx, delay, "", queue, NewPayload(seq)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// moveUntilArrived moves clock a second at a time; before each step, every
// message due by the clock's time must have arrived.
func moveUntilArrived(ctx context.Context, clock *memory.ManualClock, n int, due []time.Time, mu *sync.Mutex, arrived func() int) error {
	for {
		now := clock.Now()
		mu.Lock()
		owed := 0
		for _, d := range due {
			if !d.After(now) {
				owed++
			}
		}
		mu.Unlock()
		for arrived() < owed {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%d of the %d messages due by %v arrived: %w", arrived(), owed, now, ctx.Err())
			case <-time.After(time.Millisecond):
			}
		}
		if owed == n {
			return nil
		}
		clock.Advance(time.Second)
	}
}

// deleteSchedule deletes a scheduler's exchange and queues, the due
// queue's .dlq and .parked with them.
func (b *Broker) deleteSchedule(exchange string) error {
	ch, err := b.conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	due := exchange + contract.ScheduleDueSuffix
	queues := []string{due, contract.DeadLetterQueue(due), contract.ParkedQueue(due)}
	for _, d := range contract.ScheduleRungDelays() {
		queues = append(queues, contract.ScheduleRungQueue(exchange, d))
	}
	for _, q := range queues {
		if _, err := ch.QueueDelete(q, false, false, false); err != nil {
			return fmt.Errorf("deleting %s: %w", q, err)
		}
	}
	return ch.ExchangeDelete(exchange, false, false)
}
