package saga_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/saga"
)

// journal records what the steps and compensations did, in order.
type journal struct{ entries []string }

func (j *journal) step(name string, fail error) saga.Step {
	return saga.Step{
		Name: name,
		Do: func(context.Context) error {
			j.entries = append(j.entries, "do "+name)
			return fail
		},
		Undo: func(context.Context) error {
			j.entries = append(j.entries, "undo "+name)
			return nil
		},
	}
}

func TestAllStepsSucceed(t *testing.T) {
	var j journal
	if err := saga.Run(t.Context(), j.step("a", nil), j.step("b", nil), j.step("c", nil)); err != nil {
		t.Fatal(err)
	}
	if want := []string{"do a", "do b", "do c"}; !reflect.DeepEqual(j.entries, want) {
		t.Errorf("ran %q, want %q", j.entries, want)
	}
}

// The steps done are compensated in reverse order; the failed one is not.
func TestCompensationOrder(t *testing.T) {
	var j journal
	declined := errors.New("card declined")
	noUndo := j.step("notify", nil)
	noUndo.Undo = nil
	err := saga.Run(t.Context(), j.step("reserve", nil), noUndo, j.step("hold", nil), j.step("charge", declined), j.step("ship", nil))
	want := []string{"do reserve", "do notify", "do hold", "do charge", "undo hold", "undo reserve"}
	if !reflect.DeepEqual(j.entries, want) {
		t.Errorf("ran %q\nwant %q", j.entries, want)
	}
	var e *saga.Error
	if !errors.As(err, &e) {
		t.Fatalf("Run = %v, want a *saga.Error", err)
	}
	if e.Step != "charge" || !errors.Is(err, declined) || errors.Is(err, saga.ErrUncompensated) {
		t.Errorf("Error %+v", e)
	}
	if !reflect.DeepEqual(e.Compensated, []string{"hold", "reserve"}) || len(e.Uncompensated) != 0 {
		t.Errorf("compensated %q, not %v", e.Compensated, e.Uncompensated)
	}
	if got := err.Error(); got != `saga: step "charge" failed: card declined; compensated "hold", "reserve"` {
		t.Errorf("Error() = %s", got)
	}
}

// A compensation that fails (or panics) is listed, the others still run,
// and the error matches ErrUncompensated.
func TestFailingCompensationsListed(t *testing.T) {
	var j journal
	stuck := errors.New("the warehouse is offline")
	reserve := j.step("reserve", nil)
	reserve.Undo = func(context.Context) error { return stuck }
	charge := j.step("charge", nil)
	charge.Undo = func(context.Context) error { panic("refund service gone") }
	err := saga.Run(t.Context(), reserve, j.step("log", nil), charge, j.step("ship", errors.New("no courier")))
	if !errors.Is(err, saga.ErrUncompensated) {
		t.Fatalf("Run = %v, want ErrUncompensated", err)
	}
	var e *saga.Error
	errors.As(err, &e)
	if len(e.Uncompensated) != 2 || e.Uncompensated[0].Step != "charge" || e.Uncompensated[1].Step != "reserve" ||
		!errors.Is(e.Uncompensated[1].Err, stuck) {
		t.Fatalf("Uncompensated %+v", e.Uncompensated)
	}
	var p *saga.PanicError
	if !errors.As(e.Uncompensated[0].Err, &p) || p.Value != "refund service gone" || len(p.Stack) == 0 {
		t.Errorf("the panicking compensation: %#v", e.Uncompensated[0].Err)
	}
	if !reflect.DeepEqual(e.Compensated, []string{"log"}) {
		t.Errorf("Compensated %q", e.Compensated)
	}
	want := `saga: step "ship" failed: no courier; compensated "log"; NOT compensated: "charge" (panicked: refund service gone), "reserve" (the warehouse is offline)`
	if err.Error() != want {
		t.Errorf("Error() = %s\nwant      %s", err, want)
	}
}

// A step that panics fails the saga, and what was done is undone.
func TestPanickingStep(t *testing.T) {
	var j journal
	boom := saga.Step{Name: "boom", Do: func(context.Context) error { panic("nil map") }}
	err := saga.Run(t.Context(), j.step("a", nil), boom)
	var p *saga.PanicError
	if !errors.As(err, &p) || !reflect.DeepEqual(j.entries, []string{"do a", "undo a"}) {
		t.Errorf("Run = %v, ran %q", err, j.entries)
	}
}

// A cancelled context stops the saga before its next step; what was done
// is compensated all the same, on a context that is not cancelled.
func TestCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var j journal
	var undoCtxErr []error
	step := func(name string) saga.Step {
		s := j.step(name, nil)
		s.Undo = func(ctx context.Context) error {
			j.entries = append(j.entries, "undo "+name)
			undoCtxErr = append(undoCtxErr, ctx.Err())
			return nil
		}
		return s
	}
	cancelling := step("b")
	cancelling.Do = func(context.Context) error {
		j.entries = append(j.entries, "do b")
		cancel() // a shutdown arrives while b runs; b itself finishes
		return nil
	}
	err := saga.Run(ctx, step("a"), cancelling, step("c"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	var e *saga.Error
	errors.As(err, &e)
	if e.Step != "c" {
		t.Errorf("the saga stopped before %q, want c", e.Step)
	}
	if want := []string{"do a", "do b", "undo b", "undo a"}; !reflect.DeepEqual(j.entries, want) {
		t.Errorf("ran %q, want %q", j.entries, want)
	}
	if !reflect.DeepEqual(undoCtxErr, []error{nil, nil}) {
		t.Errorf("the compensations' contexts were ended: %v", undoCtxErr)
	}

	// A step that honours its context ends the saga with the context's
	// error, and is not compensated itself.
	ctx, cancel = context.WithCancel(t.Context())
	j = journal{}
	waits := saga.Step{Name: "wait", Do: func(ctx context.Context) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}, Undo: func(context.Context) error { t.Error("the step that failed was compensated"); return nil }}
	err = saga.Run(ctx, step("a"), waits)
	if !errors.Is(err, context.Canceled) || !reflect.DeepEqual(j.entries, []string{"do a", "undo a"}) {
		t.Errorf("Run = %v, ran %q", err, j.entries)
	}
}

// Each compensation has UndoTimeout to finish.
func TestUndoTimeout(t *testing.T) {
	slow := saga.Step{Name: "slow", Do: func(context.Context) error { return nil }, Undo: func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	fail := saga.Step{Name: "fail", Do: func(context.Context) error { return errors.New("no") }}
	err := saga.Saga{Steps: []saga.Step{slow, fail}, UndoTimeout: 10 * time.Millisecond}.Run(t.Context())
	var e *saga.Error
	if !errors.As(err, &e) || len(e.Uncompensated) != 1 || !errors.Is(e.Uncompensated[0].Err, context.DeadlineExceeded) {
		t.Errorf("Run = %v", err)
	}
}

func TestInvalidSaga(t *testing.T) {
	do := func(context.Context) error { return nil }
	for _, tt := range []struct {
		steps []saga.Step
		says  string
	}{
		{[]saga.Step{{Name: "a"}}, "has no Do"},
		{[]saga.Step{{Do: do}}, "has no name"},
		{[]saga.Step{{Name: "a", Do: do}, {Name: "a", Do: do}}, "named twice"},
	} {
		if err := saga.Run(t.Context(), tt.steps...); err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("Run = %v, want it to say %q", err, tt.says)
		}
	}
}
