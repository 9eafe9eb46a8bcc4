package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/acemq-go/acemq/bench/internal/stats"
)

// OpenLoop is the open-loop latency scenario, run at each rate of
// OpenLoopOptions (rows named by OpenLoopAt): messages offered at a fixed
// rate to a plan (see plan) by one publisher, consumed in the same process
// at concurrency 8 (prefetch 100); each one's latency is its handler's
// start against the time the plan had it due, so that a system that
// cannot keep up shows its queueing, as the family's workloads tool
// measures it.
const OpenLoop = "open-loop"

func init() { Scenarios = append(Scenarios, OpenLoop) }

// OpenLoopAt names the open-loop scenario's rows at rate msgs/s.
func OpenLoopAt(rate float64) string { return fmt.Sprintf("%s %g/s", OpenLoop, rate) }

// openLoopConcurrency is the open-loop consumer's handlers at once.
const openLoopConcurrency = 8

// OpenLoopOptions size the open-loop scenario.
type OpenLoopOptions struct {
	// Rates are the rates offered (msgs/s), one run of each per round.
	Rates []float64
	// Duration is how long each run offers its rate.
	Duration time.Duration
}

// openLooper is an implementation in the open-loop scenario: it consumes
// queue, telling a of each message its handler gets, and, once its
// consumer is ready, begins a's plan and publishes the plan's messages to
// queue (confirmed, persistent, mandatory), telling a of each send; it
// returns once every message arrived or a.wait gave up on the rest.
type openLooper interface {
	Name() string
	OpenLoop(ctx context.Context, queue string, a *arrivals) error
}

// OpenLoop runs the open-loop scenario at each rate of o: raw,
// raw+envelope and acemq in turn, round after round, each run on a fresh
// queue deleted after it.
func (r *Runner) OpenLoop(ctx context.Context, o OpenLoopOptions) []Series {
	impls := []openLooper{r.Raw}
	if r.RawEnvelope != nil {
		impls = append(impls, r.RawEnvelope)
	}
	impls = append(impls, r.AceMQ)
	if r.runID == "" { // Run names the queues of its run; OpenLoop may run alone
		r.runID = time.Now().UTC().Format("150405")
	}
	var all []Series
	for _, rate := range o.Rates {
		name := OpenLoopAt(rate)
		n := int(rate * o.Duration.Seconds())
		series := make([]Series, len(impls))
		for i, impl := range impls {
			series[i] = Series{Scenario: name, Implementation: impl.Name(), Messages: n, Offered: rate}
		}
		for round := 1; round <= r.Options.Rounds; round++ {
			for i, impl := range impls {
				queue := fmt.Sprintf("acemq-bench.%s.%s.%s.%d", r.runID, slug(name), slug(impl.Name()), round)
				s, err := r.openLoopOnce(ctx, queue, rate, n, impl)
				if err != nil {
					series[i].Errors = append(series[i].Errors, fmt.Sprintf("round %d: %v", round, err))
					fmt.Fprintf(r.Log, "%-28s %-12s round %d: FAILED: %v\n", name, impl.Name(), round, err)
					continue
				}
				s.Round = round
				series[i].Samples = append(series[i].Samples, s)
				fmt.Fprintf(r.Log, "%-28s %-12s round %d: %d of %d arrived; latency p50 %.1fms, p99 %.1fms, max %.1fms; send lag p99 %.1fms\n",
					name, impl.Name(), round, len(s.Late), n, ms(stats.Percentile(s.Late, 50)), ms(stats.Percentile(s.Late, 99)),
					ms(stats.Percentile(s.Late, 100)), ms(stats.Percentile(s.SendLag, 99)))
			}
		}
		all = append(all, series...)
	}
	return all
}

// openLoopOnce is one run of impl at rate on a fresh queue: its time runs
// from the consumer's start to the last arrival.
func (r *Runner) openLoopOnce(ctx context.Context, queue string, rate float64, n int, impl openLooper) (s Sample, err error) {
	if err := r.Broker.DeclareQueue(queue, nil); err != nil {
		return s, err
	}
	defer func() {
		if delErr := r.Broker.DeleteScenarioQueues(queue); delErr != nil && err == nil {
			err = delErr
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, r.Options.Timeout)
	defer cancel()
	a := newArrivals(rate, n)
	stop := measure()
	err = impl.OpenLoop(ctx, queue, a)
	s = stop()
	s.Late, s.SendLag = a.results()
	return s, err
}
