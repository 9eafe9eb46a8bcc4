// Package pipeline runs a message through named steps, each an ordinary
// acemq consumer with its own retry policy, the way to the next step
// carried on the message as a routing slip (package slip, CONTRACT.md
// section 13).
//
// A pipeline P with steps S1, S2, S3 is exchange P (direct) and one queue
// per step, P.S1, P.S2, P.S3 (quorum), each bound to P under its step's
// name, as the Java library declares it:
//
//	orders := pipeline.Pipeline{Name: "orders", Steps: []string{"validate", "enrich", "store"}}
//	err := orders.Declare(ctx, conn)
//
// Each step is an ordinary acemq.Handler: it returns this package's
// decisions, Next (the body for the next step) or End (the run ends
// there), or fails with the root's (Retry goes up the step's own ladder,
// Reject and Park set the message aside):
//
//	enrich, err := pipeline.Run(ctx, conn, orders, "enrich",
//		func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
//			price, err := prices.Lookup(ctx, m.Body.SKU)
//			if err != nil {
//				return acemq.Retry(err)
//			}
//			m.Body.Cents = price
//			return pipeline.Next(ctx, m.Body)
//		}, acemq.WithPolicy(acemq.Exponential(5, time.Second, time.Minute)))
//
// and Start sends a message into the first step with a new slip.
//
// A step forwards its message with acemq.Conn.Publish (observed,
// intercepted, mandatory and confirmed) and its delivery is acked only once
// the broker has confirmed the forward; a forward that fails retries the
// step, so a step may run twice for one message and should be idempotent.
// The message keeps its id, correlation and first-seen time from step to
// step (so that an idempotent consumer of a step knows a forward sent
// twice); its attempt starts again at 1 at every step.
//
// A slip keeps the form it came in. A run started here writes the JSON
// form unless the Pipeline asks for the step form (Java's); one started by
// another library goes on in its own. A message that carries no slip, or
// one that does not parse, or whose slip is not at this step, is
// dead-lettered at once (the fatal path), its reason saying why.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/slip"
	"github.com/acemq-go/acemq/transport"
)

// ErrInvalidPipeline is matched by a Pipeline that cannot be declared or
// run: no name, no step, a step named twice or with a comma in its name.
var ErrInvalidPipeline = errors.New("invalid pipeline")

// Pipeline names a pipeline and its steps, in order.
type Pipeline struct {
	Name  string
	Steps []string
	// Form is the slip form Start writes: slip.JSONForm (the zero Form),
	// as the Go, Python and Ruby libraries write it, or slip.StepForm, as
	// Java's does.
	Form slip.Form
	// Codec encodes the bodies Start and the steps send on, and decodes
	// them at every step (unless Run is given acemq.WithCodec);
	// acemq.JSON when nil.
	Codec acemq.Codec
	// OnFinish, when set, is told of every run that ends at a step of this
	// process: after its last step, or at a step that returned End. It runs
	// in the step's handler, before the delivery is acked.
	OnFinish func(ctx context.Context, f Finished)
}

// Finished is a run that has ended.
type Finished struct {
	// Step is the step it ended at.
	Step string
	// Early: a step returned End before the last step.
	Early bool
	// Slip is the slip as the run left it: every step done unless Early.
	Slip slip.Slip
	// Envelope is the envelope of the message the step handled.
	Envelope acemq.Envelope
	// Body is what the last step's Next gave, encoded with the pipeline's
	// codec; nil for End.
	Body []byte
}

// Validate reports what makes p unusable, or nil.
func (p Pipeline) Validate() error {
	switch {
	case strings.TrimSpace(p.Name) == "":
		return fmt.Errorf("pipeline: %w: it has no name", ErrInvalidPipeline)
	case len(p.Steps) == 0:
		return fmt.Errorf("pipeline %s: %w: it has no step", p.Name, ErrInvalidPipeline)
	}
	seen := map[string]bool{}
	for i, s := range p.Steps {
		switch {
		case strings.TrimSpace(s) == "":
			return fmt.Errorf("pipeline %s: %w: step %d has no name", p.Name, ErrInvalidPipeline, i+1)
		case strings.Contains(s, ","):
			return fmt.Errorf("pipeline %s: %w: the step name %q holds a comma, which the step form separates names with", p.Name, ErrInvalidPipeline, s)
		case seen[s]:
			return fmt.Errorf("pipeline %s: %w: the step %q is named twice", p.Name, ErrInvalidPipeline, s)
		}
		seen[s] = true
	}
	return nil
}

// Queue is the queue of step: "P.S".
func (p Pipeline) Queue(step string) string { return contract.PipelineQueue(p.Name, step) }

// Topology is what the pipeline declares: exchange P (direct), and for each
// step S queue P.S (quorum, no further arguments) bound to P under S. The
// steps' retry ladders and dead-letter queues are their consumers' to
// declare, as acemq.Consume does.
func (p Pipeline) Topology() acemq.Topology {
	t := acemq.Topology{Exchanges: []acemq.ExchangeSpec{{Name: p.Name, Type: transport.Direct}}}
	for _, s := range p.Steps {
		t.Queues = append(t.Queues, acemq.QueueSpec{Name: p.Queue(s),
			Bindings: []acemq.BindingSpec{{Exchange: p.Name, RoutingKey: s}}})
	}
	return t
}

// Declare declares the pipeline's Topology on conn's broker.
func (p Pipeline) Declare(ctx context.Context, conn *acemq.Conn) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if err := p.Topology().Apply(ctx, conn); err != nil {
		return fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	return nil
}

// NewSlip is a slip for a new run, in p's Form, at the first step.
func (p Pipeline) NewSlip() (slip.Slip, error) {
	if err := p.Validate(); err != nil {
		return slip.Slip{}, err
	}
	if p.Form == slip.StepForm {
		return slip.NewRoute(p.Name, p.Steps...)
	}
	steps := make([]slip.Step, len(p.Steps))
	for i, s := range p.Steps {
		steps[i] = slip.Step{Exchange: p.Name, RoutingKey: s, Name: s}
	}
	return slip.New(steps...)
}

// Start sends body into the pipeline's first step with a new slip, and
// returns once the broker has confirmed it (bounded by ctx's deadline, or
// acemq.DefaultConfirmTimeout). opts set the message's
// envelope (its id, correlation, headers); its type is the pipeline's name.
func (p Pipeline) Start(ctx context.Context, conn *acemq.Conn, body any, opts ...acemq.MessageOption) error {
	s, err := p.NewSlip()
	if err != nil {
		return err
	}
	var env acemq.Envelope
	for _, opt := range opts {
		opt(&env)
	}
	env.Type = p.Name
	first, _ := s.Current()
	if err := p.send(ctx, conn, env, body, s); err != nil {
		return fmt.Errorf("pipeline %s: starting a run at step %s: %w", p.Name, first.Name, err)
	}
	return nil
}

func (p Pipeline) codec() acemq.Codec {
	if p.Codec == nil {
		return acemq.JSON
	}
	return p.Codec
}

// send publishes body with env to the current step of s, s written on it,
// and waits for the broker's confirm: until ctx's deadline, or
// acemq.DefaultConfirmTimeout when it has none.
func (p Pipeline) send(ctx context.Context, conn *acemq.Conn, env acemq.Envelope, body any, s slip.Slip) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, acemq.DefaultConfirmTimeout)
		defer cancel()
	}
	step, ok := s.Current()
	if !ok {
		return errors.New("the slip has no step left")
	}
	data, err := p.codec().Marshal(body)
	if err != nil {
		return acemq.Fatal(fmt.Errorf("the body could not be encoded: %w", err))
	}
	env.ContentType = p.codec().ContentType()
	env = env.Complete(step.RoutingKey, time.Now())
	msg := transport.Message{Body: data}
	if err := env.Write(&msg); err != nil {
		return err
	}
	if err := s.Write(msg.Headers); err != nil {
		return err
	}
	sent, err := conn.Publish(ctx, step.Exchange, step.RoutingKey, msg)
	if err != nil {
		return err
	}
	return sent.Wait(ctx)
}

// onward is the envelope of the message a step sends on: the id,
// correlation, causation, first-seen time, version, type and AMQP reply
// properties of in, and its application headers but for the slip (written
// again), the trace context (the forward's own span writes it) and the
// replay headers (the forward is not a replay). The attempt starts again,
// the origin is this service's, and a claim, which named the old body, is
// dropped.
func onward(in acemq.Envelope) acemq.Envelope {
	out := acemq.Envelope{ID: in.ID, Type: in.Type, Version: in.Version, Correlation: in.Correlation,
		Causation: in.Causation, FirstSeen: in.FirstSeen, ReplyTo: in.ReplyTo, CorrelationID: in.CorrelationID,
		Headers: maps.Clone(in.Headers)}
	for _, h := range []string{contract.HeaderRoutingSlip, contract.HeaderTraceParent, contract.HeaderTraceState,
		contract.HeaderReplayedFrom, contract.HeaderReplayedAt, contract.HeaderReplayCount} {
		delete(out.Headers, h)
	}
	return out
}

// atStep checks that s is at step of p, for a message of type msgType.
func (p Pipeline) atStep(s slip.Slip, msgType, step string) error {
	if s.Form == slip.StepForm && msgType != p.Name {
		return fmt.Errorf("its step-form routing slip belongs to the pipeline %q (its type), not %q", msgType, p.Name)
	}
	cur, ok := s.Current()
	if !ok {
		return fmt.Errorf("its routing slip has no step left (done: %s)", strings.Join(s.Names(), ", "))
	}
	if !slices.Contains([]string{cur.Name, cur.RoutingKey}, step) && cur.RoutingKey != p.Queue(step) {
		at := cur.Name
		if at == "" {
			at = cur.RoutingKey
		}
		return fmt.Errorf("its routing slip is at step %q, not at %q", at, step)
	}
	return nil
}
