package acemq

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/acemq-go/acemq/internal/confirm"
	"github.com/acemq-go/acemq/transport"
)

// ErrTimeout is matched by a publish the broker did not confirm in time.
var ErrTimeout = errors.New("timed out waiting for the broker's confirm")

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
}

// NewPublisher makes a publisher of T to exchange ("" is the default
// exchange, which routes by queue name). It fails only on an option that is
// not a Publisher's or whose value is out of range.
func NewPublisher[T any](c *Conn, exchange string, opts ...Option) (*Publisher[T], error) {
	all := options{pub: publisherOptions{codec: defaultCodec[T](), timeout: DefaultConfirmTimeout, window: DefaultBatchWindow}}
	if err := all.apply(opts, "NewPublisher", forPublisher, "publisher to "+exchangeName(exchange)); err != nil {
		return nil, err
	}
	o := all.pub
	return &Publisher[T]{transport: c.transport, exchange: exchange, codec: o.codec, timeout: o.timeout,
		window: o.window, origin: o.origin, clock: c.clock, observer: c.observer}, nil
}

// exchangeName names an exchange in an error: the default one is "".
func exchangeName(exchange string) string {
	if exchange == "" {
		return "the default exchange"
	}
	return exchange
}

// defaultCodec is Bytes for []byte, Text for string and JSON otherwise.
func defaultCodec[T any]() Codec {
	var zero T
	switch any(zero).(type) {
	case []byte:
		return Bytes
	case string:
		return Text
	}
	return JSON
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
func WithHeaders(h transport.Table) MessageOption {
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
// routed) or the codec's error.
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
	pub, id, err := p.prepare(routingKey, body, opts)
	if err != nil {
		unsent(ctx, p.observer, p.exchange, routingKey, id, err)
		return p.fail(routingKey, id, err)
	}
	if err := startPublish(ctx, p.observer, p.transport, pub, false).Wait(ctx); err != nil {
		return p.fail(routingKey, id, err)
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
		index int
		id    string
		key   string
		*Pending
	}
	var failed []BatchFailure
	fail := func(i int, key, id string, err error) {
		failed = append(failed, BatchFailure{Index: i, Err: p.fail(key, id, err).(*PublishError)})
	}
	window := confirm.New(p.window, func(f inFlight) error {
		if err := f.Wait(ctx); err != nil {
			fail(f.index, f.key, f.id, err)
		}
		return nil // a failure is the message's; the others go on
	})
	for i, m := range msgs {
		pub, id, err := p.prepare(m.RoutingKey, m.Body, m.Options)
		if err != nil {
			unsent(ctx, p.observer, p.exchange, m.RoutingKey, id, err)
			fail(i, m.RoutingKey, id, err)
			continue
		}
		_ = window.Add(inFlight{i, id, m.RoutingKey, startPublish(ctx, p.observer, p.transport, pub, false)})
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

// prepare encodes body and wraps it in a completed envelope.
func (p *Publisher[T]) prepare(routingKey string, body T, opts []MessageOption) (transport.Publishing, string, error) {
	env := Envelope{ContentType: p.codec.ContentType(), Origin: p.origin}
	for _, opt := range opts {
		opt(&env)
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
	return transport.Publishing{Exchange: p.exchange, RoutingKey: routingKey, Mandatory: true, Message: msg}, env.ID, nil
}

// Republish publishes m to queue, through the default exchange, as it is
// (body, properties and headers), mandatory and confirmed, and tells the
// Conn's Observer of it as a republish (PublishInfo.Republish): package
// deadletter moves dead letters with it. An error says m was not sent (the
// broker blocked publishing until ctx ended, say; ErrBlocked); else Wait on
// the Pending for the broker's answer.
func (c *Conn) Republish(ctx context.Context, queue string, m transport.Message) (*Pending, error) {
	return c.send(ctx, "", queue, m, true)
}

// PublishMessage publishes m to exchange under routingKey as it is (body,
// properties and headers: an envelope the caller wrote, such as a record of
// package outbox), mandatory and confirmed, and tells the Conn's Observer
// of it as a publish. An error says m was not sent (ErrBlocked until ctx
// ended, say); else Wait on the Pending for the broker's answer, which
// matches the errors PublishError names.
func (c *Conn) PublishMessage(ctx context.Context, exchange, routingKey string, m transport.Message) (*Pending, error) {
	return c.send(ctx, exchange, routingKey, m, false)
}

func (c *Conn) send(ctx context.Context, exchange, routingKey string, m transport.Message, republish bool) (*Pending, error) {
	m.Headers = maps.Clone(m.Headers) // the Observer may add to them; the caller's stay
	p := startPublish(ctx, c.observer, c.transport, transport.Publishing{Exchange: exchange, RoutingKey: routingKey, Mandatory: true, Message: m}, republish)
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
		return fmt.Errorf("%w: %w: %s (%w)", ErrTimeout, transport.ErrBlocked, st.BlockedReason, err)
	}
	return fmt.Errorf("%w: %w", ErrTimeout, err)
}

func (p *Publisher[T]) fail(routingKey, id string, err error) error {
	return &PublishError{Exchange: p.exchange, RoutingKey: routingKey, MessageID: id, Err: err}
}
