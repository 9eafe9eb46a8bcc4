package acemq

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/option"
	"github.com/acemq-go/acemq/transport"
)

// Interceptor sees a message in wire form on its way out (a publish
// interceptor, WithPublishInterceptors) or in (a consume interceptor,
// WithConsumeInterceptors), and may change it, or refuse it by returning an
// error. Interceptors run in order, each seeing what the one before left;
// the first refusal stops the chain.
//
// A refused publish is not sent: Publish returns a *PublishError wrapping
// the error. A refused delivery is a failure of its handler, which is not
// called: it takes the retry path, as Retry(err) would; an error marked
// with Fatal dead-letters it at once.
//
// The x-acemq-* headers are the library's: an interceptor reads them but
// must not set, change or remove one. One that does has a publish refused
// with an error matching ErrReservedHeader, and a delivery dead-lettered at
// once with that error as its reason (Fatal: the same code would do it
// again). To change the body, give Body a new slice rather than write into
// the one given (through Conn.Publish, that is the caller's).
type Interceptor func(ctx context.Context, m *Intercepted) error

// Intercepted is a message as an interceptor sees it: where it goes (or came
// from), its headers, x-acemq-* ones included, and its body as encoded.
type Intercepted struct {
	// Exchange and RoutingKey are where a publish goes; on a delivery,
	// where it came from, which a change only tells the handler's Message.
	Exchange   string
	RoutingKey string
	// Queue is the queue a delivery came from; "" for a publish.
	Queue string
	// Headers are all the message's headers, never nil; only the
	// application's may be set, changed or removed.
	Headers         Table
	ContentType     string
	ContentEncoding string
	Body            []byte

	msg transport.Message // the rest of the message, as it came
}

// Envelope reads the message's envelope, as it stands.
func (m *Intercepted) Envelope() Envelope {
	return readEnvelope(m.message(), m.RoutingKey)
}

// intercepted is m, going to or coming from exchange under routingKey, as
// interceptors see it.
func intercepted(exchange, routingKey, queue string, m transport.Message) *Intercepted {
	if m.Headers == nil {
		m.Headers = transport.Table{}
	}
	return &Intercepted{Exchange: exchange, RoutingKey: routingKey, Queue: queue, Headers: m.Headers,
		ContentType: m.ContentType, ContentEncoding: m.ContentEncoding, Body: m.Body, msg: m}
}

// message is the message as the interceptors left it.
func (m *Intercepted) message() transport.Message {
	out := m.msg
	out.Headers, out.ContentType, out.ContentEncoding, out.Body = m.Headers, m.ContentType, m.ContentEncoding, m.Body
	return out
}

// intercept runs chain over m, stopping at the first refusal: the error of
// the interceptor at place at (from 1), or, when it set, changed or removed
// a reserved header, that header's name as reserved and an error matching
// ErrReservedHeader. what names the chain ("publish", "consume").
func intercept(ctx context.Context, what string, chain []Interceptor, m *Intercepted) (at int, reserved string, err error) {
	before := reservedOf(m.Headers)
	for i, interceptor := range chain {
		if err := interceptor(ctx, m); err != nil {
			return i + 1, "", err
		}
		if name, ok := reservedChange(before, m.Headers); ok {
			return i + 1, name, fmt.Errorf("%s interceptor %d of %d set, changed or removed the header %q: %w (prefix %q)",
				what, i+1, len(chain), name, ErrReservedHeader, contract.ReservedHeaderPrefix)
		}
	}
	return 0, "", nil
}

// reservedOf copies the reserved headers of h.
func reservedOf(h transport.Table) transport.Table {
	out := transport.Table{}
	for k, v := range h {
		if isReserved(k) {
			out[k] = v
		}
	}
	return out
}

// reservedChange names a reserved header set, changed or removed in h since
// before was taken, the first in order.
func reservedChange(before, h transport.Table) (string, bool) {
	var changed []string
	for k, v := range h {
		if was, ok := before[k]; isReserved(k) && (!ok || !same(was, v)) {
			changed = append(changed, k)
		}
	}
	for k := range before {
		if _, ok := h[k]; !ok {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return "", false
	}
	return slices.Min(changed), true
}

// same reports whether two header values are equal: strings and integers,
// which the envelope is written in, at once, anything else deeply.
func same(a, b any) bool {
	switch a := a.(type) {
	case string:
		b, ok := b.(string)
		return ok && a == b
	case int64:
		b, ok := b.(int64)
		return ok && a == b
	}
	return reflect.DeepEqual(a, b)
}

// The interceptor options.

// WithPublishInterceptors runs chain, in order, before every publish: of a
// Publisher, given to NewPublisher; of every Publisher of a Conn and of
// Conn.Publish, given to Connect or New, the Conn's running first. The
// library's own republishes (retries, set-asides, Conn.Republish) go around
// them: they carry a message already published, byte for byte.
func WithPublishInterceptors(chain ...Interceptor) PublishInterceptorsOption {
	return PublishInterceptorsOption{option.Named("WithPublishInterceptors", func(o *options) error {
		if err := checkChain(chain); err != nil {
			return err
		}
		o.conn.publishChain = append(o.conn.publishChain, chain...)
		o.pub.chain = append(o.pub.chain, chain...)
		return nil
	})}
}

// WithConsumeInterceptors runs chain, in order, on every delivery before it
// is decoded and handled: of one consumer, given to Consume; of every
// consumer of a Conn, given to Connect or New, the Conn's running first.
// A change is what the codec and the handler see; a retry or a set-aside
// republishes the message as it was delivered.
func WithConsumeInterceptors(chain ...Interceptor) ConsumeInterceptorsOption {
	return ConsumeInterceptorsOption{option.Named("WithConsumeInterceptors", func(o *options) error {
		if err := checkChain(chain); err != nil {
			return err
		}
		o.conn.consumeChain = append(o.conn.consumeChain, chain...)
		o.cons.chain = append(o.cons.chain, chain...)
		return nil
	})}
}

func checkChain(chain []Interceptor) error {
	for i, interceptor := range chain {
		if interceptor == nil {
			return invalid("interceptor %d of %d is nil", i+1, len(chain))
		}
	}
	return nil
}
