package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/pipeline"
)

// Next and End outside a step's handler have no runner to tell: they
// reject, so that the message (and the body Next was given) is
// dead-lettered with a reason, not acked and lost.
func TestNextAndEndOutsideAStepReject(t *testing.T) {
	for name, d := range map[string]acemq.Decision{
		"Next": pipeline.Next(context.Background(), Order{ID: "lost?"}),
		"End":  pipeline.End(t.Context()),
	} {
		if !strings.HasPrefix(d.String(), "reject") || !errors.Is(d.Err(), pipeline.ErrOutsideStep) || !strings.Contains(d.Err().Error(), "pipeline."+name) {
			t.Errorf("%s outside a step: %v; want a reject matching ErrOutsideStep", name, d)
		}
	}
	eachBroker(t, func(t *testing.T, conn *acemq.Conn, name string) {
		p := pipeline.Pipeline{Name: name, Steps: []string{"a", "b"}}
		declare(t, conn, p)
		// A step's handler given to acemq.Consume instead of pipeline.Run.
		c, err := acemq.Consume(t.Context(), conn, p.Queue("a"), func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
			return pipeline.Next(ctx, m.Body)
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = c.Close(context.Background()) })
		if err := p.Start(t.Context(), conn, Order{ID: "order-1"}); err != nil {
			t.Fatal(err)
		}
		d := take(t, conn, contract.DeadLetterQueue(p.Queue("a")))
		if reason := acemq.ReadEnvelope(d.Message).Error; !strings.Contains(reason, pipeline.ErrOutsideStep.Error()) {
			t.Errorf("dead-lettered with %q, want it to say %q", reason, pipeline.ErrOutsideStep)
		}
	})
}

// In a step, only a handler that returns acemq.Accept has its Next or End
// heeded: Next followed by a Retry is retried, nothing sent on; a plain
// Accept (as for a duplicate an idempotency.Handler absorbed) acks the
// message, sends nothing on and tells OnFinish nothing.
func TestAStepsDecisions(t *testing.T) {
	eachBroker(t, func(t *testing.T, conn *acemq.Conn, name string) {
		done := newFinishes()
		p := pipeline.Pipeline{Name: name, Steps: []string{"a", "b"}, OnFinish: done.add}
		declare(t, conn, p)
		a := run(t, conn, p, "a", func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
			switch {
			case m.Body.ID == "plain":
				return acemq.Accept()
			case m.Envelope.Attempt == 1:
				pipeline.Next(ctx, m.Body)
				return acemq.Retry(errors.New("the price list is not loaded yet"))
			}
			return pipeline.Next(ctx, m.Body)
		}, acemq.WithPolicy(acemq.Fixed(2, 10*time.Millisecond)))
		for _, id := range []string{"plain", "retried"} {
			if err := p.Start(t.Context(), conn, Order{ID: id}); err != nil {
				t.Fatal(err)
			}
		}
		acemqtest.WaitFor(t, a.Consumer, "both accepted", func(s acemq.Stats) bool { return s.Accepted == 2 })
		if _, err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if s := a.Stats(); s.RetriedInConsumer != 1 {
			t.Errorf("stats %+v, want one retry", s)
		}
		if got := a.Runs(); got != (pipeline.RunStats{Forwarded: 1}) {
			t.Errorf("runs %+v, want one forwarded (the retried run, once)", got)
		}
		if body := string(take(t, conn, p.Queue("b")).Body); body != `{"id":"retried"}` {
			t.Errorf("b holds %s, want the retried run", body)
		}
		if st, err := conn.InspectQueue(t.Context(), p.Queue("b")); err != nil || st.Messages != 0 {
			t.Errorf("b holds %d more messages (%v), want none: the plain accept sends nothing on", st.Messages, err)
		}
		done.mu.Lock()
		defer done.mu.Unlock()
		if len(done.runs) != 0 {
			t.Errorf("OnFinish told of %+v, want nothing", done.runs)
		}
	})
}

// A step wrapped in idempotency.Handler: Next reaches the runner through
// the wrapper's context, and a duplicate the store absorbs (a plain
// Accept) is acked without being sent on twice.
func TestAnIdempotentStep(t *testing.T) {
	eachBroker(t, func(t *testing.T, conn *acemq.Conn, name string) {
		p := pipeline.Pipeline{Name: name, Steps: []string{"a", "b"}}
		declare(t, conn, p)
		step, err := idempotency.Handler(idempotency.NewMemory(nil), func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
			return pipeline.Next(ctx, m.Body)
		})
		if err != nil {
			t.Fatal(err)
		}
		a := run(t, conn, p, "a", step)
		for range 2 { // the same run started twice, as after a lost confirm
			if err := p.Start(t.Context(), conn, Order{ID: "order-1"}, acemq.WithMessageID("order-1")); err != nil {
				t.Fatal(err)
			}
		}
		acemqtest.WaitFor(t, a.Consumer, "both accepted", func(s acemq.Stats) bool { return s.Accepted == 2 })
		if _, err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := a.Runs(); got != (pipeline.RunStats{Forwarded: 1}) {
			t.Errorf("runs %+v, want one forwarded", got)
		}
		take(t, conn, p.Queue("b"))
		if st, err := conn.InspectQueue(t.Context(), p.Queue("b")); err != nil || st.Messages != 0 {
			t.Errorf("b holds %d more messages (%v), want none: the duplicate is not sent on", st.Messages, err)
		}
	})
}
