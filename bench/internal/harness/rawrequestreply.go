package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// directReplyTo is RabbitMQ's pseudo-queue for replies without a queue: a
// broker feature, not part of the family's wire.
const directReplyTo = "amq.rabbitmq.reply-to"

// rawRequests says what raw request-reply sends: bare messages or AceMQ's
// (envelope), through a reply queue or direct reply-to.
type rawRequests struct {
	envelope, direct bool
}

// RequestReply is request-reply in plain amqp091-go with AceMQ's
// guarantees on both sides: requests and replies mandatory, persistent and
// confirmed, each request acked once its reply is confirmed. The
// requester's one channel publishes the requests and consumes the replies,
// matched by correlation id: from its own server-named exclusive reply
// queue (acked), or with direct, from amq.rabbitmq.reply-to (no-ack, as
// RabbitMQ requires). With envelope, both sides send the headers AceMQ's
// request.Do and request.Serve send, and read the ones they read.
func (r *Raw) RequestReply(ctx context.Context, queue string, n, concurrency int, kind rawRequests) ([]time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop, err := r.respond(ctx, queue, concurrency, kind.envelope)
	if err != nil {
		return nil, err
	}
	defer stop()

	ch, err := r.conn.Channel()
	if err != nil {
		return nil, err
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		return nil, err
	}
	replyTo, autoAck := directReplyTo, true
	if !kind.direct {
		q, err := ch.QueueDeclare("", false, true, true, false, amqp.Table{contract.ArgQueueType: contract.QueueTypeClassic})
		if err != nil {
			return nil, err
		}
		if err := ch.Qos(prefetch, 0, false); err != nil {
			return nil, err
		}
		replyTo, autoAck = q.Name, false
	}
	replies, err := ch.ConsumeWithContext(ctx, replyTo, "", autoAck, false, false, false, nil)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	waiting := map[string]chan amqp.Delivery{}
	go func() {
		for d := range replies {
			if !autoAck {
				_ = d.Ack(false)
			}
			mu.Lock()
			w := waiting[d.CorrelationId]
			mu.Unlock()
			if w != nil {
				w <- d // buffered: one reply per request
			}
		}
	}()
	return roundTrips(ctx, n, concurrency, func(ctx context.Context, seq int) error {
		p := NewPayload(seq)
		body, err := json.Marshal(p)
		if err != nil {
			return err
		}
		pub := amqp.Publishing{ContentType: contract.ContentTypeJSON, DeliveryMode: amqp.Persistent, MessageId: p.ID,
			CorrelationId: p.ID, ReplyTo: replyTo, Body: body}
		if kind.envelope {
			if pub, err = envelopeRequest(pub, queue, !kind.direct); err != nil {
				return err
			}
		}
		reply := make(chan amqp.Delivery, 1)
		mu.Lock()
		waiting[pub.CorrelationId] = reply
		mu.Unlock()
		defer func() {
			mu.Lock()
			delete(waiting, pub.CorrelationId)
			mu.Unlock()
		}()
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, pub)
		if err != nil {
			return err
		}
		if ok, err := dc.WaitContext(ctx); err != nil || !ok {
			return fmt.Errorf("request %d not confirmed (%v)", seq, err)
		}
		select {
		case d := <-reply:
			if text, failed := d.Headers[contract.HeaderReplyError]; failed && kind.envelope {
				return fmt.Errorf("request %d: the responder failed: %v", seq, text)
			}
			var got Payload
			if err := json.Unmarshal(d.Body, &got); err != nil {
				return err
			}
			if got.Seq != seq {
				return fmt.Errorf("request %d answered with %d", seq, got.Seq)
			}
			return nil
		case <-ctx.Done():
			return fmt.Errorf("request %d: no reply: %w", seq, ctx.Err())
		}
	})
}

// envelopeRequest is pub as request.Do sends it: a new UUID as its message
// id, correlation-id and x-acemq-correlation, the envelope's headers, and
// with header the reply address in the acemq-reply-to header too. Direct
// reply-to goes without that header: RabbitMQ rewrites only the reply-to
// property to the address a reply must go to, and a responder reads the
// header first (docs/request-reply.md#direct-reply-to).
func envelopeRequest(pub amqp.Publishing, routingKey string, header bool) (amqp.Publishing, error) {
	id := uuid.NewString()
	env := acemq.Envelope{ID: id, Correlation: id, CorrelationID: id, ReplyTo: pub.ReplyTo, ContentType: pub.ContentType}
	if header {
		env.Headers = acemq.Table{contract.HeaderReplyTo: pub.ReplyTo}
	}
	return withEnvelope(pub, env.Complete(routingKey, time.Now()))
}

// envelopeReply is the reply to d as request.Serve sends it: its address
// the acemq-reply-to header, else reply-to; its correlation id the
// request's correlation-id, else x-acemq-correlation, else its message
// id; type Reply, caused by the request.
func envelopeReply(d amqp.Delivery, pub amqp.Publishing) (address string, _ amqp.Publishing, _ error) {
	address, _ = d.Headers[contract.HeaderReplyTo].(string)
	if address == "" {
		address = d.ReplyTo
	}
	corr := d.CorrelationId
	if corr == "" {
		corr, _ = d.Headers[contract.HeaderCorrelation].(string)
	}
	if corr == "" {
		corr = d.MessageId
	}
	if address == "" {
		return "", pub, errors.New("the request names no reply address")
	}
	env := acemq.Envelope{Type: contract.ReplyType, Correlation: corr, CorrelationID: corr, Causation: d.MessageId,
		ContentType: pub.ContentType}.Complete(address, time.Now())
	pub, err := withEnvelope(pub, env)
	return address, pub, err
}

// withEnvelope is pub carrying env's properties and headers.
func withEnvelope(pub amqp.Publishing, env acemq.Envelope) (amqp.Publishing, error) {
	var m transport.Message
	if err := env.Write(&m); err != nil {
		return pub, err
	}
	pub.Headers = amqp.Table(m.Headers) // the same map: raw code would build it as amqp.Table
	pub.MessageId, pub.CorrelationId, pub.ReplyTo = m.MessageID, m.CorrelationID, m.ReplyTo
	return pub, nil
}

// respond answers queue's requests with concurrency handlers on one
// channel: decode, encode the reply, publish it mandatory and confirmed to
// the default exchange under the request's reply address, ack the
// request. With envelope, the reply is AceMQ's (envelopeReply).
func (r *Raw) respond(ctx context.Context, queue string, concurrency int, envelope bool) (stop func(), err error) {
	ch, err := r.conn.Channel()
	if err != nil {
		return nil, err
	}
	if err := ch.Qos(prefetch, 0, false); err != nil {
		ch.Close()
		return nil, err
	}
	if err := ch.Confirm(false); err != nil {
		ch.Close()
		return nil, err
	}
	requests, err := ch.ConsumeWithContext(ctx, queue, "", false, false, false, false, nil)
	if err != nil {
		ch.Close()
		return nil, err
	}
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for d := range requests {
				var p Payload
				if json.Unmarshal(d.Body, &p) != nil {
					_ = d.Reject(false)
					continue
				}
				body, _ := json.Marshal(p) // a Payload always marshals
				address := d.ReplyTo
				reply := amqp.Publishing{ContentType: contract.ContentTypeJSON, DeliveryMode: amqp.Persistent, CorrelationId: d.CorrelationId, Body: body}
				var err error
				if envelope {
					if address, reply, err = envelopeReply(d, reply); err != nil {
						_ = d.Reject(false)
						continue
					}
				}
				dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", address, true, false, reply)
				if err == nil {
					_, err = dc.WaitContext(ctx)
				}
				if err != nil {
					_ = d.Nack(false, true)
					continue
				}
				_ = d.Ack(false)
			}
		})
	}
	return func() {
		_ = ch.Close() // ends the deliveries channel, so the goroutines return
		wg.Wait()
	}, nil
}
