package acemq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/lenient"
	"github.com/acemq-go/acemq/transport"
)

// Observer is told what a Conn does: every publish (the application's,
// those of packages built on acemq through Conn.Publish, and the library's
// own republishes), every delivery and how it was settled, pipeline runs
// (a PipelineObserver),
// in-process waits, missing rungs, failed set-asides, consumers and the
// connection's events. Adapters turn this into metrics (package acemqprom)
// and traces (package acemqotel); the core depends on neither. Set it with
// WithObserver; Observers combines several.
//
// Methods are called synchronously by the goroutine doing the work, from
// many goroutines at once: they must be safe for concurrent use, quick,
// and must not call back into the Conn. Embed NopObserver to implement only
// some of them.
type Observer interface {
	// PublishStart is called before each publish. It may add headers to
	// p.Headers (a trace context) and return a context for the publish,
	// which PublishEnd then receives.
	PublishStart(ctx context.Context, p *PublishInfo) context.Context
	// PublishEnd is called once the publish is answered, or has failed.
	PublishEnd(ctx context.Context, p *PublishInfo, r PublishResult)
	// DeliveryStart is called when a delivery reaches a consumer, before
	// it is decoded. The context it returns is the handler's, and is the
	// one the delivery's republishes and DeliveryEnd receive.
	DeliveryStart(ctx context.Context, d *DeliveryInfo) context.Context
	// DeliveryEnd is called once the delivery is settled: acknowledged
	// (after its republish, if any, was confirmed) or handed back.
	DeliveryEnd(ctx context.Context, d *DeliveryInfo, s SettleResult)
	// Event is called for everything else that happens.
	Event(e Event)
}

// PublishInfo is a publish about to be made.
type PublishInfo struct {
	Exchange   string
	RoutingKey string
	// Headers are the message's headers. PublishStart may add to them (W3C
	// trace context, say); x-acemq-* headers must be left alone.
	Headers   Table
	MessageID string
	Type      string
	// Correlation is the message's x-acemq-correlation.
	Correlation string
	// Republish: the library republishes a message of its own accord:
	// a delivery's retry, set-aside or put-back, in the context of that
	// delivery's DeliveryStart; a dead letter that package deadletter
	// moves (Conn.Republish), in the context of the move; the scheduler's
	// hops and deliveries (Conn.Forward). RepublishKind says which; false
	// for the application's publishes (the family counts only those in
	// acemq.publish.total).
	Republish     bool
	RepublishKind contract.RepublishKind
}

// publishOutcome classifies a publish's error.
func publishOutcome(err error) contract.PublishOutcome {
	switch {
	case err == nil:
		return contract.PublishConfirmed
	case errors.Is(err, ErrUnroutable):
		return contract.PublishUnroutable
	case errors.Is(err, ErrRefused):
		return contract.PublishRefused
	case errors.Is(err, ErrTimeout), errors.Is(err, ErrBlocked), errors.Is(err, context.DeadlineExceeded):
		return contract.PublishTimedOut
	}
	return contract.PublishFailed
}

// PublishResult is how a publish ended and how long it took, from
// PublishStart to the broker's answer, in real time.
type PublishResult struct {
	Outcome  contract.PublishOutcome
	Err      error
	Duration time.Duration
}

// DeliveryInfo is a delivery as it reached a consumer.
type DeliveryInfo struct {
	Queue      string
	Exchange   string
	RoutingKey string
	// Headers are the delivery's headers; read them, do not change them.
	Headers     Table
	MessageID   string
	Type        string
	Correlation string // x-acemq-correlation
	Attempt     int
	Redelivered bool
	BodySize    int
}

// SettleResult is how a delivery was settled.
type SettleResult struct {
	Outcome contract.Outcome
	// Attempt is the attempt of the message as republished for a retry;
	// else the delivery's.
	Attempt int
	// Delay is a retry's wait: in the consumer or on the rung.
	Delay time.Duration
	// Target is the queue the message was republished to, if any.
	Target string
	// Reason is why it was set aside (x-acemq-error), or handed back.
	Reason      string
	ReasonClass contract.ReasonClass
	// HandlerDuration is how long the handler ran, in real time (not the
	// Conn's clock); 0 when it did not run.
	HandlerDuration time.Duration
}

// EventKind is what an Event reports.
type EventKind uint8

const (
	// EventRungMissing: a wait meant for a rung (Target) is the consumer's
	// instead: the rung is missing or returned the message.
	EventRungMissing EventKind = iota + 1
	// EventSetAsideFailed: a set-aside to Target failed (Err); the message
	// goes back to its queue.
	EventSetAsideFailed
	// EventWaitStarted: a delivery is held in the consumer for Delay:
	// a retry's wait (Class ReasonRetry, or ReasonTimeout for a handler
	// that timed out: ReasonClass.IsRetry), or the pause before handing
	// back a delivery whose republish failed (ReasonRepublishFailed).
	EventWaitStarted
	// EventWaitEnded: a wait ended, its time up or, with CutShort, cut
	// short by Close (the delivery is then handed back).
	EventWaitEnded
	// EventConsumerStarted: a consumer of Queue started, with its ladder.
	EventConsumerStarted
	// EventConsumerStopped: the consumer of Queue closed. When Close
	// returned before every settlement was done (its drain timeout or its
	// context ended first), the rest of them, and the settlements of
	// abandoned handlers, may still be told after this.
	EventConsumerStopped
	// EventConnectionLost: the connection broke (Err); the Conn reconnects.
	EventConnectionLost
	// EventConnectionRecovered: connected again (at Address).
	EventConnectionRecovered
	// EventConnectionBlocked: the broker blocks publishing (Reason).
	EventConnectionBlocked
	// EventConnectionUnblocked: publishing goes on.
	EventConnectionUnblocked
	// EventConnectionClosed: Close was called (told once).
	EventConnectionClosed
	// EventQueuePurged: Conn.PurgeQueue removed Messages from Queue.
	EventQueuePurged
	// EventQueueDeleted: Conn.DeleteQueue deleted Queue, which held Messages.
	EventQueueDeleted
	// EventConsumerPaused: the consumer (Consumer, of Queue) stopped taking
	// deliveries, paused by Reason (a PauseCause).
	EventConsumerPaused
	// EventConsumerResumed: it takes deliveries again, let go of by Reason.
	EventConsumerResumed
	// EventConsumerRescaled: it runs at Scale now.
	EventConsumerRescaled
	// EventHandlerTimedOut: a handler ran past its timeout (Delay, the
	// WithHandlerTimeout); its context is cancelled, its delivery retried
	// at once. Its goroutine stays taken until EventHandlerOverran.
	EventHandlerTimedOut
	// EventHandlerOverran: a handler returned after its timeout
	// (WithHandlerTimeout), having run for Delay; the delivery was retried
	// at the timeout, and its decision (Reason) is discarded. Its goroutine
	// is free again.
	EventHandlerOverran
	// EventBreakerChanged: the consumer's circuit breaker entered Breaker
	// (open: it paused the consumer; half-open: it probes with one message
	// at a time; closed: the consumer runs at its Scale again), for Reason
	// ("10 failures in a row", "the probe succeeded").
	EventBreakerChanged
)

func (k EventKind) String() string {
	switch k {
	case EventRungMissing:
		return "rung missing"
	case EventSetAsideFailed:
		return "set-aside failed"
	case EventWaitStarted:
		return "wait started"
	case EventWaitEnded:
		return "wait ended"
	case EventConsumerStarted:
		return "consumer started"
	case EventConsumerStopped:
		return "consumer stopped"
	case EventConnectionLost:
		return "connection lost"
	case EventConnectionRecovered:
		return "connection recovered"
	case EventConnectionBlocked:
		return "connection blocked"
	case EventConnectionUnblocked:
		return "connection unblocked"
	case EventConnectionClosed:
		return "connection closed"
	case EventQueuePurged:
		return "queue purged"
	case EventQueueDeleted:
		return "queue deleted"
	case EventConsumerPaused:
		return "consumer paused"
	case EventConsumerResumed:
		return "consumer resumed"
	case EventConsumerRescaled:
		return "consumer rescaled"
	case EventHandlerTimedOut:
		return "handler timed out"
	case EventHandlerOverran:
		return "handler overran"
	case EventBreakerChanged:
		return "circuit breaker changed"
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is something that happened to a Conn or one of its consumers.
type Event struct {
	Kind EventKind
	// Queue is the consumer's queue, for consumer events; the queue
	// purged or deleted.
	Queue string
	// Consumer is the consumer's id, for the events of a consumer's
	// start, stop and run-time control.
	Consumer string
	// Scale is a rescaled consumer's (EventConsumerRescaled).
	Scale Scale
	// Target is the rung or set-aside queue.
	Target    string
	MessageID string
	Delay     time.Duration
	CutShort  bool
	// Messages is how many messages a purged or deleted queue held.
	Messages int
	// Class is why a delivery waits (the wait events); ReasonTimeout for
	// EventHandlerTimedOut and EventHandlerOverran.
	Class contract.ReasonClass
	// Rungs are the queues of the consumer's retry ladder, in schedule
	// order (EventConsumerStarted).
	Rungs []string
	// Conn is the connection the event happened on, for an observer that
	// wants to look further (the depth of a ladder's rungs, say).
	Conn    *Conn
	Address string
	Reason  string
	Err     error
	// Breaker is the state a consumer's circuit breaker entered
	// (EventBreakerChanged).
	Breaker BreakerState
}

// RequestObserver is an Observer that is told of requests too: the
// request-reply round trips of package request, from the request's publish
// to its reply or its failure. A Conn's Observer that implements it is
// told (Conn.ObserveRequest); Observers tells those of its members that do.
type RequestObserver interface {
	// RequestStart is called before a request is published. The context it
	// returns is the request's: its publish is made in it, and RequestEnd
	// receives it.
	RequestStart(ctx context.Context, r *RequestInfo) context.Context
	// RequestEnd is called once the request has its reply, or has failed.
	RequestEnd(ctx context.Context, r *RequestInfo, res RequestResult)
}

// RequestInfo is a request about to be sent.
type RequestInfo struct {
	Exchange   string
	RoutingKey string
	// CorrelationID is the request's correlation id, a new UUID.
	CorrelationID string
	Type          string
}

// RequestResult is how a request ended and how long it took, in real time.
type RequestResult struct {
	// Outcome: answered (the reply came and decoded), timed_out or failed.
	Outcome  contract.TelemetryOutcome
	Err      error
	Duration time.Duration
}

// ObserveRequest tells the Conn's Observer, when it is a RequestObserver,
// that a request starts; it returns the request's context and the function
// to call, once, when the request ends. For packages that make requests
// over a Conn (package request).
func (c *Conn) ObserveRequest(ctx context.Context, r RequestInfo) (context.Context, func(RequestResult)) {
	ro, ok := c.observer.(RequestObserver)
	if !ok {
		return ctx, func(RequestResult) {}
	}
	ctx = ro.RequestStart(ctx, &r)
	return ctx, func(res RequestResult) { ro.RequestEnd(ctx, &r, res) }
}

// NopObserver does nothing; embed it in an Observer that implements only
// some methods.
type NopObserver struct{}

func (NopObserver) PublishStart(ctx context.Context, _ *PublishInfo) context.Context   { return ctx }
func (NopObserver) PublishEnd(context.Context, *PublishInfo, PublishResult)            {}
func (NopObserver) DeliveryStart(ctx context.Context, _ *DeliveryInfo) context.Context { return ctx }
func (NopObserver) DeliveryEnd(context.Context, *DeliveryInfo, SettleResult)           {}
func (NopObserver) Event(Event)                                                        {}

// Observers combines observers: each is told everything, in order; the
// context one returns is the next one's.
func Observers(os ...Observer) Observer {
	switch len(os) {
	case 0:
		return NopObserver{}
	case 1:
		return os[0]
	}
	return observers(os)
}

type observers []Observer

func (os observers) PublishStart(ctx context.Context, p *PublishInfo) context.Context {
	for _, o := range os {
		ctx = o.PublishStart(ctx, p)
	}
	return ctx
}

func (os observers) PublishEnd(ctx context.Context, p *PublishInfo, r PublishResult) {
	for _, o := range os {
		o.PublishEnd(ctx, p, r)
	}
}

func (os observers) DeliveryStart(ctx context.Context, d *DeliveryInfo) context.Context {
	for _, o := range os {
		ctx = o.DeliveryStart(ctx, d)
	}
	return ctx
}

func (os observers) DeliveryEnd(ctx context.Context, d *DeliveryInfo, s SettleResult) {
	for _, o := range os {
		o.DeliveryEnd(ctx, d, s)
	}
}

func (os observers) Event(e Event) {
	for _, o := range os {
		o.Event(e)
	}
}

func (os observers) RequestStart(ctx context.Context, r *RequestInfo) context.Context {
	for _, o := range os {
		if ro, ok := o.(RequestObserver); ok {
			ctx = ro.RequestStart(ctx, r)
		}
	}
	return ctx
}

func (os observers) RequestEnd(ctx context.Context, r *RequestInfo, res RequestResult) {
	for _, o := range os {
		if ro, ok := o.(RequestObserver); ok {
			ro.RequestEnd(ctx, r, res)
		}
	}
}

// Pending is a publish sent and not yet answered, told to the Conn's
// Observer: PublishStart was told before it was sent (and may have added
// headers), and Wait tells PublishEnd.
type Pending struct {
	ctx      context.Context
	observer Observer
	t        transport.Transport
	info     PublishInfo
	start    time.Time
	conf     *transport.Confirmation
	err      error // the send's
}

// startPublish sends pub, told to observer as a publish of the
// application's (kind "") or a republish of kind.
func startPublish(ctx context.Context, observer Observer, t transport.Transport, pub transport.Publishing, kind contract.RepublishKind) *Pending {
	op := &Pending{observer: observer, t: t, start: time.Now(), info: PublishInfo{
		Exchange: pub.Exchange, RoutingKey: pub.RoutingKey, Headers: pub.Message.Headers,
		MessageID: pub.Message.MessageID, Type: lenient.String(pub.Message.Headers[contract.HeaderType]),
		Correlation: lenient.String(pub.Message.Headers[contract.HeaderCorrelation]), Republish: kind != "", RepublishKind: kind,
	}}
	op.ctx = observer.PublishStart(ctx, &op.info)
	pub.Message.Headers = op.info.Headers
	op.conf, op.err = t.Publish(op.ctx, pub)
	return op
}

// answeredAlready is Done of a publish whose send failed.
var answeredAlready = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done is closed once the broker has answered: Wait then returns at once.
func (op *Pending) Done() <-chan struct{} {
	if op.conf == nil {
		return answeredAlready
	}
	return op.conf.Done()
}

// Wait waits for the broker's answer, or for ctx, and tells the Observer
// how the publish ended; call it once. It returns nil once the broker has
// confirmed the message, else why not, matching the errors PublishError
// names (ErrTimeout, with ErrBlocked when the broker was blocking the
// connection, for a ctx that ended first).
func (op *Pending) Wait(ctx context.Context) error {
	err := op.err
	if err == nil {
		err = op.conf.Wait(ctx)
	}
	err = confirmErr(ctx, op.t, err)
	op.observer.PublishEnd(op.ctx, &op.info, PublishResult{Outcome: publishOutcome(err), Err: err, Duration: time.Since(op.start)})
	return err
}

// unsent tells observer of a publish that failed before it could be sent
// (its body did not encode, say).
func unsent(ctx context.Context, observer Observer, exchange, routingKey, id string, err error) {
	info := PublishInfo{Exchange: exchange, RoutingKey: routingKey, MessageID: id}
	ctx = observer.PublishStart(ctx, &info)
	observer.PublishEnd(ctx, &info, PublishResult{Outcome: contract.PublishFailed, Err: err})
}
