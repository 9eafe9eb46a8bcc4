package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/slip"
)

// Consumer is the consumer of one step, with what it did with the runs
// besides the consumer's own Stats.
type Consumer struct {
	*acemq.Consumer
	forwarded, completed, ended, refused atomic.Int64
}

// RunStats counts what a step did with the runs it handled.
type RunStats struct {
	// Forwarded: sent on to the next step, confirmed.
	Forwarded int64
	// Completed: the last step was done.
	Completed int64
	// Ended: a step returned End before the last step.
	Ended int64
	// Refused: the message carried no slip, one that does not parse, or
	// one not at this step; dead-lettered.
	Refused int64
}

// Runs counts what the step did with the runs it handled.
func (c *Consumer) Runs() RunStats {
	return RunStats{Forwarded: c.forwarded.Load(), Completed: c.completed.Load(),
		Ended: c.ended.Load(), Refused: c.refused.Load()}
}

// Run consumes step's queue P.S with h (acemq.Consume: opts are the
// consumer's, its policy and ladder among them) until the Consumer is
// closed. h is an ordinary handler: it returns Next or End (this
// package's decisions) to go on, or the root's Retry, Reject or Park to
// fail; a plain acemq.Accept acks the message and sends nothing on (as for
// a duplicate an idempotency.Handler wrapped around the step absorbed),
// and OnFinish is not told. The step decodes with the pipeline's codec unless opts give
// acemq.WithCodec. The queue must exist (Declare).
func Run[T any](ctx context.Context, conn *acemq.Conn, p Pipeline, step string, h acemq.Handler[T], opts ...acemq.ConsumeOption) (*Consumer, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if !slices.Contains(p.Steps, step) {
		return nil, fmt.Errorf("pipeline %s: %w: it has no step %q (its steps: %q)", p.Name, ErrInvalidPipeline, step, p.Steps)
	}
	if h == nil {
		return nil, fmt.Errorf("pipeline %s: step %s: the handler is nil", p.Name, step)
	}
	c := &Consumer{}
	r := runner[T]{p: p, conn: conn, step: step, h: h, c: c}
	var err error
	// The step decodes with the pipeline's codec unless opts name another,
	// so that a step reads what the one before it wrote.
	opts = append([]acemq.ConsumeOption{acemq.WithCodec(p.codec())}, opts...)
	if c.Consumer, err = acemq.Consume(ctx, conn, p.Queue(step), r.handle, opts...); err != nil {
		return nil, fmt.Errorf("pipeline %s: step %s: %w", p.Name, step, err)
	}
	return c, nil
}

type runner[T any] struct {
	p    Pipeline
	conn *acemq.Conn
	step string
	h    acemq.Handler[T]
	c    *Consumer
}

func (r runner[T]) handle(ctx context.Context, m acemq.Message[T]) acemq.Decision {
	s, ok, err := slip.Read(m.Envelope)
	if err == nil && !ok {
		err = fmt.Errorf("the message carries no routing slip (neither %s nor %s)", contract.HeaderRoutingSlip, contract.HeaderRoute)
	}
	if err == nil {
		err = r.p.atStep(s, m.Envelope.Type, r.step)
	}
	if err != nil {
		r.c.refused.Add(1)
		return acemq.Retry(acemq.Fatal(fmt.Errorf("pipeline %s, step %s: %w", r.p.Name, r.step, err)))
	}
	var res outcome
	d := r.h(context.WithValue(ctx, slotKey{}, &res), m)
	switch {
	case d != acemq.Accept():
		return d // Retry, Reject, Park, or no decision: the consumer's to settle; nothing is sent on
	case res.kind == none:
		return d // accepted with nothing said of the run: acked, nothing sent on
	case res.kind == end && len(s.Remaining()) > 1:
		r.c.ended.Add(1)
		r.finish(ctx, Finished{Step: r.step, Early: true, Slip: s, Envelope: m.Envelope}, contract.TelemetryEndedEarly)
		return acemq.Accept()
	}
	// Next, or End at the last step, which completes the run.
	after := s.Advance(time.Now())
	if after.Complete() {
		var body []byte
		if res.body != nil {
			if body, err = r.p.codec().Marshal(res.body); err != nil {
				return acemq.Retry(acemq.Fatal(fmt.Errorf("pipeline %s, step %s: the body could not be encoded: %w", r.p.Name, r.step, err)))
			}
		}
		r.c.completed.Add(1)
		r.finish(ctx, Finished{Step: r.step, Slip: after, Envelope: m.Envelope, Body: body}, contract.TelemetryCompleted)
		return acemq.Accept()
	}
	if err := r.p.send(ctx, r.conn, onward(m.Envelope), res.body, after); err != nil {
		next, _ := after.Current()
		err = fmt.Errorf("pipeline %s, step %s: forwarding to %s (exchange %q, routing key %q): %w",
			r.p.Name, r.step, next.Name, next.Exchange, next.RoutingKey, err)
		if errors.Is(err, acemq.ErrUnroutable) {
			err = fmt.Errorf("%w (is the next step's queue declared?)", err)
		}
		return acemq.Retry(err)
	}
	r.c.forwarded.Add(1)
	return acemq.Accept()
}

// finish tells the Conn's Observer of the run's end (acemq.PipelineRun),
// and OnFinish.
func (r runner[T]) finish(ctx context.Context, f Finished, outcome contract.TelemetryOutcome) {
	took := f.Envelope.Age(time.Now())
	if took == acemq.UnknownAge {
		took = 0
	}
	r.conn.ObservePipelineRun(ctx, acemq.PipelineRun{Pipeline: r.p.Name, Step: r.step, Outcome: outcome,
		Duration: took, MessageID: f.Envelope.ID})
	if r.p.OnFinish != nil {
		r.p.OnFinish(ctx, f)
	}
}
