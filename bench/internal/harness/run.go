package harness

import (
	"context"
	"fmt"
	"io"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/bench/internal/stats"
	"github.com/acemq-go/acemq/contract"
)

// Scenario names, as they appear in the report.
const (
	PublishConfirmed = "publish-confirmed"
	ConsumeAck1      = "consume-ack (concurrency 1)"
	ConsumeAck8      = "consume-ack (concurrency 8)"
	RetryInConsumer  = "retry-in-consumer"
	RetryOnRung      = "retry-on-rung"
	PerMessageTTL    = "per-message TTL, one queue"
	RungKinds        = "rung kinds (quorum source)"
)

// The contenders of RungKinds; the at-least-once ones are compared with the
// contract (classic) one of their own kind of client in the same round.
const (
	AceMQContract    = "acemq contract"
	AceMQAtLeastOnce = "acemq at-least-once"
	RawClassicTTL    = "raw classic TTL queue"
	RawQuorumTTL     = "raw quorum TTL queue"
)

// Scenarios are every scenario's name, in report order.
var Scenarios = []string{PublishConfirmed, ConsumeAck1, ConsumeAck8, RetryInConsumer, RetryOnRung, PerMessageTTL, RungKinds,
	RequestReply1, RequestReply8, IdempotentConsume, Ordered, DelayedSend1s, DelayedSend1sPaced200, DelayedSend1sPaced1000, DelayedSend90s, DelayedSend1h}

// Options size a run.
type Options struct {
	// Messages per run of the publish, consume and retry-in-consumer scenarios.
	Messages int
	// RungMessages per run of retry-on-rung and its per-message TTL contrast.
	RungMessages int
	// KindMessages per run of the rung-kinds scenario.
	KindMessages int
	// Requests per run of the request-reply scenarios.
	Requests int
	// Rounds of each scenario; implementations alternate within a round.
	Rounds int
	// Timeout bounds one implementation's run of one scenario.
	Timeout time.Duration
	// Only, when set, runs just the scenarios named.
	Only map[string]bool
	// Quick leaves out the scenarios that take minutes whatever their
	// size (DelayedSend90s), unless Only names them.
	Quick bool
}

// Sample is one timed run.
type Sample struct {
	Round   int
	Elapsed time.Duration
	// Late is how late each message arrived, for the delayed scenarios (in
	// the open-loop scenario, each one that arrived: its latency).
	Late []time.Duration
	// SendLag is how far behind its plan each send of an open-loop run
	// started.
	SendLag []time.Duration
	// CPU and Allocs are what the harness's process spent on the run: CPU
	// time (user and system) and heap objects allocated.
	CPU    time.Duration
	Allocs uint64
}

// Series is every round of one scenario with one implementation.
type Series struct {
	Scenario       string
	Implementation string
	Messages       int
	// Baseline is the implementation of the same scenario whose run in the
	// same round this one's ratios divide by; "" is raw, when it runs.
	Baseline string
	Samples  []Sample
	Errors   []string

	// Offered is the rate (msgs/s) an open-loop scenario offered its
	// Messages at; 0 for the others.
	Offered float64
}

// Runner runs the scenarios: raw, AceMQ and Watermill in turn, round after
// round, each run on fresh queues that are deleted after it.
type Runner struct {
	Broker *Broker
	Raw    *Raw
	// RawEnvelope (raw amqp091-go with AceMQ's headers) may be nil.
	RawEnvelope *Raw
	// RawRetry (raw amqp091-go retrying as AceMQ does) is the baseline of
	// AceMQ's retry rows; nil leaves it out.
	RawRetry *RawRetry
	AceMQ    *AceMQ
	// AceMQObserved (AceMQ with both telemetry adapters) may be nil.
	AceMQObserved *AceMQ
	// AceMQRungs (NewAceMQClocked: its republishes to rungs timed) runs
	// AceMQ's half of RungKinds; nil leaves it out.
	AceMQRungs *AceMQ
	// Watermill may be nil to leave it out.
	Watermill *Watermill
	// IdempotencyPostgres is the PostgreSQL URL of IdempotentConsume's
	// PostgreSQL stores; "" leaves them out.
	IdempotencyPostgres string
	Options             Options
	// Log gets one line per run.
	Log   io.Writer
	runID string
}

// run is one timed run: it returns the lateness of each message when the
// scenario measures one.
type run func(ctx context.Context, queue string) ([]time.Duration, error)

type contender struct {
	name string
	run  run
	// preload makes the messages a consumer scenario starts from.
	preload func(seq int) (amqp.Publishing, error)
	// baseline names the contender this one is compared with ("" is raw).
	baseline string
}

// Run runs every scenario and returns its series in report order. A failed
// run is recorded in its series and the run goes on.
func (r *Runner) Run(ctx context.Context) []Series {
	r.runID = time.Now().UTC().Format("150405")
	n, rn, kn := r.Options.Messages, r.Options.RungMessages, r.Options.KindMessages
	var all []Series
	// The source queue is classic unless a scenario says otherwise.
	addOn := func(source amqp.Table, scenario string, messages int, preload bool, cs []contender) {
		if r.Options.Only != nil && !r.Options.Only[scenario] {
			return
		}
		all = append(all, r.scenario(ctx, scenario, messages, preload, source, cs)...)
	}
	add := func(scenario string, messages int, preload bool, cs []contender) {
		addOn(nil, scenario, messages, preload, cs)
	}
	add(PublishConfirmed, n, false, r.contenders(func(i Implementation) run {
		return timed(func(ctx context.Context, q string) error { return i.PublishConfirmed(ctx, q, n) })
	}))
	for _, c := range []struct {
		name        string
		concurrency int
	}{{ConsumeAck1, 1}, {ConsumeAck8, 8}} {
		add(c.name, n, true, r.contenders(func(i Implementation) run {
			return timed(func(ctx context.Context, q string) error { return i.ConsumeAck(ctx, q, n, c.concurrency) })
		}))
	}
	add(RetryInConsumer, n, true, r.retryInConsumer(n))
	add(RetryOnRung, rn, true, []contender{{"acemq", func(ctx context.Context, q string) ([]time.Duration, error) {
		return r.AceMQ.RetryOnRung(ctx, q, rn)
	}, r.AceMQ.Preloaded, ""}})
	add(PerMessageTTL, rn, false, []contender{{"raw", func(ctx context.Context, q string) ([]time.Duration, error) {
		// q is the target; the holding queue dead-letters into it.
		holding := q + ".holding"
		deadLetter := amqp.Table{contract.ArgDeadLetterExchange: "", contract.ArgDeadLetterRoutingKey: q}
		if err := r.Broker.DeclareQueue(holding, deadLetter); err != nil {
			return nil, err
		}
		defer func() { _ = r.Broker.DeleteScenarioQueues(holding) }()
		return r.Broker.PerMessageTTL(ctx, holding, q, rn, 5*rungWait, rungWait)
	}, nil, ""}})
	addOn(quorumQueue, RungKinds, kn, true, r.rungKinds(kn))
	add(RequestReply1, r.Options.Requests, false, r.requestReply(r.Options.Requests, 1))
	add(RequestReply8, r.Options.Requests, false, r.requestReply(r.Options.Requests, 8))
	add(IdempotentConsume, n, true, r.idempotent(n))
	add(Ordered, n, false, r.ordered(n))
	for _, d := range []struct {
		name  string
		delay time.Duration
	}{{DelayedSend1s, time.Second}, {DelayedSend90s, 90 * time.Second}} {
		if d.delay > time.Minute && r.Options.Quick && !r.Options.Only[d.name] {
			continue
		}
		add(d.name, rn, false, []contender{{"acemq", func(ctx context.Context, q string) ([]time.Duration, error) {
			late, err := r.AceMQ.DelayedSend(ctx, r.Broker, q, rn, d.delay)
			r.logEarliest(d.name, late)
			return late, err
		}, nil, ""}})
	}
	for _, p := range []struct {
		name string
		rate float64
	}{{DelayedSend1sPaced200, 200}, {DelayedSend1sPaced1000, 1000}} {
		add(p.name, rn, false, []contender{{"acemq", func(ctx context.Context, q string) ([]time.Duration, error) {
			late, lag, err := r.AceMQ.DelayedSendPaced(ctx, r.Broker, q, rn, time.Second, p.rate)
			r.logEarliest(p.name, late)
			r.logLag(p.name, lag)
			return late, err
		}, nil, ""}})
	}
	add(DelayedSend1h, rn, false, []contender{{"acemq", func(ctx context.Context, q string) ([]time.Duration, error) {
		late, err := DelayedSendOnMemory(ctx, q, rn, time.Hour)
		r.logEarliest(DelayedSend1h, late)
		return late, err
	}, nil, ""}})
	return all
}

// logEarliest logs how early the earliest message of a delayed-send run
// came (the table's lateness is its p50, p99 and worst).
func (r *Runner) logEarliest(name string, late []time.Duration) {
	if len(late) > 0 {
		fmt.Fprintf(r.Log, "%-28s acemq     earliest %.1fms against its due time\n", name, ms(stats.Percentile(late, 0)))
	}
}

// logLag logs how far behind its plan a paced run's generator sent.
func (r *Runner) logLag(name string, lag []time.Duration) {
	if len(lag) == 0 {
		return
	}
	p99 := stats.Percentile(lag, 99)
	verdict := "on plan"
	if p99 > BehindLimit {
		verdict = fmt.Sprintf("FELL BEHIND (p99 over %v): its lateness includes the generator's", BehindLimit)
	}
	fmt.Fprintf(r.Log, "%-28s acemq     send lag p99 %.1fms, max %.1fms: %s\n", name, ms(p99), ms(stats.Percentile(lag, 100)), verdict)
}

// rungKinds are RungKinds' contenders: AceMQ retrying on a rung of each
// kind, then raw publishing into a TTL queue of each kind that
// dead-letters to the (quorum) queue it consumes. Each returns the
// lateness against the publish's confirm + 1s, and logs how long the
// confirms took.
func (r *Runner) rungKinds(n int) []contender {
	var cs []contender
	if r.AceMQRungs != nil {
		for _, k := range []struct {
			name string
			kind contract.RungKind
		}{{AceMQContract, contract.ContractRungs}, {AceMQAtLeastOnce, contract.AtLeastOnceRungs}} {
			cs = append(cs, contender{name: k.name, baseline: r.rungBaseline(k.kind), preload: r.AceMQRungs.Preloaded,
				run: func(ctx context.Context, q string) ([]time.Duration, error) {
					t, err := r.AceMQRungs.RetryOnRungKind(ctx, q, n, k.kind)
					r.logConfirms(k.name, "the handler's failure", t)
					return t.Late, err
				}})
		}
	}
	for _, k := range []struct {
		name string
		kind contract.RungKind
	}{{RawClassicTTL, contract.ContractRungs}, {RawQuorumTTL, contract.AtLeastOnceRungs}} {
		cs = append(cs, contender{name: k.name, baseline: RawClassicTTL,
			run: func(ctx context.Context, q string) ([]time.Duration, error) {
				holding := q + ".ttl"
				if err := r.Broker.DeclareQueue(holding, TTLQueueArgs(k.kind, q, rungWait)); err != nil {
					return nil, err
				}
				defer func() { _ = r.Broker.DeleteScenarioQueues(holding) }()
				t, err := r.Raw.TTLQueueTrip(ctx, holding, q, n, rungWait)
				r.logConfirms(k.name, "the publish call", t)
				return t.Late, err
			}})
	}
	return append(cs, r.rawRetryRungs(n)...)
}

// logConfirms logs how long a run's publishes to the rung took to be
// confirmed, counted from since.
func (r *Runner) logConfirms(name, since string, t RungTrip) {
	if len(t.Confirm) == 0 {
		return
	}
	fmt.Fprintf(r.Log, "%-28s %-9s confirms of the publishes to the rung after %s: p50 %.1fms, p99 %.1fms\n", RungKinds, name, since,
		ms(stats.Percentile(t.Confirm, 50)), ms(stats.Percentile(t.Confirm, 99)))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// contenders are the implementations of this run, baseline first.
func (r *Runner) contenders(measure func(Implementation) run) []contender {
	impls := []Implementation{r.Raw}
	if r.RawEnvelope != nil {
		impls = append(impls, r.RawEnvelope)
	}
	impls = append(impls, r.AceMQ)
	if r.AceMQObserved != nil {
		impls = append(impls, r.AceMQObserved)
	}
	if r.Watermill != nil {
		impls = append(impls, r.Watermill)
	}
	cs := make([]contender, len(impls))
	for i, impl := range impls {
		cs[i] = contender{name: impl.Name(), run: measure(impl), preload: impl.Preloaded}
	}
	return cs
}

// timed adapts a scenario without lateness to run.
func timed(f func(ctx context.Context, queue string) error) run {
	return func(ctx context.Context, q string) ([]time.Duration, error) { return nil, f(ctx, q) }
}

// scenario runs rounds of cs, alternating them within each round so that
// a noisy minute hurts every contender alike.
func (r *Runner) scenario(ctx context.Context, name string, messages int, preload bool, source amqp.Table, cs []contender) []Series {
	series := make([]Series, len(cs))
	for i, c := range cs {
		series[i] = Series{Scenario: name, Implementation: c.name, Messages: messages, Baseline: c.baseline}
	}
	rounds := r.Options.Rounds
	if name == DelayedSend90s {
		rounds = min(rounds, delayedRounds)
	}
	for round := 1; round <= rounds; round++ {
		for i, c := range cs {
			queue := fmt.Sprintf("acemq-bench.%s.%s.%s.%d", r.runID, slug(name), slug(c.name), round)
			var load func(int) (amqp.Publishing, error)
			if preload {
				load = c.preload
			}
			s, err := r.once(ctx, queue, source, messages, load, labelled(name, c.name, c.run))
			if err != nil {
				series[i].Errors = append(series[i].Errors, fmt.Sprintf("round %d: %v", round, err))
				fmt.Fprintf(r.Log, "%-28s %-9s round %d: FAILED: %v\n", name, c.name, round, err)
				continue
			}
			s.Round = round
			series[i].Samples = append(series[i].Samples, s)
			fmt.Fprintf(r.Log, "%-28s %-9s round %d: %d messages in %.3fs\n", name, c.name, round, messages, s.Elapsed.Seconds())
		}
	}
	return series
}

// once declares queue with the arguments source (preloading it with
// messages made by preload, if any), times f and deletes the queue and
// AceMQ's companions again.
func (r *Runner) once(ctx context.Context, queue string, source amqp.Table, messages int, preload func(int) (amqp.Publishing, error), f run) (s Sample, err error) {
	if err := r.Broker.DeclareQueue(queue, source); err != nil {
		return s, err
	}
	defer func() {
		if delErr := r.Broker.DeleteScenarioQueues(queue); delErr != nil && err == nil {
			err = delErr
		}
	}()
	if preload != nil {
		if err := r.Broker.Preload(ctx, queue, messages, preload); err != nil {
			return s, fmt.Errorf("preloading: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, r.Options.Timeout)
	defer cancel()
	stop := measure()
	late, err := f(ctx, queue)
	s = stop()
	s.Late = late
	return s, err
}

// slug makes a scenario or contender name fit a queue name: lower-case
// letters, digits and dashes.
func slug(name string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
	}), "-")
}

// labelled runs f under the profiler labels scenario and contender, which
// the goroutines it starts inherit: go tool pprof -tagfocus
// contender=acemq shows one contender's own work (not its connection's
// frame reader, started at dial, nor a timer's callback, nor the
// scheduler's). In an execution trace, f's run is a region named
// "scenario / contender": the whole process's events between its start
// and end are that contender's, since contenders run one at a time.
func labelled(scenario, contender string, f run) run {
	return func(ctx context.Context, q string) (late []time.Duration, err error) {
		pprof.Do(ctx, pprof.Labels("scenario", scenario, "contender", contender), func(ctx context.Context) {
			trace.WithRegion(ctx, scenario+" / "+contender, func() {
				late, err = f(ctx, q)
			})
		})
		return late, err
	}
}
