package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/bench/internal/stats"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/request"
)

// The request-reply scenarios: n round trips, one requester at a time or
// eight at once, each answered by a responder of the same kind as the
// requester (with as many handlers as there are requesters).
const (
	RequestReply1 = "request-reply (sequential)"
	RequestReply8 = "request-reply (concurrency 8)"
)

// The contenders of the request-reply scenarios; each row's ratio is to
// RawReplyQueue's run of the same round.
const (
	AceMQRequest     = "acemq request"
	RawReplyQueue    = "raw reply queue"
	RawDirectReplyTo = "raw direct reply-to"
)

// directReplyTo is RabbitMQ's pseudo-queue for replies without a queue: a
// broker feature, not part of the family's wire.
const directReplyTo = "amq.rabbitmq.reply-to"

// requestReply are the contenders of a request-reply scenario of n round
// trips with concurrency requesters.
func (r *Runner) requestReply(n, concurrency int) []contender {
	scenario := RequestReply1
	if concurrency > 1 {
		scenario = RequestReply8
	}
	cs := []contender{
		{name: RawReplyQueue, baseline: RawReplyQueue, run: func(ctx context.Context, q string) ([]time.Duration, error) {
			return r.Raw.RequestReply(ctx, q, n, concurrency, false)
		}},
		{name: RawDirectReplyTo, baseline: RawReplyQueue, run: func(ctx context.Context, q string) ([]time.Duration, error) {
			return r.Raw.RequestReply(ctx, q, n, concurrency, true)
		}},
		{name: AceMQRequest, baseline: RawReplyQueue, run: func(ctx context.Context, q string) ([]time.Duration, error) {
			return r.AceMQ.RequestReply(ctx, q, n, concurrency)
		}},
	}
	// The report's lateness columns are whole milliseconds; the log says
	// more.
	for i, c := range cs {
		cs[i].run = func(ctx context.Context, q string) ([]time.Duration, error) {
			times, err := c.run(ctx, q)
			if err == nil {
				fmt.Fprintf(r.Log, "%-28s %-9s round trips: p50 %.2fms, p99 %.2fms\n", scenario, c.name,
					ms(stats.Percentile(times, 50)), ms(stats.Percentile(times, 99)))
			}
			return times, err
		}
	}
	return cs
}

// RequestReply serves queue with request.Serve (echoing the payload) and
// sends n requests with request.Do on one Client, concurrency at a time;
// it returns each round trip's time.
func (a *AceMQ) RequestReply(ctx context.Context, queue string, n, concurrency int) (_ []time.Duration, err error) {
	responder, err := request.Serve(ctx, a.conn, queue, func(_ context.Context, m acemq.Message[Payload]) (Payload, error) {
		return m.Body, nil
	}, request.WithConsumeOptions(acemq.WithPrefetch(prefetch), acemq.WithConcurrency(concurrency)))
	if err != nil {
		return nil, err
	}
	defer closing(ctx, &err, "the responder", func(ctx context.Context) error { _, err := responder.Close(ctx); return err })
	client, err := request.NewClient(ctx, a.conn)
	if err != nil {
		return nil, err
	}
	defer closing(ctx, &err, "the client", client.Close)
	return roundTrips(ctx, n, concurrency, func(ctx context.Context, seq int) error {
		got, err := request.Do[Payload, Payload](ctx, client, "", queue, NewPayload(seq))
		if err == nil && got.Seq != seq {
			err = fmt.Errorf("request %d answered with %d", seq, got.Seq)
		}
		return err
	})
}

// closing closes what a scenario opened, keeping the scenario's error
// first.
func closing(ctx context.Context, err *error, what string, close func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if cerr := close(ctx); cerr != nil && *err == nil {
		*err = fmt.Errorf("closing %s: %w", what, cerr)
	}
}

// RequestReply is request-reply in plain amqp091-go with AceMQ's
// guarantees on both sides: requests and replies mandatory, persistent and
// confirmed, each request acked once its reply is confirmed. The
// requester's one channel publishes the requests and consumes the replies,
// matched by correlation id: from its own server-named exclusive reply
// queue (acked), or with direct, from amq.rabbitmq.reply-to (no-ack, as
// RabbitMQ requires).
func (r *Raw) RequestReply(ctx context.Context, queue string, n, concurrency int, direct bool) ([]time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop, err := r.respond(ctx, queue, concurrency)
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
	if !direct {
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
		reply := make(chan amqp.Delivery, 1)
		mu.Lock()
		waiting[p.ID] = reply
		mu.Unlock()
		defer func() {
			mu.Lock()
			delete(waiting, p.ID)
			mu.Unlock()
		}()
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, amqp.Publishing{
			ContentType: contract.ContentTypeJSON, DeliveryMode: amqp.Persistent, MessageId: p.ID,
			CorrelationId: p.ID, ReplyTo: replyTo, Body: body,
		})
		if err != nil {
			return err
		}
		if ok, err := dc.WaitContext(ctx); err != nil || !ok {
			return fmt.Errorf("request %d not confirmed (%v)", seq, err)
		}
		select {
		case d := <-reply:
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

// respond answers queue's requests with concurrency handlers on one
// channel: decode, encode the reply, publish it mandatory and confirmed to
// the default exchange under the request's reply-to, ack the request.
func (r *Raw) respond(ctx context.Context, queue string, concurrency int) (stop func(), err error) {
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
				dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", d.ReplyTo, true, false, amqp.Publishing{
					ContentType: contract.ContentTypeJSON, DeliveryMode: amqp.Persistent, CorrelationId: d.CorrelationId, Body: body,
				})
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

// roundTrips runs trip for seq 0..n-1, concurrency at a time, and returns
// each one's time; it stops at the first error.
func roundTrips(ctx context.Context, n, concurrency int, trip func(ctx context.Context, seq int) error) ([]time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	times := make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for {
				seq := int(next.Add(1) - 1)
				if seq >= n || ctx.Err() != nil {
					return
				}
				start := time.Now()
				if err := trip(ctx, seq); err != nil {
					cancel(fmt.Errorf("round trip %d: %w", seq, err))
					return
				}
				times[seq] = time.Since(start)
			}
		})
	}
	wg.Wait()
	// A trip's failure, or ctx's own end.
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return times, nil
}
