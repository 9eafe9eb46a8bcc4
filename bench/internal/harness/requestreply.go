package harness

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/bench/internal/stats"
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
	AceMQRequest = "acemq request"
	// RawEnvelopeReplyQueue is raw amqp091-go sending and answering what
	// AceMQ's client and responder send (the envelope, acemq-reply-to,
	// the correlation id as AceMQ sets it, acemq-error read): acemq's
	// like-for-like baseline.
	RawEnvelopeReplyQueue = "raw+envelope reply queue"
	// RawReplyQueue and RawDirectReplyTo send bare messages (a content
	// type, a message id, reply-to and correlation-id only).
	RawReplyQueue    = "raw reply queue"
	RawDirectReplyTo = "raw direct reply-to"
	// RawEnvelopeDirectReplyTo is raw+envelope through direct reply-to,
	// without the acemq-reply-to header (which RabbitMQ would not rewrite):
	// what a direct reply-to option of request.Client would cost.
	RawEnvelopeDirectReplyTo = "raw+envelope direct reply-to"
)

// requestReply are the contenders of a request-reply scenario of n round
// trips with concurrency requesters.
func (r *Runner) requestReply(n, concurrency int) []contender {
	scenario := RequestReply1
	if concurrency > 1 {
		scenario = RequestReply8
	}
	raw := func(kind rawRequests) run {
		return func(ctx context.Context, q string) ([]time.Duration, error) {
			return r.Raw.RequestReply(ctx, q, n, concurrency, kind)
		}
	}
	cs := []contender{
		{name: RawEnvelopeReplyQueue, baseline: RawEnvelopeReplyQueue, run: raw(rawRequests{envelope: true})},
		{name: RawReplyQueue, baseline: RawEnvelopeReplyQueue, run: raw(rawRequests{})},
		{name: RawDirectReplyTo, baseline: RawEnvelopeReplyQueue, run: raw(rawRequests{direct: true})},
		{name: RawEnvelopeDirectReplyTo, baseline: RawEnvelopeReplyQueue, run: raw(rawRequests{envelope: true, direct: true})},
		{name: AceMQRequest, baseline: RawEnvelopeReplyQueue, run: func(ctx context.Context, q string) ([]time.Duration, error) {
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
