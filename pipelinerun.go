package acemq

import (
	"context"
	"time"

	"github.com/acemq-go/acemq/contract"
)

// PipelineObserver is an Observer that is told of pipeline runs (package
// pipeline) as they end: a Conn's Observer that implements it is told
// (Conn.ObservePipelineRun); Observers tells those of its members that do.
type PipelineObserver interface {
	// PipelineRunEnd is called when a run ends at a step consumed on the
	// Conn, in that step's handler (its context is the delivery's),
	// before the delivery is acked: a delivery whose ack fails comes
	// again and may tell of its run twice.
	PipelineRunEnd(ctx context.Context, r PipelineRun)
}

// PipelineRun is a pipeline run that has ended at a step of this process.
// Its steps may have run in other processes: what is known of its start is
// what its message carries.
type PipelineRun struct {
	Pipeline string
	// Step is the step it ended at.
	Step string
	// Outcome is contract.TelemetryCompleted (its last step done) or
	// contract.TelemetryEndedEarly (a step ended it before the last).
	Outcome contract.TelemetryOutcome
	// Duration is from the run's start to its end: from the message's
	// first-seen time (x-acemq-first-seen, written when the run started
	// and kept from step to step, retries and waits included), so measured
	// on two clocks when the run started in another process; 0 when the
	// message carries none, or the other clock is ahead.
	Duration  time.Duration
	MessageID string
}

// ObservePipelineRun tells the Conn's Observer, when it is a
// PipelineObserver, that a pipeline run ended. For package pipeline.
func (c *Conn) ObservePipelineRun(ctx context.Context, r PipelineRun) {
	if po, ok := c.observer.(PipelineObserver); ok {
		po.PipelineRunEnd(ctx, r)
	}
}

func (os observers) PipelineRunEnd(ctx context.Context, r PipelineRun) {
	for _, o := range os {
		if po, ok := o.(PipelineObserver); ok {
			po.PipelineRunEnd(ctx, r)
		}
	}
}
