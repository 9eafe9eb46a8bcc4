package acemq

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/confirm"
	"github.com/acemq-go/acemq/transport"
)

// ErrTimeout is matched by what ran out of time: a publish the broker did
// not confirm in time, a request no reply came to (package request).
var ErrTimeout = errors.New("timed out")

// DefaultConfirmTimeout bounds a publish whose context has no deadline.
const DefaultConfirmTimeout = 30 * time.Second

// DefaultBatchWindow is how many publishes of a batch are in flight at once.
const DefaultBatchWindow = 512

// Publisher publishes messages of type T to one exchange, each with the
// AceMQ envelope, persistent, mandatory and confirmed: Publish returns once
// the broker has the message, or says why it does not.
type Publisher[T any] struct {
	transport transport.Transport
	exchange  string
	codec     Codec
	timeout   time.Duration
	window    int
	origin    string
	clock     transport.Clock
	observer  Observer
	chain     []Interceptor // the Conn's, then the Publisher's
}

// NewPublisher makes a publisher of T to exchange ("" is the default
// exchange, which routes by queue name). It fails only on an option whose
// value is out of range.
func NewPublisher[T any](c *Conn, exchange string, opts ...PublisherOption) (*Publisher[T], error) {
	all := options{pub: publisherOptions{codec: DefaultCodec(*new(T)), timeout: DefaultConfirmTimeout, window: DefaultBatchWindow}}
	if err := configure(&all, opts, PublisherOption.publisherSetting, "publisher to "+exchangeName(exchange)); err != nil {
		return nil, err
	}
	o := all.pub
	c.AddCapabilities(CodecCapabilities(o.codec)...)
	return &Publisher[T]{transport: c.transport, exchange: exchange, codec: o.codec, timeout: o.timeout,
		window: o.window, origin: o.origin, clock: c.clock, observer: c.observer,
		chain: slices.Concat(c.publishChain, o.chain)}, nil
}

// exchangeName names an exchange in an error: the default one is "".
func exchangeName(exchange string) string {
	if exchange == "" {
		return "the default exchange"
	}
	return exchange
}

// MessageOption sets a value of a published message's envelope.
type MessageOption func(*Envelope)

// WithMessageID sets the message id (default: a new UUID).
func WithMessageID(id string) MessageOption { return func(e *Envelope) { e.ID = id } }

// WithMessageType sets the message type (default: the routing key).
func WithMessageType(t string) MessageOption { return func(e *Envelope) { e.Type = t } }

// WithVersion sets the schema version (default 1).
func WithVersion(v int) MessageOption { return func(e *Envelope) { e.Version = v } }

// WithCorrelation sets the correlation id (default: the message id).
func WithCorrelation(id string) MessageOption { return func(e *Envelope) { e.Correlation = id } }

// WithCausation names the message that caused this one.
func WithCausation(id string) MessageOption { return func(e *Envelope) { e.Causation = id } }

// WithClaim sets the application's own reference, carried as it is.
func WithClaim(claim string) MessageOption { return func(e *Envelope) { e.Claim = claim } }

// WithHeaders adds application headers; x-acemq-* names are refused.
func WithHeaders(h Table) MessageOption {
	return func(e *Envelope) {
		if e.Headers == nil {
			e.Headers = transport.Table{}
		}
		for k, v := range h {
			e.Headers[k] = v
		}
	}
}

// PublishError says which publish failed and why; errors.Is matches
// ErrUnroutable, ErrRefused, ErrBlocked, ErrTimeout, ErrNotFound (the
// exchange does not exist: the message was not routed), ErrNotConfirmed
// (the connection or channel closed first: it may or may not have been
// routed), the codec's error or a publish interceptor's refusal. A
// message sent names the exchange and routing key it was sent with, after
// the interceptors; one not sent, those it was given.
type PublishError struct {
	Exchange   string
	RoutingKey string
	MessageID  string
	Err        error
}

func (e *PublishError) Error() string {
	exchange := e.Exchange
	if exchange == "" {
		exchange = "(default)"
	}
	id := ""
	if e.MessageID != "" {
		id = " " + e.MessageID
	}
	return fmt.Sprintf("acemq: publish of message%s to exchange %s with routing key %q: %v", id, exchange, e.RoutingKey, e.Err)
}

func (e *PublishError) Unwrap() error { return e.Err }

// Publish sends body under routingKey and waits for the broker's confirm.
// It fails when the message is unroutable (no queue is bound for it),
// refused, sent to an exchange that does not exist, not confirmed before
// ctx's deadline (or DefaultConfirmTimeout), or blocked by a broker alarm
// for that long.
func (p *Publisher[T]) Publish(ctx context.Context, routingKey string, body T, opts ...MessageOption) error {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	pub, id, err := p.prepare(ctx, routingKey, body, opts)
	if err != nil {
		unsent(ctx, p.observer, p.exchange, routingKey, id, err)
		return p.fail(p.exchange, routingKey, id, err)
	}
	if err := startPublish(ctx, p.observer, p.transport, pub, "").Wait(ctx); err != nil {
		return p.fail(pub.Exchange, pub.RoutingKey, id, err)
	}
	return nil
}

// Outgoing is one message of a batch.
type Outgoing[T any] struct {
	RoutingKey string
	Body       T
	Options    []MessageOption
}

// BatchError lists the messages of a batch that were not published; every
// other one was confirmed.
type BatchError struct {
	Total  int
	Failed []BatchFailure
}

// BatchFailure is one failed message of a batch, by its index.
type BatchFailure struct {
	Index int
	Err   *PublishError
}

func (e *BatchError) Error() string {
	first := e.Failed[0]
	return fmt.Sprintf("acemq: %d of %d messages not published; the first, number %d: %v",
		len(e.Failed), e.Total, first.Index, first.Err)
}

// PublishBatch publishes msgs with many in flight at once (the batch
// window) and waits for every confirm. It returns nil when every message
// was confirmed, else a *BatchError naming exactly the ones that were not.
// When ctx has no deadline, the confirm timeout (DefaultConfirmTimeout, or
// WithConfirmTimeout) bounds the whole batch, not each message: give a
// large batch a deadline of its own.
func (p *Publisher[T]) PublishBatch(ctx context.Context, msgs []Outgoing[T]) error {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	type inFlight struct {
		index         int
		id            string
		exchange, key string
		*Pending
	}
	var failed []BatchFailure
	fail := func(i int, exchange, key, id string, err error) {
		failed = append(failed, BatchFailure{Index: i, Err: p.fail(exchange, key, id, err)})
	}
	window := confirm.New(p.window, func(f inFlight) error {
		if err := f.Wait(ctx); err != nil {
			fail(f.index, f.exchange, f.key, f.id, err)
		}
		return nil // a failure is the message's; the others go on
	})
	for i, m := range msgs {
		pub, id, err := p.prepare(ctx, m.RoutingKey, m.Body, m.Options)
		if err != nil {
			unsent(ctx, p.observer, p.exchange, m.RoutingKey, id, err)
			fail(i, p.exchange, m.RoutingKey, id, err)
			continue
		}
		pub.More = i < len(msgs)-1 // another follows at once: the transport may send them in one write
		_ = window.Add(inFlight{i, id, pub.Exchange, pub.RoutingKey, startPublish(ctx, p.observer, p.transport, pub, "")})
	}
	_ = window.Drain()
	if len(failed) == 0 {
		return nil
	}
	slices.SortFunc(failed, func(a, b BatchFailure) int { return a.Index - b.Index })
	return &BatchError{Total: len(msgs), Failed: failed}
}

func (p *Publisher[T]) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || p.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, p.timeout)
}

// prepare encodes body, wraps it in a completed envelope and runs the
// interceptors over it.
func (p *Publisher[T]) prepare(ctx context.Context, routingKey string, body T, opts []MessageOption) (transport.Publishing, string, error) {
	env := Envelope{ContentType: p.codec.ContentType(), Origin: p.origin}
	if len(opts) > 0 {
		env = withOptions(env, opts)
	}
	env = env.Complete(routingKey, p.clock.Now())
	data, err := p.codec.Marshal(body)
	if err != nil {
		return transport.Publishing{}, env.ID, err
	}
	msg := transport.Message{Body: data}
	if err := env.Write(&msg); err != nil {
		return transport.Publishing{}, env.ID, err
	}
	pub := transport.Publishing{Exchange: p.exchange, RoutingKey: routingKey, Mandatory: true, Message: msg}
	if len(p.chain) > 0 {
		if err := interceptPublish(ctx, p.chain, &pub); err != nil {
			return transport.Publishing{}, env.ID, err
		}
	}
	return pub, env.ID, nil
}

// withOptions applies opts to a copy of env: only a publish with options
// pays for the envelope on the heap that taking its address costs.
func withOptions(env Envelope, opts []MessageOption) Envelope {
	for _, opt := range opts {
		opt(&env)
	}
	return env
}

// Publish publishes m to exchange under routingKey as it is (body,
// properties and headers: it is already in wire form), mandatory and
// confirmed, through the Conn's publish interceptors, and tells the Conn's
// Observer of it as a publish of the application's: it is for packages
// built on acemq that send messages of their own making (package request's
// requests and replies, package outbox's records). An error says m was not sent (the broker blocked
// publishing until ctx ended, say: ErrBlocked; an interceptor refused it: a
// *PublishError); else Wait on the Pending, once, for the broker's answer.
func (c *Conn) Publish(ctx context.Context, exchange, routingKey string, m RawMessage) (*Pending, error) {
	return c.publish(ctx, transport.Publishing{Exchange: exchange, RoutingKey: routingKey, Mandatory: true, Message: m}, "", true)
}

// Forward is Publish (through the publish interceptors, mandatory,
// confirmed) of a message the library sends on for the application, told
// to the Observer as the library's own republish of kind
// (PublishInfo.RepublishKind) rather than as the application's publish,
// which was told when the application made it: the scheduler's forwarder
// sends its hops and deliveries with it. Kind "" is Publish.
func (c *Conn) Forward(ctx context.Context, kind contract.RepublishKind, exchange, routingKey string, m RawMessage) (*Pending, error) {
	return c.publish(ctx, transport.Publishing{Exchange: exchange, RoutingKey: routingKey, Mandatory: true, Message: m}, kind, true)
}

// Republish is Publish to queue through the default exchange, around the
// publish interceptors (m was published once already), told to the
// Observer as a republish of kind contract.RepublishReplay: package
// deadletter moves dead letters with it.
func (c *Conn) Republish(ctx context.Context, queue string, m RawMessage) (*Pending, error) {
	return c.publish(ctx, transport.Publishing{RoutingKey: queue, Mandatory: true, Message: m}, contract.RepublishReplay, false)
}

// publish sends pub as kind says (Observer), through the publish
// interceptors when intercept.
func (c *Conn) publish(ctx context.Context, pub transport.Publishing, kind contract.RepublishKind, intercept bool) (*Pending, error) {
	pub.Message.Headers = maps.Clone(pub.Message.Headers) // the Observer may add to them; the caller's stay
	if intercept && len(c.publishChain) > 0 {
		if err := interceptPublish(ctx, c.publishChain, &pub); err != nil {
			id := readID(pub.Message)
			unsent(ctx, c.observer, pub.Exchange, pub.RoutingKey, id, err)
			return nil, &PublishError{Exchange: pub.Exchange, RoutingKey: pub.RoutingKey, MessageID: id, Err: err}
		}
	}
	p := startPublish(ctx, c.observer, c.transport, pub, kind)
	if p.err != nil {
		return nil, p.Wait(ctx)
	}
	return p, nil
}

// confirmErr says "timed out" for a publish cut short by its deadline, and
// "blocked" too when the broker was blocking the connection: a publish sent
// before the broker's connection.blocked arrived waits for its confirm, not
// in Transport.Publish (which reports ErrBlocked itself).
func confirmErr(ctx context.Context, tr transport.Transport, err error) error {
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, transport.ErrBlocked) {
		return err
	}
	if st := tr.State(); st.Blocked {
		return fmt.Errorf("%w waiting for the broker's confirm: %w: %s (%w)", ErrTimeout, transport.ErrBlocked, st.BlockedReason, err)
	}
	return fmt.Errorf("%w waiting for the broker's confirm: %w", ErrTimeout, err)
}

func (p *Publisher[T]) fail(exchange, routingKey, id string, err error) *PublishError {
	return &PublishError{Exchange: exchange, RoutingKey: routingKey, MessageID: id, Err: err}
}

// interceptPublish runs chain over pub: its exchange, routing key, headers,
// content type and encoding, and body. A refusal leaves pub as it was.
func interceptPublish(ctx context.Context, chain []Interceptor, pub *transport.Publishing) error {
	m := intercepted(pub.Exchange, pub.RoutingKey, "", pub.Message)
	switch at, reserved, err := intercept(ctx, "publish", chain, m); {
	case reserved != "":
		return err
	case err != nil:
		return fmt.Errorf("publish interceptor %d of %d refused it: %w", at, len(chain), err)
	}
	pub.Exchange, pub.RoutingKey, pub.Message = m.Exchange, m.RoutingKey, m.message()
	return nil
}
