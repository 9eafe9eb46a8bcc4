package request

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/lenient"
)

// ErrNoReplyAddress dead-letters a request that names no reply address:
// nobody could read its answer.
var ErrNoReplyAddress = errors.New("the request names no reply address (neither the " +
	contract.HeaderReplyTo + " header nor the reply-to property)")

// HandlerFunc answers one request. An error is sent back to the requester
// (the acemq-error header, a body saying no value: see Serve) and the
// request is dead-lettered.
type HandlerFunc[Req, Resp any] func(ctx context.Context, m acemq.Message[Req]) (Resp, error)

// Responder answers the requests of one queue until Close; it is the
// acemq.Consumer doing so, with what Serve counts besides.
type Responder struct {
	*acemq.Consumer
	answered, failed, unsent, unanswerable atomic.Int64
}

// ResponderStats counts the requests a Responder handled.
type ResponderStats struct {
	// Answered: the handler succeeded and its reply was confirmed.
	Answered int64
	// Failed: the handler failed; the requester was told, the request
	// dead-lettered.
	Failed int64
	// Unroutable: the reply address had no queue (the requester had gone);
	// the request was acked.
	Unroutable int64
	// Unanswerable: the request named no reply address; dead-lettered.
	Unanswerable int64
}

// Replies counts what the responder replied.
func (r *Responder) Replies() ResponderStats {
	return ResponderStats{Answered: r.answered.Load(), Failed: r.failed.Load(),
		Unroutable: r.unsent.Load(), Unanswerable: r.unanswerable.Load()}
}

// Serve answers the requests of queue with h, consuming it with
// acemq.Consume (so queue must exist, with its dead-letter half; options
// for the consumer go in WithConsumeOptions). The reply address is the
// acemq-reply-to header, else the reply-to property; the reply goes to the
// default exchange under it, with the request's correlation id (its AMQP
// correlation-id, else x-acemq-correlation, else its message id, as .NET
// expects) and the type WithReplyType names ("Reply").
//
// When h fails, the requester gets a reply with the error in acemq-error,
// and the request is dead-lettered, as the other Go library does (Java
// retries instead and sends no reply). The reply's body is valid under its
// content type, for a requester that parses it before it looks at the
// header (Ruby's): the codec's encoding of no value (JSON's null), or
// JSON's null as application/json when the codec has none (see noValue). A request with
// no reply address is dead-lettered with ErrNoReplyAddress. A reply that
// cannot be sent for a reason other than a missing queue is retried under
// the consumer's policy, and so h runs again: make it idempotent.
func Serve[Req, Resp any](ctx context.Context, conn *acemq.Conn, queue string, h HandlerFunc[Req, Resp], opts ...ServeOption) (*Responder, error) {
	o, err := configure(opts, ServeOption.serveSetting, "Serve")
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, errors.New("request: serve " + queue + ": the handler is nil")
	}
	consume := o.consume
	if o.codec != nil {
		consume = append([]acemq.ConsumeOption{acemq.WithCodec(o.codec)}, consume...)
	}
	s := &server[Req, Resp]{conn: conn, h: h, codec: o.codec, replyType: o.replyType,
		logger: o.logger.With("queue", queue), r: &Responder{}}
	if s.codec == nil {
		s.codec = acemq.DefaultCodec(*new(Resp))
	}
	s.r.Consumer, err = acemq.Consume(ctx, conn, queue, s.handle, consume...)
	if err != nil {
		return nil, fmt.Errorf("request: serve %s: %w", queue, err)
	}
	useOn(conn, s.codec)
	return s.r, nil
}

type server[Req, Resp any] struct {
	conn      *acemq.Conn
	h         HandlerFunc[Req, Resp]
	codec     acemq.Codec
	replyType string
	logger    *slog.Logger
	r         *Responder
}

func (s *server[Req, Resp]) handle(ctx context.Context, m acemq.Message[Req]) acemq.Decision {
	env := m.Envelope
	address := lenient.String(env.Headers[contract.HeaderReplyTo])
	if address == "" {
		address = env.ReplyTo
	}
	if address == "" {
		s.r.unanswerable.Add(1)
		return acemq.Reject(ErrNoReplyAddress)
	}
	// Correlation already falls back to the message id.
	corr := env.CorrelationID
	if corr == "" {
		corr = env.Correlation
	}
	reply := acemq.Envelope{Type: s.replyType, Correlation: corr, CorrelationID: corr, Causation: env.ID,
		ContentType: s.codec.ContentType()}
	resp, err := s.h(ctx, m)
	var body []byte
	if err == nil {
		if body, err = s.codec.Marshal(resp); err != nil {
			err = fmt.Errorf("the reply could not be encoded: %w", err)
		}
	}
	if err != nil {
		reply.Headers = acemq.Table{contract.HeaderReplyError: err.Error()}
		reply.ContentType, body = noValue(s.codec)
	}
	sent := s.send(ctx, address, reply, body)
	switch {
	case err != nil:
		s.r.failed.Add(1)
		if sent != nil && !errors.Is(sent, acemq.ErrUnroutable) {
			s.logger.Warn("acemq: telling the requester of a failure failed", "reply_to", address, "error", sent)
		}
		return acemq.Reject(err)
	case errors.Is(sent, acemq.ErrUnroutable):
		s.r.unsent.Add(1)
		s.logger.Warn("acemq: no queue takes the reply (the requester has gone); request acked",
			"reply_to", address, "correlation_id", corr)
		return acemq.Accept()
	case sent != nil:
		return acemq.Retry(fmt.Errorf("the reply to %s could not be sent: %w", address, sent))
	}
	s.r.answered.Add(1)
	return acemq.Accept()
}

// send publishes a reply through the default exchange, mandatory,
// confirmed and told to the Conn's Observer, in the context of the request's
// delivery (so a trace goes on from the request to its reply).
func (s *server[Req, Resp]) send(ctx context.Context, address string, env acemq.Envelope, body []byte) error {
	env = env.Complete(address, time.Now())
	msg := acemq.RawMessage{Body: body}
	if err := env.Write(&msg); err != nil {
		return err
	}
	sent, err := s.conn.Publish(ctx, "", address, msg)
	if err != nil {
		return err
	}
	return sent.Wait(ctx)
}

// noValue is a failure reply's content type and body: the codec's encoding
// of no value (Marshal(nil): JSON's and YAML's null, an encrypted null)
// when the codec reads it back; else JSON's null as application/json,
// which every library of the family reads and picks by content type. Not
// an empty body without a content type: all five libraries read a message
// without one as JSON, and an empty body is no JSON.
func noValue(codec acemq.Codec) (contentType string, body []byte) {
	if b, err := codec.Marshal(nil); err == nil && codec.Unmarshal(codec.ContentType(), b, new(any)) == nil {
		return codec.ContentType(), b
	}
	b, _ := acemq.JSON.Marshal(nil) // null: cannot fail
	return acemq.JSON.ContentType(), b
}
