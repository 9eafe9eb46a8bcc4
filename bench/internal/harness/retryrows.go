package harness

import (
	"context"
	"time"

	"github.com/acemq-go/acemq/contract"
)

// retryInConsumer are RetryInConsumer's contenders: raw (nack and requeue,
// not an equivalent) and raw+envelope first, then raw+retry, the baseline
// every other contender's ratios divide by when it runs.
func (r *Runner) retryInConsumer(n int) []contender {
	cs := r.contenders(func(i Implementation) run {
		return timed(func(ctx context.Context, q string) error { return i.RetryInConsumer(ctx, q, n) })
	})
	if r.RawRetry == nil {
		return cs
	}
	out := make([]contender, 0, len(cs)+1)
	for _, c := range cs {
		if c.name == r.AceMQ.Name() {
			out = append(out, contender{name: r.RawRetry.Name(), baseline: "", preload: r.RawRetry.Preloaded,
				run: timed(func(ctx context.Context, q string) error { return r.RawRetry.RetryInConsumer(ctx, q, n) })})
		}
		if c.name != r.Raw.Name() && (r.RawEnvelope == nil || c.name != r.RawEnvelope.Name()) {
			c.baseline = r.RawRetry.Name()
		}
		out = append(out, c)
	}
	return out
}

// rungBaseline is the row AceMQ's rung row of kind divides by: raw+retry
// on a TTL queue of that kind when it runs, else (as before raw+retry)
// AceMQ's contract row.
func (r *Runner) rungBaseline(kind contract.RungKind) string {
	switch {
	case r.RawRetry == nil:
		return AceMQContract
	case kind == contract.AtLeastOnceRungs:
		return RawRetryQuorumTTL
	}
	return RawRetryClassicTTL
}

// rawRetryRungs are RungKinds' raw+retry contenders: a preloaded quorum
// queue consumed as AceMQ consumes it, each first attempt republished,
// confirmed, to a TTL queue of each kind that dead-letters home, then
// acked.
func (r *Runner) rawRetryRungs(n int) []contender {
	if r.RawRetry == nil {
		return nil
	}
	var cs []contender
	for _, k := range []struct {
		name string
		kind contract.RungKind
	}{{RawRetryClassicTTL, contract.ContractRungs}, {RawRetryQuorumTTL, contract.AtLeastOnceRungs}} {
		cs = append(cs, contender{name: k.name, baseline: RawRetryClassicTTL, preload: r.RawRetry.Preloaded,
			run: func(ctx context.Context, q string) ([]time.Duration, error) {
				holding := q + ".ttl"
				if err := r.Broker.DeclareQueue(holding, TTLQueueArgs(k.kind, q, rungWait)); err != nil {
					return nil, err
				}
				defer func() { _ = r.Broker.DeleteScenarioQueues(holding) }()
				t, err := r.RawRetry.RetryOnTTLQueue(ctx, q, holding, n, rungWait)
				r.logConfirms(k.name, "the handler's failure", t)
				return t.Late, err
			}})
	}
	return cs
}
