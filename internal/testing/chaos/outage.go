package chaos

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/transport"
)

// The outage scenario (issue 29): a steady load through a consumer whose
// dependency fails for a while (a switch in the handler, not a broker
// fault), with a circuit breaker or without. Without one, every message the
// outage reaches spends its attempts on the ladder and the first ones to run
// out are dead-lettered; with one, the consumer pauses within the first
// failures, the messages wait on the queue with their attempts unspent, and
// it drains once the dependency is back.

// OutagePolicy is the consumer's retry policy in the outage scenario, as a
// service would write it: waits of 1s, 2s, 4s and 8s on rungs, then Q.dlq;
// 15s from the first failure to the dead letter.
const OutagePolicy = "exponential(5, 1s, 8s).waitInBrokerFrom(1s)"

// errOutage is the dependency's failure; the dead letters it caused are
// those whose reason holds its text.
var errOutage = errors.New("the dependency is down (outage)")

// badEvery: every badEvery-th message is the message's own fault (Reject),
// dead-lettered with or without an outage, and never counted by a breaker.
const badEvery = 50

// OutageConfig is one run of the outage scenario.
type OutageConfig struct {
	URL   string
	Queue string // declared by the run, deleted after it
	// Rate is how many messages are published per second (default 50).
	Rate int
	// Before, Outage and After: the load runs Before the dependency fails,
	// for the Outage, and After it is back.
	Before, Outage, After time.Duration
	// Policy is the consumer's retry policy (default OutagePolicy).
	Policy string
	// Breaker is the consumer's circuit breaker; nil for none.
	Breaker *acemq.CircuitBreaker
	// Concurrency of the consumer (default 4); each call of the dependency
	// takes Work (default 5ms).
	Concurrency int
	Work        time.Duration
	// Drain bounds the wait, once the load ends, for every message to be
	// settled (default 2m).
	Drain time.Duration
	// Broker names the broker in the report.
	Broker string
	Logf   func(format string, args ...any)
}

// OutageReport is what an outage run counted.
type OutageReport struct {
	Broker, Policy string
	Breaker        string // the breaker's settings, or "none"
	Rate           int
	Outage         time.Duration
	Published      int // confirmed
	Accepted       int // distinct numbers accepted
	DeadLettered   int // distinct numbers in Q.dlq
	// OutageDeadLettered were dead-lettered because of the outage (their
	// reason is its error); the rest are the messages' own faults.
	OutageDeadLettered int
	// Lost were confirmed and are neither accepted nor dead-lettered.
	Lost int
	// PausedAfter is the time from the outage's start to the breaker's
	// opening; 0 when it never opened.
	PausedAfter time.Duration
	// DrainedAfter is the time from the outage's end until every message
	// published before then was settled (accepted or dead-lettered).
	DrainedAfter time.Duration
	Transitions  []string // "+12.3s open: 10 failures in a row"
	Stats        acemq.Stats
}

func (r OutageReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "outage of %s on %s, %d/s, policy %s, breaker %s\n", r.Outage, r.Broker, r.Rate, r.Policy, r.Breaker)
	row := func(k string, v any) { fmt.Fprintf(&b, "  %-48s %v\n", k, v) }
	row("published (confirmed)", r.Published)
	row("accepted", r.Accepted)
	row("dead-lettered", r.DeadLettered)
	row("dead-lettered because of the outage", r.OutageDeadLettered)
	row("time to pause after the outage began", orNever(r.PausedAfter))
	row("time to drain after the outage ended", r.DrainedAfter.Round(10*time.Millisecond))
	row("lost", r.Lost)
	row("retries (in the consumer, on rungs)", fmt.Sprintf("%d, %d", r.Stats.RetriedInConsumer, r.Stats.RetriedOnRung))
	row("put back while open, handed back at a pause", fmt.Sprintf("%d, %d", r.Stats.PutBack, r.Stats.Requeued))
	for _, t := range r.Transitions {
		row("breaker", t)
	}
	return b.String()
}

// describeBreaker says what b does, its zero fields at their defaults.
func describeBreaker(b acemq.CircuitBreaker) string {
	d := acemq.DefaultCircuitBreaker()
	ratio := fmt.Sprintf("%g of at least %d calls in %s", or(b.FailureRatio, d.FailureRatio), or(b.MinCalls, d.MinCalls), or(b.Window, d.Window))
	return fmt.Sprintf("%s or %d failures in a row, cool-down %s", ratio, or(b.ConsecutiveFailures, d.ConsecutiveFailures), or(b.CoolDown, d.CoolDown))
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func orNever(d time.Duration) string {
	if d == 0 {
		return "never"
	}
	return d.Round(10 * time.Millisecond).String()
}

// outageRun is the state of one run.
type outageRun struct {
	acemq.NopObserver
	cfg  OutageConfig
	down atomic.Bool

	mu          sync.Mutex
	start       time.Time
	published   map[int]time.Time // confirmed numbers, when
	settled     map[int]time.Time // accepted or dead-lettered, the first time
	accepted    map[int]bool
	transitions []string
	opened      time.Time
}

// RunOutage runs the outage scenario once. An error means the harness could
// not run; what it counted is in the report.
func RunOutage(ctx context.Context, cfg OutageConfig) (rep OutageReport, err error) {
	if cfg.Rate <= 0 {
		cfg.Rate = 50
	}
	if cfg.Policy == "" {
		cfg.Policy = OutagePolicy
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.Work <= 0 {
		cfg.Work = 5 * time.Millisecond
	}
	if cfg.Drain <= 0 {
		cfg.Drain = 2 * time.Minute
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	policy, err := acemq.ParsePolicy(cfg.Policy)
	if err != nil {
		return rep, err
	}
	r := &outageRun{cfg: cfg, published: map[int]time.Time{}, settled: map[int]time.Time{}, accepted: map[int]bool{}}
	rep = OutageReport{Broker: cfg.Broker, Policy: cfg.Policy, Breaker: "none", Rate: cfg.Rate, Outage: cfg.Outage}
	conn, err := acemq.Connect(ctx, cfg.URL, acemq.WithObserver(r), acemq.WithConnectionName(cfg.Queue))
	if err != nil {
		return rep, err
	}
	defer conn.Close()
	defer r.cleanup(conn, policy)
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: cfg.Queue, Retry: &policy}}}).Apply(ctx, conn); err != nil {
		return rep, err
	}
	opts := []acemq.ConsumeOption{acemq.WithPolicy(policy), acemq.WithConcurrency(cfg.Concurrency)}
	if cfg.Breaker != nil {
		opts = append(opts, acemq.WithCircuitBreaker(*cfg.Breaker))
		rep.Breaker = describeBreaker(*cfg.Breaker)
	}
	consumer, err := acemq.Consume(ctx, conn, cfg.Queue, r.handle, opts...)
	if err != nil {
		return rep, err
	}
	r.start = time.Now()
	outageStart, outageEnd, err := r.load(ctx, conn)
	if err != nil {
		return rep, err
	}
	drained := r.waitSettled(ctx)
	rep.Stats = consumer.Stats()
	if _, err := consumer.Close(ctx); err != nil {
		cfg.Logf("outage: closing the consumer: %v", err)
	}
	dead, err := r.countDeadLetters(ctx, conn, &rep)
	if err != nil {
		return rep, err
	}
	r.report(&rep, dead, outageStart, outageEnd)
	if !drained {
		return rep, fmt.Errorf("not every message was settled within %s of the load's end:\n%s", cfg.Drain, rep)
	}
	return rep, nil
}

// handle is the consumer's handler: the dependency's call fails during the
// outage; a bad message is rejected whatever the dependency does.
func (r *outageRun) handle(_ context.Context, m acemq.Message[outageMessage]) acemq.Decision {
	time.Sleep(r.cfg.Work) // the dependency's call
	switch {
	case r.down.Load():
		return acemq.Retry(errOutage)
	case m.Body.N%badEvery == badEvery-1:
		return acemq.Reject(fmt.Errorf("message %d is malformed", m.Body.N))
	}
	return acemq.Accept()
}

type outageMessage struct {
	N int `json:"n"`
}

// load publishes at the rate for Before+Outage+After, each message
// confirmed before the next, with the dependency down during the Outage.
func (r *outageRun) load(ctx context.Context, conn *acemq.Conn) (outageStart, outageEnd time.Time, err error) {
	pub, err := acemq.NewPublisher[outageMessage](conn, "")
	if err != nil {
		return outageStart, outageEnd, err
	}
	tick := time.NewTicker(time.Second / time.Duration(r.cfg.Rate))
	defer tick.Stop()
	total := r.cfg.Before + r.cfg.Outage + r.cfg.After
	for n := 0; time.Since(r.start) < total; n++ {
		switch since := time.Since(r.start); {
		case outageStart.IsZero() && since >= r.cfg.Before:
			outageStart = time.Now()
			r.down.Store(true)
			r.cfg.Logf("outage: the dependency is down")
		case outageEnd.IsZero() && since >= r.cfg.Before+r.cfg.Outage:
			outageEnd = time.Now()
			r.down.Store(false)
			r.cfg.Logf("outage: the dependency is back")
		}
		<-tick.C
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := pub.Publish(pctx, r.cfg.Queue, outageMessage{N: n}, acemq.WithMessageID(outageID(n)))
		cancel()
		if err != nil {
			r.cfg.Logf("outage: publishing %d: %v (not counted)", n, err)
			continue
		}
		r.mu.Lock()
		r.published[n] = time.Now()
		r.mu.Unlock()
	}
	if outageEnd.IsZero() { // no After: the outage ends with the load
		outageEnd = time.Now()
		r.down.Store(false)
	}
	return outageStart, outageEnd, nil
}

func outageID(n int) string { return "outage-" + strconv.Itoa(n) }

func outageNumber(id string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "outage-"))
	return n, err == nil && strings.HasPrefix(id, "outage-")
}

// waitSettled waits, up to Drain, until every confirmed message was
// settled; false if some were not.
func (r *outageRun) waitSettled(ctx context.Context) bool {
	deadline := time.Now().Add(r.cfg.Drain)
	for time.Now().Before(deadline) {
		if r.unsettled() == 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return r.unsettled() == 0
}

func (r *outageRun) unsettled() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for p := range r.published {
		if r.settled[p].IsZero() {
			n++
		}
	}
	return n
}

// DeliveryEnd notes when each message was accepted or dead-lettered.
func (r *outageRun) DeliveryEnd(_ context.Context, d *acemq.DeliveryInfo, s acemq.SettleResult) {
	n, ok := outageNumber(d.MessageID)
	if !ok || (s.Outcome != contract.Accepted && s.Outcome != contract.DeadLettered) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.settled[n].IsZero() {
		r.settled[n] = time.Now()
	}
	if s.Outcome == contract.Accepted {
		r.accepted[n] = true
	}
}

// Event notes the breaker's transitions.
func (r *outageRun) Event(e acemq.Event) {
	if e.Kind != acemq.EventBreakerChanged || e.Queue != r.cfg.Queue {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if e.Breaker == acemq.BreakerOpen && r.opened.IsZero() {
		r.opened = now
	}
	r.transitions = append(r.transitions, fmt.Sprintf("+%.1fs %s: %s", now.Sub(r.start).Seconds(), e.Breaker, e.Reason))
	r.cfg.Logf("outage: breaker %s: %s", e.Breaker, e.Reason)
}

// countDeadLetters drains Q.dlq, counting each number once, and those
// dead-lettered because of the outage; it says which were there.
func (r *outageRun) countDeadLetters(ctx context.Context, conn *acemq.Conn, rep *OutageReport) (map[int]bool, error) {
	tr := conn.Transport()
	dead, outage := map[int]bool{}, map[int]bool{}
	for {
		gctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		d, ok, err := tr.Get(gctx, contract.DeadLetterQueue(r.cfg.Queue))
		cancel()
		switch {
		case errors.Is(err, transport.ErrNotFound):
			return dead, nil
		case err != nil:
			return dead, fmt.Errorf("reading %s: %w", contract.DeadLetterQueue(r.cfg.Queue), err)
		case !ok:
			rep.DeadLettered, rep.OutageDeadLettered = len(dead), len(outage)
			return dead, nil
		}
		if err := d.Ack(); err != nil {
			return dead, err
		}
		n, ok := outageNumber(d.MessageID)
		if !ok {
			continue
		}
		dead[n] = true
		if strings.Contains(acemq.ReadEnvelope(d.Message).Error, errOutage.Error()) {
			outage[n] = true
		}
	}
}

// report fills in what the run's notes say.
func (r *outageRun) report(rep *OutageReport, dead map[int]bool, outageStart, outageEnd time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep.Published, rep.Accepted, rep.Transitions = len(r.published), len(r.accepted), r.transitions
	for n, at := range r.published {
		if !r.accepted[n] && !dead[n] {
			rep.Lost++
		}
		if at.Before(outageEnd) && r.settled[n].Sub(outageEnd) > rep.DrainedAfter {
			rep.DrainedAfter = r.settled[n].Sub(outageEnd)
		}
	}
	if !r.opened.IsZero() {
		rep.PausedAfter = r.opened.Sub(outageStart)
	}
}

// cleanup deletes the run's queues.
func (r *outageRun) cleanup(conn *acemq.Conn, policy acemq.RetryPolicy) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	queues := []string{r.cfg.Queue, contract.DeadLetterQueue(r.cfg.Queue), contract.ParkedQueue(r.cfg.Queue)}
	if ladder, err := retry.NewLadder(r.cfg.Queue, policy, ""); err == nil {
		queues = append(queues, ladder.Queues()...)
	}
	for _, q := range queues {
		if _, err := conn.Transport().DeleteQueue(ctx, q); err != nil && !errors.Is(err, transport.ErrNotFound) {
			r.cfg.Logf("outage: deleting %s: %v", q, err)
		}
	}
}
