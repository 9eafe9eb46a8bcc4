package acemq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/handoff"
	"github.com/acemq-go/acemq/internal/lenient"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/transport"
)

// Defaults of a consumer.
const (
	DefaultPrefetch     = 20
	DefaultConcurrency  = 1
	DefaultDrainTimeout = 30 * time.Second
	// defaultRequeueBackoff holds a delivery whose republish failed before
	// handing it back, so that a missing Q.dlq does not become a hot loop.
	defaultRequeueBackoff = time.Second
)

// Message is a delivered message with its decoded body and envelope.
type Message[T any] struct {
	Body     T
	Envelope Envelope
	// Raw is the body as it was delivered, before any consume interceptor.
	Raw         []byte
	Exchange    string
	RoutingKey  string
	Redelivered bool
}

// Handler handles one message and says what becomes of it.
type Handler[T any] func(ctx context.Context, m Message[T]) Decision

// Stats counts what a consumer did with its deliveries (in JSON in the
// family's camelCase, as the actuator serves it).
type Stats struct {
	Accepted          int64 `json:"accepted"`
	RetriedInConsumer int64 `json:"retriedInConsumer"`
	RetriedOnRung     int64 `json:"retriedOnRung"`
	DeadLettered      int64 `json:"deadLettered"`
	Parked            int64 `json:"parked"`
	// Requeued were handed back to the broker unsettled (contract.Requeued).
	Requeued int64 `json:"requeued"`
	// PutBack went back to their queue as a copy (contract.PutBack).
	PutBack int64 `json:"putBack"`
	// RungMissing counts broker waits that fell back to the consumer because
	// their rung was missing or returned the message.
	RungMissing int64 `json:"rungMissing"`
	// SetAsideFailed counts set-asides whose republish failed, so that the
	// message went back to its queue instead.
	SetAsideFailed int64 `json:"setAsideFailed"`
	// Waiting is how many deliveries are held in an in-process wait now.
	Waiting int64 `json:"waiting"`
	// TimedOut counts handlers that ran past their timeout
	// (WithHandlerTimeout): their deliveries were retried.
	TimedOut int64 `json:"timedOut"`
	// Overrunning is how many of those are still running now, each
	// holding one of the consumer's goroutines.
	Overrunning int64 `json:"overrunning"`
}

// ShutdownReport says what Close handed back to the broker.
type ShutdownReport struct {
	// Requeued were prefetched but never handled.
	Requeued int
	// WaitsCutShort were waiting in the consumer; they were requeued with
	// their attempt unchanged, so the wait is shortened but nothing is lost.
	WaitsCutShort int
	// Abandoned handlers were still running when Close returned (at the
	// drain timeout or when its context ended), their context cancelled.
	// Each goes on in its goroutine; what it decides is still carried out
	// as usual (an ack, after a confirmed republish if any), except that
	// a wait in the consumer becomes a requeue. If the connection closes
	// first, the broker delivers the message again.
	Abandoned int
	// Settling were republishes still awaiting their confirm when Close
	// returned; each ends by itself, acked once confirmed, handed back
	// otherwise.
	Settling int
}

// Consumer consumes one queue until Close.
type Consumer struct {
	conn      *Conn
	queue     string
	transport transport.Transport
	logger    *slog.Logger
	policy    RetryPolicy
	ladder    retry.Ladder
	random    func() float64
	handle    func(ctx context.Context, d transport.Delivery) (delivered, error)
	drain     time.Duration
	backoff   time.Duration // before requeueing after a failed republish
	clock     transport.Clock
	observer  Observer
	// appendOnly is set for a consumer of a stream (WithAppendOnly);
	// halted once it stopped at a failure.
	appendOnly *AppendOnly
	halted     atomic.Bool
	inPlace    bool // WithRetryInPlace
	timeouts   handlerTimeouts
	circuit    *circuit // WithCircuitBreaker; nil without

	handlerCtx    context.Context // cancelled when the drain timeout ends
	stopHandlers  context.CancelFunc
	stopping      atomic.Bool
	stopped       chan struct{} // closed by Close
	workers       tasks         // the goroutines reading feeds in turns and handling deliveries
	feeds         tasks         // subscriptions whose deliveries have not ended
	busy          tasks         // deliveries a worker is handling and settling
	running       atomic.Int64  // handlers running now
	requeuedAtEnd atomic.Int64

	// Run-time control (control.go). The workers read the current
	// subscription in turns, and a replaced one's forwarder hands its
	// deliveries to whichever worker is free (feed.go), so that the
	// concurrency bounds handlers across a change of subscription.
	id           string
	subscription transport.ConsumeOptions // each subscription's, but its prefetch
	feed         chan transport.Delivery  // from forwarders (feed.go)
	turnMu       sync.Mutex
	free         *feed         // the current feed while no worker reads it
	turnFree     chan struct{} // a token (capacity 1): free may be set
	draining     int           // retired feeds not ended, under turnMu
	shrink       chan struct{} // a token stops one idle worker
	ctl          sync.Mutex    // serialises pausing, resuming, rescaling and Close
	scale        Scale
	probe        bool
	pausedBy     []PauseCause
	current      *feed              // nil while paused
	live         map[*feed]struct{} // feeds whose deliveries have not ended
	shown        atomic.Pointer[controlled]
	workerN      int // workers started and not told to stop

	mu      sync.Mutex
	waits   map[*wait]struct{}
	settles tasks // waits held, republishes and timer callbacks under way

	counts                        outcomeCounts
	rungMissing, setAsideFailures atomic.Int64
}

// outcomeCounts counts the consumer's settlements by outcome, for Stats.
type outcomeCounts struct {
	accepted, retriedInConsumer, retriedOnRung, deadLettered, parked, requeued, putBack atomic.Int64
}

func (c *outcomeCounts) of(o contract.Outcome) *atomic.Int64 {
	switch o {
	case contract.Accepted:
		return &c.accepted
	case contract.RetriedInConsumer:
		return &c.retriedInConsumer
	case contract.RetriedOnRung:
		return &c.retriedOnRung
	case contract.DeadLettered:
		return &c.deadLettered
	case contract.Parked:
		return &c.parked
	case contract.PutBack:
		return &c.putBack
	}
	return &c.requeued
}

// inHand is a delivery being handled and settled, with what its observer
// was told at DeliveryStart; DeliveryEnd is told once, when it is settled.
type inHand struct {
	transport.Delivery
	ctx     context.Context // DeliveryStart's
	info    *DeliveryInfo
	handled time.Duration // how long the handler ran
}

// wait is a delivery held in the consumer until its timer fires.
type wait struct {
	d    inHand
	s    settlement
	stop func() bool // the timer's; true when it had not fired
}

// Consume starts consuming queue with h. Before the first delivery, and
// again after every recovery, it declares the queue's retry ladder and
// dead-letter half (CONTRACT.md section 4); the queue itself must exist. At
// start it looks for the ladder's rungs of the other kind on the broker
// (WithRungs says what follows). ctx bounds the start; the consumer runs
// until Close.
func Consume[T any](ctx context.Context, c *Conn, queue string, h Handler[T], opts ...ConsumeOption) (*Consumer, error) {
	all := options{cons: consumeOptions{policy: NoRetry(), prefetch: DefaultPrefetch, concurrency: DefaultConcurrency,
		drainTimeout: DefaultDrainTimeout, codec: DefaultCodec(*new(T)), random: rand.Float64, backoff: defaultRequeueBackoff}}
	if err := configure(&all, opts, ConsumeOption.consumeSetting, "consume "+queue); err != nil {
		return nil, err
	}
	o := all.cons
	if h == nil {
		return nil, errors.New("acemq: consume " + queue + ": the handler is nil")
	}
	if o.inPlace && o.handlerTimeout > 0 {
		return nil, fmt.Errorf("acemq: consume %s: %w: WithHandlerTimeout cannot be combined with WithRetryInPlace", queue, ErrInvalidOption)
	}
	ladderPolicy := o.policy
	if o.inPlace || o.appendOnly != nil {
		ladderPolicy = NoRetry() // no rung: every wait is the consumer's
	}
	ladder, err := retry.NewLadder(queue, ladderPolicy, o.rungs)
	if err != nil {
		return nil, fmt.Errorf("acemq: consume %s: %w", queue, err)
	}
	cons := &Consumer{
		conn: c, queue: queue, transport: c.transport, logger: c.logger.With("queue", queue),
		policy: o.policy, ladder: ladder, random: o.random, drain: o.drainTimeout, backoff: o.backoff, clock: c.clock,
		observer: c.observer, waits: map[*wait]struct{}{}, appendOnly: o.appendOnly, inPlace: o.inPlace,
		stopped: make(chan struct{}), feed: make(chan transport.Delivery), turnFree: make(chan struct{}, 1), shrink: make(chan struct{}, maxConcurrency),
		scale: Scale{Concurrency: o.concurrency, Prefetch: o.prefetch}, live: map[*feed]struct{}{},
		timeouts: handlerTimeouts{limit: o.handlerTimeout},
	}
	cons.subscription = transport.ConsumeOptions{Tag: o.tag, Setup: cons.declareLadder}
	if o.appendOnly != nil {
		cons.subscription.Setup, cons.subscription.Arguments = cons.appendOnlySetup(), o.appendOnly.Arguments
	} else if err := cons.checkOtherRungs(ctx, o.rungs != ""); err != nil {
		return nil, fmt.Errorf("acemq: consume %s: %w", queue, err)
	}
	if cons.circuit, err = newCircuit(cons, o); err != nil {
		return nil, fmt.Errorf("acemq: consume %s: %w", queue, err)
	}
	cons.handlerCtx, cons.stopHandlers = context.WithCancel(context.WithValue(context.Background(), handlerConn{}, c))
	chain := slices.Concat(c.consumeChain, o.chain)
	cons.handle = func(ctx context.Context, d transport.Delivery) (delivered, error) {
		return handleDelivery(ctx, queue, o.codec, chain, h, d, c.clock.Now())
	}
	cons.show()
	// The id is taken before subscribing, so that two consumers starting
	// at once never share one; a failed start gives it back.
	if err := c.consumers.add(cons, o.id); err != nil {
		cons.stopHandlers()
		return nil, fmt.Errorf("acemq: consume %s: %w", queue, err)
	}
	cons.ctl.Lock()
	defer cons.ctl.Unlock()
	if err := cons.subscribe(ctx, o.prefetch); err != nil {
		c.consumers.remove(cons)
		cons.stopHandlers()
		return nil, fmt.Errorf("acemq: consume %s: %w", queue, err)
	}
	c.observer.Event(Event{Kind: EventConsumerStarted, Queue: queue, Consumer: cons.id, Rungs: ladder.Queues(), Conn: c})
	cons.resize(o.concurrency)
	c.AddCapabilities(CodecCapabilities(o.codec)...)
	return cons, nil
}

// ladderDeclareBound bounds each declaration of the ladder: RabbitMQ 4.3
// answers one of a classic queue whose cluster node is down only after 69s
// (3.10 at once), which held a consumer recovering from its node's loss that
// long per queue; a healthy broker answers in milliseconds.
const ladderDeclareBound = 5 * time.Second

// declareLadder is the subscription's Setup: the ladder's declarations, but
// a queue whose declaration RabbitMQ answers with NOT_FOUND (in a cluster: a
// classic queue whose node is down), or does not answer within
// ladderDeclareBound, is passed over with its bindings, so that consuming
// goes on. A republish to it comes back unroutable (always
// mandatory): the message waits in the consumer instead of on the rung, or
// goes back to its queue instead of to Q.dlq or Q.parked, until the node
// is back.
func (c *Consumer) declareLadder(ctx context.Context, d transport.Declarer) error {
	down := map[string]bool{}
	for _, decl := range c.ladder.Declarations() {
		if b, ok := decl.(transport.Binding); ok && down[b.Queue] {
			continue
		}
		q, isQueue := decl.(transport.Queue)
		dctx, cancel := ctx, context.CancelFunc(func() {})
		if isQueue {
			dctx, cancel = context.WithTimeout(ctx, ladderDeclareBound)
		}
		err := decl.DeclareOn(dctx, d)
		slow := dctx.Err() != nil && ctx.Err() == nil
		cancel()
		if isQueue && (errors.Is(err, transport.ErrNotFound) || slow) {
			down[q.Name] = true
			c.logger.Warn("acemq: a queue of the ladder is unavailable (its node down?); consuming without it",
				"unavailable", q.Name, "error", err)
			continue
		}
		if err != nil {
			return fmt.Errorf("declaring %s: %w", decl, err)
		}
	}
	return nil
}

// handleDelivery runs the interceptors over d, decodes it, runs the handler
// (a panic becomes a rejection with the panic as its reason) and says what
// the settlement depends on.
func handleDelivery[T any](ctx context.Context, queue string, codec Codec, chain []Interceptor, h Handler[T], d transport.Delivery, now time.Time) (in delivered, panicErr error) {
	var refused error
	raw := d.Body
	if len(chain) > 0 {
		d, refused = interceptDelivery(ctx, queue, chain, d)
	}
	env := readDelivery(d)
	in = delivered{Source: queue, Attempt: env.Attempt, Age: env.Age(now)}
	if refused != nil {
		return refusedDelivery(in, refused)
	}
	var body T
	if in.DecodeErr = decodeBody(codec, d.Message, &body); in.DecodeErr != nil {
		return in, nil
	}
	defer func() {
		if r := recover(); r != nil {
			panicErr = fmt.Errorf("%s%v", contract.ReasonTextPanicked, r)
			in.Decision, in.Panicked = Reject(panicErr), true
			panicErr = fmt.Errorf("%w\n%s", panicErr, debug.Stack())
		}
	}()
	handoff.Open(ctx) // the handler given ctx itself may hand its last wait over (handoff.go)
	in.Decision = h(ctx, Message[T]{Body: body, Envelope: env, Raw: raw,
		Exchange: d.Exchange, RoutingKey: d.RoutingKey, Redelivered: d.Redelivered})
	return in, nil
}

// interceptDelivery runs chain over a copy of d's message, so that a retry
// or a set-aside republishes it as it was delivered, and returns d as the
// interceptors left it; a refusal returns d as it was. A change to a
// reserved header is Fatal; a panic is an interceptorPanic.
func interceptDelivery(ctx context.Context, queue string, chain []Interceptor, d transport.Delivery) (out transport.Delivery, refused error) {
	msg := d.Message
	msg.Headers, msg.Body = maps.Clone(msg.Headers), bytes.Clone(msg.Body)
	m := intercepted(d.Exchange, d.RoutingKey, queue, msg)
	defer func() {
		if r := recover(); r != nil {
			out, refused = d, interceptorPanic{fmt.Errorf("%s%v", contract.ReasonTextPanicked, r), debug.Stack()}
		}
	}()
	switch _, reserved, err := intercept(ctx, "consume", chain, m); {
	case reserved != "":
		return d, Fatal(err)
	case err != nil:
		return d, err
	}
	out = d
	out.Message, out.Exchange, out.RoutingKey = m.message(), m.Exchange, m.RoutingKey
	return out, nil
}

// interceptorPanic is a consume interceptor's panic, with its stack.
type interceptorPanic struct {
	err   error
	stack []byte
}

func (p interceptorPanic) Error() string { return p.err.Error() }

// refusedDelivery is what settles a delivery its interceptors refused: the
// failure of a handler that was not called, retried (Retry(err)), or a
// panicking handler's rejection.
func refusedDelivery(in delivered, err error) (delivered, error) {
	in.Refused = true
	if p, ok := err.(interceptorPanic); ok {
		in.Decision, in.Panicked = Reject(p.err), true
		return in, fmt.Errorf("%w\n%s", p.err, p.stack)
	}
	in.Decision = Retry(err)
	return in, nil
}

// decodeBody decodes m's body into v with codec, refusing a content type the
// codec does not read.
func decodeBody(codec Codec, m transport.Message, v any) error {
	if !codec.Reads(m.ContentType) {
		return fmt.Errorf("the content type %q is not one %s", m.ContentType, readsWhat(codec))
	}
	return codec.Unmarshal(m.ContentType, m.Body, v)
}

// readsWhat says what codec reads, for a refusal.
func readsWhat(codec Codec) string {
	switch c := codec.(type) {
	case jsonCodec:
		return "a JSON consumer reads (" + jsonReadable + ")"
	case composite:
		return "any of its codecs reads (" + c.names() + ")"
	case readable:
		return "the consumer's codec reads (" + c.Readable() + ")"
	}
	return "the consumer's codec (" + codec.ContentType() + ") reads"
}

// work reads the current feed in its turn and takes what retired ones
// forward, and handles each delivery, until the consumer closes or a
// shrink token says there is one worker too many.
func (c *Consumer) work() {
	defer c.workers.done()
	w := c.newWorker()
	for {
		select { // an idle worker that is too many stops first
		case <-c.shrink:
			return
		default:
		}
		select {
		case <-c.shrink:
			return
		case <-c.stopped:
			return
		case <-c.turnFree:
			c.takeTurn(w)
		case d := <-c.feed: // counted busy by its forwarder
			if !c.handleOne(w, d) {
				c.busy.done()
			}
		}
	}
}

// handleOne handles d and settles it. released says it is, or will be,
// marked no longer busy elsewhere: its handler's timeout settled it, or a
// goroutine settles it after the wait its handler handed over (handoff.go).
func (c *Consumer) handleOne(w worker, d transport.Delivery) (released bool) {
	h := c.startIn(w.ctx, d)
	if c.stopping.Load() || c.halted.Load() {
		c.requeueAtEnd(h)
		return false
	}
	c.running.Add(1)
	// Real time, not the Conn's clock (a test's manual one): this is
	// how long the handler took, not when anything is due.
	began := time.Now()
	in, panicErr, late := c.handleInTime(h, d)
	wait := w.take()
	if late { // its timeout settled it
		c.running.Add(-1)
		if wait != nil {
			_ = wait() // let it finish; the message was retried already
		}
		return true
	}
	if in.DecodeErr == nil && !in.Refused {
		h.handled = time.Since(began)
	}
	c.logPanic(d, panicErr)
	s, waited := settle(in, c.policy, c.ladder, c.random), true
	if c.inPlace {
		in, s, waited = c.retryInPlace(&h, d, in, s)
	}
	c.running.Add(-1)
	if !waited {
		c.requeueAtEnd(h) // Close cut its wait short
		return false
	}
	if wait != nil {
		c.settleAfter(h, in, s, wait)
		return true
	}
	c.carryOut(h, in, s)
	return false
}

// requeueAtEnd hands h back unhandled as the consumer closes.
func (c *Consumer) requeueAtEnd(h inHand) {
	c.requeue(h, contract.ReasonShutdown)
	c.requeuedAtEnd.Add(1)
}

func (c *Consumer) logPanic(d transport.Delivery, panicErr error) {
	if panicErr != nil {
		c.logger.Error("acemq: handler panicked", "message_id", d.MessageID, "error", panicErr)
	}
}

// start tells the observer a delivery has arrived.
func (c *Consumer) start(d transport.Delivery) inHand { return c.startIn(c.handlerCtx, d) }

// startIn is start for a handler whose context derives from ctx, its
// worker's.
func (c *Consumer) startIn(ctx context.Context, d transport.Delivery) inHand {
	// The id and type as the handler's Envelope reads them, without
	// copying the headers.
	info := &DeliveryInfo{Queue: c.queue, Exchange: d.Exchange, RoutingKey: d.RoutingKey, Headers: d.Headers,
		MessageID: readID(d.Message), Type: readType(d.Headers, d.RoutingKey),
		Correlation: lenient.String(d.Headers[contract.HeaderCorrelation]), Attempt: lenient.Count(d.Headers[contract.HeaderAttempt]),
		Redelivered: d.Redelivered, BodySize: len(d.Body)}
	return inHand{Delivery: d, ctx: c.observer.DeliveryStart(ctx, info), info: info}
}

// execute carries out a settlement: ack, republish then ack, or hold the
// delivery for an in-process wait.
func (c *Consumer) execute(h inHand, in delivered, s settlement) {
	switch {
	case c.appendOnly != nil && c.halts(s):
		c.halt(h, s)
	case s.Target == "":
		c.ack(h, s)
	case s.Wait > 0 || s.Outcome == contract.RetriedInConsumer:
		c.hold(h, s)
	default:
		c.settles.add()
		defer c.settles.done()
		err := c.republish(h, s)
		switch {
		case err == nil:
			c.ack(h, s)
		case s.Outcome == contract.RetriedOnRung && errors.Is(err, transport.ErrUnroutable):
			c.rungMissing.Add(1)
			c.logger.Warn("acemq: retry rung missing; waiting in the consumer instead", "rung", s.Target, "message_id", h.info.MessageID)
			c.observer.Event(Event{Kind: EventRungMissing, Conn: c.conn, Queue: c.queue, Target: s.Target, MessageID: h.info.MessageID, Delay: s.Delay})
			in.RungUnavailable = true
			c.execute(h, in, settle(in, c.policy, c.ladder, c.random))
		default:
			c.setAsideFailed(h, s, err)
		}
	}
}

// republish publishes the message as s says and waits for the confirm,
// in the delivery's observed context but not bound by its cancellation.
func (c *Consumer) republish(h inHand, s settlement) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(h.ctx), DefaultConfirmTimeout)
	defer cancel()
	return startPublish(ctx, c.observer, c.transport, republication(h.Message, s), s.Outcome.Republish()).Wait(ctx)
}

func (c *Consumer) setAsideFailed(h inHand, s settlement, err error) {
	if s.Outcome == contract.DeadLettered || s.Outcome == contract.Parked {
		c.setAsideFailures.Add(1)
		c.observer.Event(Event{Kind: EventSetAsideFailed, Conn: c.conn, Queue: c.queue, Target: s.Target, MessageID: h.info.MessageID, Err: err})
	}
	if c.appendOnly != nil { // a copy put back would be appended to the log
		c.halt(h, settlement{Reason: fmt.Sprintf("setting it aside in %s failed: %v (the failure: %s)", s.Target, err, s.Reason), Class: contract.ReasonRepublishFailed})
		return
	}
	c.logger.Error("acemq: republish failed; the message goes back to its queue",
		"message_id", h.info.MessageID, "target", s.Target, "outcome", string(s.Outcome), "error", err)
	c.hold(h, settlement{Outcome: contract.PutBack, Wait: c.backoff, Reason: err.Error(), Class: contract.ReasonRepublishFailed})
}

// putBack returns h to its queue once the pause after a failed republish is
// over: as a copy published to the queue, its attempt unchanged, confirmed,
// then the original acked. A requeue would do the same on a classic queue,
// but a quorum queue counts a returned delivery, and RabbitMQ 4 dead-letters
// a message returned 20 times by default, towards the very Q.dlq whose
// republish may have just failed; a copy's count starts again. If even
// the copy fails, the broker gets the delivery back as a failure (reject).
func (c *Consumer) putBack(h inHand, class contract.ReasonClass) {
	if err := c.republish(h, settlement{Outcome: contract.PutBack, Target: c.queue, Class: class}); err != nil {
		c.logger.Warn("acemq: putting the message back on its queue failed; requeueing it", "message_id", h.info.MessageID, "error", err)
		c.handBack(h, class, h.Reject)
		return
	}
	c.ack(h, settlement{Outcome: contract.PutBack, Target: c.queue, Class: class})
}

func (c *Consumer) ack(h inHand, s settlement) {
	if err := h.Ack(); err != nil {
		// The broker delivers it again: at least once, never lost.
		c.logger.Warn("acemq: ack failed; the broker will deliver the message again", "message_id", h.info.MessageID, "error", err)
		c.settled(h, contract.Requeued, settlement{Reason: err.Error(), Class: contract.ReasonAckFailed})
		return
	}
	if s.Outcome == contract.DeadLettered || s.Outcome == contract.Parked {
		c.logger.Warn("acemq: message set aside", "message_id", h.info.MessageID, "outcome", string(s.Outcome),
			"target", s.Target, "reason_class", string(s.Class), "reason", s.Reason)
	}
	c.settled(h, s.Outcome, s)
}

// requeue hands h back to the broker unhandled, for class: a nack, which
// says it was not processed (RabbitMQ 4.3 no longer counts a nack towards a
// quorum queue's delivery limit; earlier versions do).
func (c *Consumer) requeue(h inHand, class contract.ReasonClass) {
	if c.appendOnly != nil {
		c.handBack(h, class, ackUnhandled(h.Ack))
		return
	}
	c.handBack(h, class, h.Nack)
}

// handBack settles h with requeue through settle: a nack, or a reject for
// a message that could be neither set aside nor put back. Every version
// counts a reject towards a quorum queue's delivery limit, so such a
// message ends in the broker's own dead-lettering after the limit's
// returns instead of going around for ever (as it would on RabbitMQ 4.3
// with a nack).
func (c *Consumer) handBack(h inHand, class contract.ReasonClass, settle func(requeue bool) error) {
	s := settlement{Class: class}
	if err := settle(true); err != nil {
		c.logger.Warn("acemq: requeue failed; the broker will deliver the message again", "message_id", h.info.MessageID, "error", err)
		s.Reason = err.Error()
	}
	c.settled(h, contract.Requeued, s)
}

// settled tells the observer how h was settled, then counts it: what waits
// on Stats finds the observer told already.
func (c *Consumer) settled(h inHand, outcome contract.Outcome, s settlement) {
	attempt := s.Attempt
	if attempt == 0 {
		attempt = h.info.Attempt
	}
	r := SettleResult{Outcome: outcome, Attempt: attempt, Delay: s.Delay,
		Target: s.Target, Reason: s.Reason, ReasonClass: s.Class, HandlerDuration: h.handled}
	c.observer.DeliveryEnd(h.ctx, h.info, r)
	c.counts.of(outcome).Add(1)
	if c.appendOnly != nil && c.appendOnly.Settled != nil {
		c.appendOnly.Settled(h.info, r)
	}
}

// hold keeps h until s.Wait has passed, without a goroutine while it
// waits; prefetch bounds how many are held.
func (c *Consumer) hold(h inHand, s settlement) {
	w := &wait{d: h, s: s}
	c.mu.Lock()
	if !c.stopping.Load() {
		c.waits[w] = struct{}{}
		c.settles.add() // done when the timer's callback ends or Close cuts it short
		// Told before the timer is set, so that it comes before its end.
		c.observer.Event(c.event(EventWaitStarted, w))
		w.stop = c.clock.AfterFunc(s.Wait, func() { c.endWait(w) })
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.requeueAtEnd(h) // closing: hand it back rather than start a wait
}

// event is a wait's event.
func (c *Consumer) event(kind EventKind, w *wait) Event {
	return Event{Kind: kind, Conn: c.conn, Queue: c.queue, MessageID: w.d.info.MessageID, Delay: w.s.Wait, Class: w.s.Class}
}

// endWait republishes a held delivery once its wait is over.
func (c *Consumer) endWait(w *wait) {
	defer c.settles.done()
	c.mu.Lock()
	delete(c.waits, w)
	c.mu.Unlock()
	c.observer.Event(c.event(EventWaitEnded, w))
	if w.s.Outcome == contract.PutBack {
		c.putBack(w.d, w.s.Class)
		return
	}
	if err := c.republish(w.d, w.s); err != nil {
		c.setAsideFailed(w.d, w.s, err)
		return
	}
	c.ack(w.d, w.s)
}

// Stats counts what the consumer has done so far.
func (c *Consumer) Stats() Stats {
	c.mu.Lock()
	waiting := int64(len(c.waits))
	c.mu.Unlock()
	return Stats{
		Accepted: c.counts.accepted.Load(), RetriedInConsumer: c.counts.retriedInConsumer.Load(),
		RetriedOnRung: c.counts.retriedOnRung.Load(), DeadLettered: c.counts.deadLettered.Load(),
		Parked: c.counts.parked.Load(), Requeued: c.counts.requeued.Load(), PutBack: c.counts.putBack.Load(),
		RungMissing: c.rungMissing.Load(), SetAsideFailed: c.setAsideFailures.Load(), Waiting: waiting,
		TimedOut: c.timeouts.timedOut.Load(), Overrunning: c.timeouts.overrunning.Load(),
	}
}

// Close stops the consumer: no new deliveries; handlers already running
// finish, and settlements under way are confirmed, up to the drain timeout;
// deliveries prefetched but not started are requeued; deliveries held in an
// in-process wait are requeued with their attempt unchanged. Nothing is
// acknowledged that was not handled.
//
// Close returns at the drain timeout, or when ctx ends if that is sooner,
// even if handlers have not returned: it cancels their context and reports
// them as abandoned (see ShutdownReport). An abandoned handler's decision
// is still carried out when it returns, with the same guarantees (a
// republish is confirmed before the original is acked; a failure hands the
// delivery back). Deliveries prefetched and not started are requeued as
// they come, by a goroutine that ends with the subscription's last
// delivery, or by the broker when the connection closes. A drain that ran
// out of time so (handlers abandoned, republishes still unconfirmed) is an
// error matching ErrDrainTimeout, with the report.
//
// Closing a consumer again fails with an error matching ErrClosed.
func (c *Consumer) Close(ctx context.Context) (ShutdownReport, error) {
	c.ctl.Lock()
	if c.stopping.Swap(true) {
		c.ctl.Unlock()
		return ShutdownReport{}, fmt.Errorf("acemq: closing the consumer of %s: closed before: %w", c.queue, ErrClosed)
	}
	close(c.stopped)
	cur := c.current
	c.current = nil
	if cur != nil {
		c.retire(cur) // its forwarder requeues what it still delivers
	}
	c.ctl.Unlock()
	defer c.conn.consumers.remove(c) // counted while it drains
	c.circuit.stop(ctx)
	var cancelErr error
	if cur != nil {
		cancelErr = cur.sub.Cancel(ctx)
	}

	drained := make(chan struct{})
	stopDrain := c.clock.AfterFunc(c.drain, func() { close(drained) })
	defer stopDrain()
	for _, idle := range []func() <-chan struct{}{c.feeds.idle, c.workers.idle} {
		select {
		case <-idle():
		case <-drained:
		case <-ctx.Done():
		}
	}
	// Counted before their context ends: a handler that returns on it
	// was abandoned all the same.
	var report ShutdownReport
	report.Abandoned = int(c.running.Load())
	c.stopHandlers()

	var cut []*wait
	c.mu.Lock()
	for w := range c.waits {
		// A timer that already fired is left to its callback, which
		// republishes: that wait is over.
		if w.stop() {
			delete(c.waits, w)
			cut = append(cut, w)
		}
	}
	c.mu.Unlock()
	for _, w := range cut {
		e := c.event(EventWaitEnded, w)
		e.CutShort = true
		c.observer.Event(e)
		c.requeue(w.d, contract.ReasonShutdown)
		c.settles.done()
	}
	report.WaitsCutShort = len(cut)

	select {
	case <-c.settles.idle():
	case <-drained:
	case <-ctx.Done():
	}
	report.Settling = c.settles.count()
	report.Requeued = int(c.requeuedAtEnd.Load())
	c.observer.Event(Event{Kind: EventConsumerStopped, Queue: c.queue, Consumer: c.id, Conn: c.conn})
	if cancelErr != nil {
		cancelErr = fmt.Errorf("acemq: closing the consumer of %s: %w", c.queue, cancelErr)
	}
	return report, errors.Join(cancelErr, c.drainError(report))
}

// tasks counts work under way. Unlike a sync.WaitGroup, it can be waited
// for in a select, so that Close needs no goroutine that could outlive it.
type tasks struct {
	mu   sync.Mutex
	n    int
	none chan struct{} // made by idle while some are under way, closed when n falls to 0
}

// alreadyClosed is a channel closed from the start: idle's answer when nothing is
// under way.
var alreadyClosed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// add counts a task; a channel is made only for a waiter (idle), so that
// counting, on every delivery, allocates nothing.
func (t *tasks) add() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
}

func (t *tasks) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n--
	if t.n == 0 && t.none != nil {
		close(t.none)
		t.none = nil
	}
}

// idle is closed once no task is under way.
func (t *tasks) idle() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == 0 {
		return alreadyClosed
	}
	if t.none == nil {
		t.none = make(chan struct{})
	}
	return t.none
}

func (t *tasks) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}
