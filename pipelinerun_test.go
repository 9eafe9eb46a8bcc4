package acemq_test

import (
	"context"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
)

// runRecorder is a PipelineObserver noting the runs it is told of.
type runRecorder struct {
	acemq.NopObserver
	runs []acemq.PipelineRun
}

func (r *runRecorder) PipelineRunEnd(_ context.Context, run acemq.PipelineRun) {
	r.runs = append(r.runs, run)
}

// Conn.ObservePipelineRun tells the Conn's Observer when it is a
// PipelineObserver, and Observers tells those of its members that are,
// passing over the others.
func TestObserversTellPipelineRuns(t *testing.T) {
	a, b := &runRecorder{}, &runRecorder{}
	conn := acemqtest.NewBroker(t).Connect(t, acemq.WithObserver(acemq.Observers(a, acemq.NopObserver{}, b)))
	run := acemq.PipelineRun{Pipeline: "orders", Step: "store", Outcome: contract.TelemetryCompleted, MessageID: "m-1"}
	conn.ObservePipelineRun(t.Context(), run)
	for i, r := range []*runRecorder{a, b} {
		if len(r.runs) != 1 || r.runs[0] != run {
			t.Errorf("observer %d was told %+v, want %+v", i, r.runs, run)
		}
	}
	// An Observer that is no PipelineObserver is not told, and nothing fails.
	acemqtest.NewBroker(t).Connect(t, acemq.WithObserver(acemq.NopObserver{})).ObservePipelineRun(t.Context(), run)
}
