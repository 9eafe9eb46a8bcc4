package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/lenient"
)

// Defaults of the forwarder's consumer, which WithConsumeOptions overrides.
const (
	// DefaultPrefetch keeps every forwarding goroutine busy while a burst
	// of messages falls due together.
	DefaultPrefetch = 256
	// DefaultConcurrency forwards that many messages at once, each waiting
	// for its confirm: a forwarder waits on the broker, not on the CPU.
	// In the benchmark harness (docs/scheduling.md), 2,000 messages due
	// within two seconds came 1.8s late (p50) with 8, 58ms with 64, and
	// no sooner with 128.
	DefaultConcurrency = 64
)

// DefaultPolicy is the forwarder's retry policy: a hop or a delivery that
// fails (the broker refused it, no queue took it, the confirm did not come)
// is tried again after 1s, 2s, 4s ... up to a minute, in the consumer,
// ten times in all, then dead-lettered to the due queue's .dlq.
func DefaultPolicy() acemq.RetryPolicy {
	return acemq.Exponential(10, time.Second, time.Minute).WaitInBrokerFrom(0)
}

// ErrForeign is what a message in the due queue that the scheduler did not
// send is parked with, followed by what is missing or unreadable.
var ErrForeign = errors.New("not a scheduled message (the " + contract.HeaderScheduleExchange + ", " +
	contract.HeaderScheduleRoutingKey + " and " + contract.HeaderScheduleDueAt + " headers say where and when to deliver it)")

// Forwarder consumes the due queue until Close: it is the acemq.Consumer
// doing so (its Stats, Close and the Conn's Observer are a consumer's),
// with what it forwarded counted besides.
type Forwarder struct {
	*acemq.Consumer
	hops, delivered, foreign atomic.Int64
}

// ForwarderStats counts what a Forwarder did with the messages it settled.
type ForwarderStats struct {
	// Hops: sent on to a rung, confirmed.
	Hops int64
	// Delivered: published to their target, confirmed.
	Delivered int64
	// Foreign: parked, not being scheduled messages.
	Foreign int64
}

// Forwarded counts what the forwarder has done so far.
func (f *Forwarder) Forwarded() ForwarderStats {
	return ForwarderStats{Hops: f.hops.Load(), Delivered: f.delivered.Load(), Foreign: f.foreign.Load()}
}

// Forward starts the forwarder: an ordinary acemq consumer of the due
// queue (so it declares the due queue's .dlq and .parked, and the Conn's
// Observer, logger and interceptors see it), with DefaultPolicy,
// DefaultPrefetch and DefaultConcurrency unless WithConsumeOptions says
// otherwise. Each message that arrives is sent on to the longest rung not
// longer than what remains of its wait, or, with under a second left,
// delivered: published to its target in a new envelope of type
// ScheduledMessage, with its x-schedule-content-type (application/json
// when missing) and without the scheduler's headers. Either publish is
// mandatory and confirmed before the message is acked; one that fails is
// retried under the policy, never acked. A message without the
// scheduler's headers is parked with ErrForeign. Run as many forwarders as
// you like, in as many processes: each message is one consumer's.
func (s *Scheduler) Forward(ctx context.Context, opts ...ForwardOption) (*Forwarder, error) {
	o, err := configure(opts, ForwardOption.forwardSetting, "Forward")
	if err != nil {
		return nil, err
	}
	consume := append([]acemq.ConsumeOption{acemq.WithCodec(acemq.Bytes), acemq.WithPolicy(DefaultPolicy()),
		acemq.WithPrefetch(DefaultPrefetch), acemq.WithConcurrency(DefaultConcurrency)}, o.consume...)
	f := &Forwarder{}
	fw := forwarder{s: s, f: f, logger: o.logger.With("queue", s.due)}
	if f.Consumer, err = acemq.Consume(ctx, s.conn, s.due, fw.handle, consume...); err != nil {
		return nil, fmt.Errorf("schedule: forward: %w", err)
	}
	return f, nil
}

type forwarder struct {
	s      *Scheduler
	f      *Forwarder
	logger *slog.Logger
}

func (fw forwarder) handle(ctx context.Context, m acemq.Message[[]byte]) acemq.Decision {
	sm, err := read(m.Envelope)
	if err != nil {
		fw.f.foreign.Add(1)
		fw.logger.Warn("acemq: a message that is not a scheduled one is parked", "message_id", m.Envelope.ID, "error", err)
		return acemq.Park(err)
	}
	if rung, ok := rungFor(sm.dueAt.Sub(fw.s.clock.Now())); ok {
		queue := contract.ScheduleRungQueue(fw.s.exchange, rung)
		msg, err := hop(m.Envelope, sm, m.Body, fw.s.clock.Now())
		if err == nil {
			err = publish(ctx, fw.s.conn, contract.RepublishScheduleHop, fw.s.exchange, queue, msg)
		}
		if err != nil {
			return acemq.Retry(fmt.Errorf("the hop to %s failed: %w", queue, err))
		}
		fw.f.hops.Add(1)
		return acemq.Accept()
	}
	msg, err := delivery(m.Envelope, sm, m.Body, fw.s.clock.Now())
	if err == nil {
		err = publish(ctx, fw.s.conn, contract.RepublishScheduleDelivery, sm.exchange, sm.routingKey, msg)
	}
	if err != nil {
		return acemq.Retry(fmt.Errorf("the delivery to %s failed: %w", target(sm.exchange, sm.routingKey), err))
	}
	fw.f.delivered.Add(1)
	return acemq.Accept()
}

// scheduled is what the scheduler's headers say.
type scheduled struct {
	exchange, routingKey string
	dueAt                time.Time
	contentType          string
}

// read reads the scheduler's headers, or says which is missing or
// unreadable (ErrForeign). The exchange may be "" (the default exchange),
// but it must be there.
func read(env acemq.Envelope) (scheduled, error) {
	h := env.Headers
	var sm scheduled
	var ok bool
	foreign := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrForeign, fmt.Sprintf(format, args...))
	}
	if sm.exchange, ok = text(h, contract.HeaderScheduleExchange); !ok {
		return sm, foreign("%s is missing or not a string", contract.HeaderScheduleExchange)
	}
	if sm.routingKey, ok = text(h, contract.HeaderScheduleRoutingKey); !ok {
		return sm, foreign("%s is missing or not a string", contract.HeaderScheduleRoutingKey)
	}
	ms, ok := lenient.Int(h[contract.HeaderScheduleDueAt])
	if !ok {
		return sm, foreign("%s is missing or not an integer of epoch milliseconds (%v)", contract.HeaderScheduleDueAt, h[contract.HeaderScheduleDueAt])
	}
	sm.dueAt = time.UnixMilli(int64(ms))
	if sm.contentType, _ = text(h, contract.HeaderScheduleContentType); sm.contentType == "" {
		sm.contentType = contract.DefaultScheduleContentType
	}
	return sm, nil
}

// text reads a string header that is present: a string or bytes of UTF-8,
// "" included.
func text(h acemq.Table, name string) (string, bool) {
	switch v := h[name].(type) {
	case string:
		return v, utf8.ValidString(v)
	case []byte:
		return string(v), utf8.Valid(v)
	}
	return "", false
}

// hop is the message as it goes on to a rung: the original bytes as
// application/octet-stream, the envelope and every header kept but the
// broker's dead-lettering history (withoutDeaths), the attempt back to 1,
// since it counts the forwarder's tries at this step.
// A value the envelope lacks (another library's message without an id,
// say) is filled in as a first publish would.
func hop(env acemq.Envelope, sm scheduled, body []byte, now time.Time) (acemq.RawMessage, error) {
	env.ContentType = contract.ScheduleHopContentType
	env.Attempt = 1
	env.Headers = withoutDeaths(env.Headers)
	env = env.Complete(sm.routingKey, now)
	msg := acemq.RawMessage{Body: body}
	if err := env.Write(&msg); err != nil {
		return acemq.RawMessage{}, acemq.Fatal(err)
	}
	writeRoute(env.Route, msg.Headers)
	return msg, nil
}

// writeRoute writes a step-form routing slip back (CONTRACT.md section 13),
// so that a scheduled step of a pipeline goes on with its slip.
func writeRoute(r acemq.Route, h acemq.Table) {
	if len(r.Steps) == 0 && r.ID == "" {
		return
	}
	h[contract.HeaderRoute] = strings.Join(r.Steps, ",")
	h[contract.HeaderRoutePosition] = int64(r.Position)
	if r.ID != "" {
		h[contract.HeaderRouteID] = r.ID
	}
}

// delivery is the message as it goes to its target: a new envelope of type
// ScheduledMessage (a new id; the original's correlation, its id as the
// causation, its origin, claim, reply-to and correlation-id), the
// original's content type, the application's headers without the
// scheduler's or the broker's dead-lettering history.
func delivery(env acemq.Envelope, sm scheduled, body []byte, now time.Time) (acemq.RawMessage, error) {
	headers := withoutDeaths(env.Headers)
	for _, k := range []string{contract.HeaderScheduleExchange, contract.HeaderScheduleRoutingKey,
		contract.HeaderScheduleDueAt, contract.HeaderScheduleContentType} {
		delete(headers, k)
	}
	out := acemq.Envelope{Type: contract.ScheduledMessageType, Correlation: env.Correlation, Causation: env.ID,
		Origin: env.Origin, Claim: env.Claim, ContentType: sm.contentType, ReplyTo: env.ReplyTo,
		CorrelationID: env.CorrelationID, Headers: headers}
	out = out.Complete(sm.routingKey, now)
	msg := acemq.RawMessage{Body: body}
	if err := out.Write(&msg); err != nil {
		return acemq.RawMessage{}, acemq.Fatal(err)
	}
	writeRoute(env.Route, msg.Headers)
	return msg, nil
}

// withoutDeaths is a copy of h without the broker's dead-lettering history
// (x-death, x-first-death-*, x-last-death-*), which a message gains on
// every rung it waits on: the hops are the scheduler's own business, not
// the target's, and a consumer of the target would take them for a
// message that was dead-lettered.
func withoutDeaths(h acemq.Table) acemq.Table {
	out := make(acemq.Table, len(h))
	for k, v := range h {
		if !contract.IsDeathHeader(k) {
			out[k] = v
		}
	}
	return out
}
