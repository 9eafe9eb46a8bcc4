package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// Scheduler publishes messages to be delivered later, on the family's
// scheduler topology, and makes the forwarder that delivers them. It is
// safe for concurrent use.
type Scheduler struct {
	conn     *acemq.Conn
	exchange string
	due      string
	clock    acemq.Clock
	codec    acemq.Codec // nil: by the body's type
}

// New declares the scheduler's topology on conn (Topology) and returns the
// Scheduler. ctx bounds the declarations. Options: WithExchange,
// WithClock, WithCodec.
func New(ctx context.Context, conn *acemq.Conn, opts ...Option) (*Scheduler, error) {
	if conn == nil {
		return nil, errors.New("schedule: new: the connection is nil")
	}
	o, err := configure(opts, Option.newSetting, "New")
	if err != nil {
		return nil, err
	}
	s := &Scheduler{conn: conn, exchange: o.exchange, due: o.exchange + contract.ScheduleDueSuffix, clock: o.clock, codec: o.codec}
	if err := s.Topology().Apply(ctx, conn); err != nil {
		return nil, fmt.Errorf("schedule: declaring the scheduler's topology: %w", err)
	}
	useOn(conn, s.codec)
	return s, nil
}

// Topology is what the scheduler declares (CONTRACT.md section 12): the
// direct exchange, its five rungs (classic, durable, with exactly
// x-message-ttl, x-dead-letter-exchange: the exchange and
// x-dead-letter-routing-key: the due queue), each bound under its own
// name, and the due queue (classic, no arguments), bound under its name.
// The forwarder declares the due queue's .dlq and .parked when it starts,
// as every consumer does.
func (s *Scheduler) Topology() acemq.Topology {
	return topologyOf(s.exchange)
}

func topologyOf(exchange string) acemq.Topology {
	due := exchange + contract.ScheduleDueSuffix
	t := acemq.Topology{Exchanges: []acemq.ExchangeSpec{{Name: exchange, Type: transport.Direct}}}
	for _, d := range contract.ScheduleRungDelays() {
		name := contract.ScheduleRungQueue(exchange, d)
		t.Queues = append(t.Queues, acemq.QueueSpec{Name: name, Type: transport.Classic,
			Arguments: acemq.Table{
				contract.ArgMessageTTL:           d.Milliseconds(),
				contract.ArgDeadLetterExchange:   exchange,
				contract.ArgDeadLetterRoutingKey: due,
			},
			Bindings: []acemq.BindingSpec{{Exchange: exchange, RoutingKey: name}}})
	}
	t.Queues = append(t.Queues, acemq.QueueSpec{Name: due, Type: transport.Classic,
		Bindings: []acemq.BindingSpec{{Exchange: exchange, RoutingKey: due}}})
	return t
}

// Exchange is the scheduler's exchange, contract.ScheduleExchange unless
// WithExchange renamed it.
func (s *Scheduler) Exchange() string { return s.exchange }

// DueQueue is the queue the forwarder consumes: the exchange's name and
// .due.
func (s *Scheduler) DueQueue() string { return s.due }

// PublishIn publishes body to be delivered to exchange under routingKey
// in d from now: see PublishAt.
func (s *Scheduler) PublishIn(ctx context.Context, d time.Duration, exchange, routingKey string, body any, opts ...acemq.MessageOption) error {
	now := s.clock.Now()
	return s.publish(ctx, now, now.Add(d), exchange, routingKey, body, opts)
}

// PublishAt publishes body to be delivered to exchange ("" is the default
// exchange) under routingKey at t, to the second or so: the body encoded by
// the scheduler's codec, in an envelope the options adjust (id, headers...).
// It returns once the broker has confirmed the message on its first rung
// (or in the due queue, when t is under a second away or past); from then
// on the forwarder (Forward) moves it rung by rung, each hop confirmed,
// and delivers it in a new envelope of type ScheduledMessage with the
// codec's content type.
//
// The errors are acemq.Publisher's (a *acemq.PublishError); the message is
// unroutable (acemq.ErrUnroutable) when the scheduler's topology is not
// declared.
func (s *Scheduler) PublishAt(ctx context.Context, t time.Time, exchange, routingKey string, body any, opts ...acemq.MessageOption) error {
	return s.publish(ctx, s.clock.Now(), t, exchange, routingKey, body, opts)
}

// publish sends body, due at t, to its first rung as of now: one reading
// of the clock, so that PublishIn(time.Second) waits on the 1s rung.
func (s *Scheduler) publish(ctx context.Context, now, t time.Time, exchange, routingKey string, body any, opts []acemq.MessageOption) error {
	codec := s.codec
	if codec == nil {
		codec = acemq.DefaultCodec(body)
	}
	data, err := codec.Marshal(body)
	if err != nil {
		return fmt.Errorf("schedule: encoding the body for %s: %w", target(exchange, routingKey), err)
	}
	env := acemq.Envelope{}
	for _, opt := range opts {
		opt(&env)
	}
	headers := make(acemq.Table, len(env.Headers)+4)
	for k, v := range env.Headers {
		headers[k] = v
	}
	headers[contract.HeaderScheduleExchange] = exchange
	headers[contract.HeaderScheduleRoutingKey] = routingKey
	headers[contract.HeaderScheduleDueAt] = t.UnixMilli()
	headers[contract.HeaderScheduleContentType] = codec.ContentType()
	env.Headers = headers
	env.ContentType = contract.ScheduleHopContentType
	env = env.Complete(routingKey, now)
	msg := acemq.RawMessage{Body: data}
	if err := env.Write(&msg); err != nil {
		return fmt.Errorf("schedule: the message for %s: %w", target(exchange, routingKey), err)
	}
	key := s.due
	if rung, ok := rungFor(t.Sub(now)); ok {
		key = contract.ScheduleRungQueue(s.exchange, rung)
	}
	return publish(ctx, s.conn, "", s.exchange, key, msg)
}

// publish is Conn.Forward, waited for (bounded by the publisher's default
// confirm timeout when ctx has no deadline): the application's publish
// (kind "", as Conn.Publish), or the forwarder's hop or delivery, which the
// Conn's Observer counts as the library's own republishes.
func publish(ctx context.Context, conn *acemq.Conn, kind contract.RepublishKind, exchange, key string, msg acemq.RawMessage) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, acemq.DefaultConfirmTimeout)
		defer cancel()
	}
	sent, err := conn.Forward(ctx, kind, exchange, key, msg)
	if err == nil {
		err = sent.Wait(ctx)
	}
	if _, already := errors.AsType[*acemq.PublishError](err); err != nil && !already {
		err = &acemq.PublishError{Exchange: exchange, RoutingKey: key, MessageID: msg.MessageID, Err: err}
	}
	return err
}

// target names where a scheduled message goes, in errors and logs.
func target(exchange, routingKey string) string {
	if exchange == "" {
		exchange = "the default exchange"
	}
	return fmt.Sprintf("%s under %q", exchange, routingKey)
}
