// Package saga runs steps in process, each with a compensation that undoes
// it; when a step fails, the steps done before it are compensated in
// reverse order. What could not be compensated is listed, as an error one
// can alert on: the world is then half done, and a person must look.
//
//	err := saga.Run(ctx,
//		saga.Step{Name: "reserve stock", Do: reserve, Undo: release},
//		saga.Step{Name: "charge card", Do: charge, Undo: refund},
//		saga.Step{Name: "book courier", Do: book},
//	)
//	if errors.Is(err, saga.ErrUncompensated) {
//		alert(err) // err.(*saga.Error).Uncompensated says what
//	}
//
// A saga is not a message of its own: steps that send messages do so as
// any code does (an outbox, a Publisher), and a saga that must survive a
// crash belongs in a pipeline (package pipeline) instead.
package saga

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

// DefaultUndoTimeout bounds each compensation when the Saga names no other
// bound.
const DefaultUndoTimeout = 30 * time.Second

// ErrUncompensated is matched by the error of a saga in which a compensation
// failed: something done could not be undone.
var ErrUncompensated = errors.New("saga: some steps could not be compensated")

// Step is one step of a saga.
type Step struct {
	// Name names the step in errors.
	Name string
	// Do does the step.
	Do func(ctx context.Context) error
	// Undo compensates a Do that succeeded; nil when there is nothing to
	// undo.
	Undo func(ctx context.Context) error
}

// Saga is steps run in order, and how long each compensation may take.
type Saga struct {
	Steps []Step
	// UndoTimeout bounds each compensation; DefaultUndoTimeout when 0.
	UndoTimeout time.Duration
}

// Error is a saga that failed: the step that failed and why, what was
// compensated, and what could not be.
type Error struct {
	// Step is the step that failed, or that was next when the context
	// ended.
	Step string
	// Err is why: the step's error, or the context's.
	Err error
	// Compensated are the steps undone, in the order they were undone.
	Compensated []string
	// Uncompensated are the compensations that failed, in the order they
	// ran: alert on them.
	Uncompensated []Uncompensated
}

// Uncompensated is a step whose compensation failed.
type Uncompensated struct {
	Step string
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "saga: step %q failed: %v", e.Step, e.Err)
	if len(e.Compensated) > 0 {
		fmt.Fprintf(&b, "; compensated %s", strings.Join(quoted(e.Compensated), ", "))
	}
	if len(e.Uncompensated) > 0 {
		parts := make([]string, len(e.Uncompensated))
		for i, u := range e.Uncompensated {
			parts[i] = fmt.Sprintf("%q (%v)", u.Step, u.Err)
		}
		fmt.Fprintf(&b, "; NOT compensated: %s", strings.Join(parts, ", "))
	}
	return b.String()
}

// Unwrap is the step's error, and ErrUncompensated when a compensation
// failed.
func (e *Error) Unwrap() []error {
	if len(e.Uncompensated) > 0 {
		return []error{e.Err, ErrUncompensated}
	}
	return []error{e.Err}
}

// Run runs steps as a Saga with the default undo timeout.
func Run(ctx context.Context, steps ...Step) error { return Saga{Steps: steps}.Run(ctx) }

// Run does each step in order and returns nil when all succeed. When one
// fails (an error or a panic), or ctx ends before the next one starts, the
// steps done so far are compensated, the last first, and Run returns an
// *Error. The failed step itself is not compensated: it did not happen, or
// must undo its own part. Compensations run even once ctx has ended (on a
// context without its cancellation but with its values), each bounded by
// UndoTimeout, so that a cancelled saga is still undone; a compensation
// that fails does not stop the others.
func (s Saga) Run(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	for i, st := range s.Steps {
		err := ctx.Err()
		if err == nil {
			err = call(ctx, st.Do)
		}
		if err != nil {
			e := &Error{Step: st.Name, Err: err}
			s.compensate(ctx, s.Steps[:i], e)
			return e
		}
	}
	return nil
}

// compensate undoes done, the last first, into e.
func (s Saga) compensate(ctx context.Context, done []Step, e *Error) {
	timeout := s.UndoTimeout
	if timeout <= 0 {
		timeout = DefaultUndoTimeout
	}
	base := context.WithoutCancel(ctx)
	for i := len(done) - 1; i >= 0; i-- {
		st := done[i]
		if st.Undo == nil {
			continue
		}
		undoCtx, cancel := context.WithTimeout(base, timeout)
		err := call(undoCtx, st.Undo)
		cancel()
		if err != nil {
			e.Uncompensated = append(e.Uncompensated, Uncompensated{Step: st.Name, Err: err})
			continue
		}
		e.Compensated = append(e.Compensated, st.Name)
	}
}

func (s Saga) check() error {
	seen := map[string]bool{}
	for i, st := range s.Steps {
		switch {
		case st.Do == nil:
			return fmt.Errorf("saga: step %d (%q) has no Do", i+1, st.Name)
		case strings.TrimSpace(st.Name) == "":
			return fmt.Errorf("saga: step %d has no name", i+1)
		case seen[st.Name]:
			return fmt.Errorf("saga: the step %q is named twice", st.Name)
		}
		seen[st.Name] = true
	}
	return nil
}

// PanicError is a step or a compensation that panicked.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panicked: %v", e.Value) }

// call runs f, a panic becoming its error.
func call(ctx context.Context, f func(context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return f(ctx)
}

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}
