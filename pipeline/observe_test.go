package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/conntest"
	"github.com/acemq-go/acemq/pipeline"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// runs records the pipeline runs a Conn's Observer is told of.
type runs struct {
	acemq.NopObserver
	mu   sync.Mutex
	seen []acemq.PipelineRun
	more chan struct{}
}

func (r *runs) PipelineRunEnd(_ context.Context, run acemq.PipelineRun) {
	r.mu.Lock()
	r.seen = append(r.seen, run)
	r.mu.Unlock()
	r.more <- struct{}{}
}

func (r *runs) await(t *testing.T, n int) []acemq.PipelineRun {
	t.Helper()
	deadline := time.After(waitFor)
	for range n {
		select {
		case <-r.more:
		case <-deadline:
			t.Fatalf("%d of %d runs told in %v", len(r.seen), n, waitFor)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]acemq.PipelineRun(nil), r.seen...)
}

// A run that ends early and one that completes are told to the Conn's
// Observer (a PipelineObserver), with the step they ended at and the
// family's outcome, and no step forwarding a run tells of one. The
// duration runs from the message's first-seen time, which a run keeps
// from step to step: a run started an hour ago by another process (its
// x-acemq-first-seen an hour old) is an hour long and more.
func TestRunsToldToTheObserver(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		o := &runs{more: make(chan struct{}, 10)}
		conn, err := acemq.New(memory.NewBroker().Connect(), acemq.WithObserver(o))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		runsTold(t, conn, o, "orders")
	})
	t.Run("rabbitmq", func(t *testing.T) {
		o := &runs{more: make(chan struct{}, 10)}
		conn := conntest.Connect(t, brokertest.URL(t), t.Name(), acemq.WithObserver(o))
		runsTold(t, conn, o, brokertest.UniqueName(t, "pipeline"))
	})
}

func runsTold(t *testing.T, conn *acemq.Conn, o *runs, name string) {
	p := pipeline.Pipeline{Name: name, Steps: []string{"validate", "store"}}
	declare(t, conn, p)
	run(t, conn, p, "validate", func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
		if m.Body.FreeGift {
			return pipeline.End(ctx)
		}
		return pipeline.Next(ctx, m.Body)
	})
	run(t, conn, p, "store", func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
		return pipeline.Next(ctx, m.Body)
	})

	if err := p.Start(t.Context(), conn, Order{ID: "gift", FreeGift: true}, acemq.WithMessageID("gift")); err != nil {
		t.Fatal(err)
	}
	got := o.await(t, 1)[0]
	if got.Pipeline != name || got.Step != "validate" || got.Outcome != contract.TelemetryEndedEarly || got.MessageID != "gift" {
		t.Errorf("the run ended early was told as %+v", got)
	}

	// Started elsewhere an hour ago: its envelope says when.
	s, err := p.NewSlip()
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().Add(-time.Hour)
	env := acemq.Envelope{ID: "old", Type: p.Name, FirstSeen: started, ContentType: acemq.JSON.ContentType()}.Complete("validate", started)
	msg := transport.Message{Body: []byte(`{"id":"old"}`)}
	if err := env.Write(&msg); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(msg.Headers); err != nil {
		t.Fatal(err)
	}
	publish(t, conn, p.Name, "validate", msg)
	got = o.await(t, 1)[1]
	if got.Pipeline != name || got.Step != "store" || got.Outcome != contract.TelemetryCompleted || got.MessageID != "old" {
		t.Errorf("the run completed was told as %+v", got)
	}
	// first-seen is cut to the millisecond the header carries.
	if took := time.Since(started) + time.Millisecond; got.Duration < time.Hour || got.Duration > took {
		t.Errorf("a run first seen %v ago was told to have taken %v", took, got.Duration)
	}
	if n := len(o.await(t, 0)); n != 2 {
		t.Errorf("%d runs told, want 2", n)
	}
}
