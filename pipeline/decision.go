package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/acemq-go/acemq"
)

// ErrOutsideStep is matched by the reason of a message whose handler called
// Next or End outside a pipeline step (a handler given to acemq.Consume
// rather than Run): it is rejected, so that the body Next was given is
// dead-lettered with it rather than lost.
var ErrOutsideStep = errors.New("pipeline: Next or End was called outside a pipeline step's handler (pipeline.Run)")

// outcome is what a step's handler said of its run, through Next or End:
// the runner gives each delivery a slot for it in the handler's context.
type outcome struct {
	kind outcomeKind
	body any
}

type outcomeKind uint8

const (
	none outcomeKind = iota
	next
	end
)

type slotKey struct{}

// Next sends body on to the next step, encoded with the pipeline's codec;
// after the last step, the run is complete. A step's handler returns it:
// it records body for the step's runner (in ctx, which must be the
// handler's or one made from it) and is acemq.Accept, so that the delivery
// is acked once the forward is confirmed. Called outside a step's handler
// it is acemq.Reject with ErrOutsideStep.
func Next(ctx context.Context, body any) acemq.Decision {
	return record(ctx, "Next", outcome{kind: next, body: body})
}

// End ends the run at this step: the message is acked, goes no further,
// and OnFinish is told. A step's handler returns it, as it does Next.
func End(ctx context.Context) acemq.Decision { return record(ctx, "End", outcome{kind: end}) }

// record puts o in ctx's slot. The last Next or End of a handler is the
// one that counts, and only if the handler returns acemq.Accept: a handler
// that calls Next and then returns Retry is retried, nothing sent on.
func record(ctx context.Context, name string, o outcome) acemq.Decision {
	slot, ok := ctx.Value(slotKey{}).(*outcome)
	if !ok {
		return acemq.Reject(fmt.Errorf("%w: pipeline.%s", ErrOutsideStep, name))
	}
	*slot = o
	return acemq.Accept()
}
