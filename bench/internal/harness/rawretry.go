package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/contract"
)

// RawRetry is raw amqp091-go retrying as AceMQ's consumer does, written by
// hand: the fair baseline of the retry scenarios ("raw+retry"). A failed
// delivery is republished with its headers and the next x-acemq-attempt,
// mandatory and persistent, its confirm awaited (a deferred confirm), and
// only then is the original acked.
type RawRetry struct {
	raw *Raw
}

// The raw+retry contenders' names.
const (
	RawRetryName       = "raw+retry"
	RawRetryClassicTTL = "raw+retry classic TTL queue"
	RawRetryQuorumTTL  = "raw+retry quorum TTL queue"
)

// NewRawRetry opens raw+retry's connection; its messages are AceMQ's (the
// envelope's headers), as a retry reads and writes them.
func NewRawRetry(url string) (*RawRetry, error) {
	r, err := dialRaw(url, RawRetryName, acemqPublishing)
	if err != nil {
		return nil, err
	}
	return &RawRetry{raw: r}, nil
}

func (r *RawRetry) Name() string { return r.raw.name }

func (r *RawRetry) Close() error { return r.raw.Close() }

func (r *RawRetry) Preloaded(seq int) (amqp.Publishing, error) { return acemqPublishing(seq) }

// retried is d as a retry republishes it: its properties and body, its
// headers with attempt, persistent, without a per-message expiration.
func retried(d amqp.Delivery, attempt int) amqp.Publishing {
	headers := maps.Clone(d.Headers)
	if headers == nil {
		headers = amqp.Table{}
	}
	headers[contract.HeaderAttempt] = int64(attempt)
	return amqp.Publishing{Headers: headers, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding,
		DeliveryMode: amqp.Persistent, Priority: d.Priority, CorrelationId: d.CorrelationId, ReplyTo: d.ReplyTo,
		MessageId: d.MessageId, Timestamp: d.Timestamp, Type: d.Type, UserId: d.UserId, AppId: d.AppId, Body: d.Body}
}

// attemptOf is d's x-acemq-attempt, 1 when it has none.
func attemptOf(d amqp.Delivery) int {
	if a, ok := d.Headers[contract.HeaderAttempt].(int64); ok && a > 0 {
		return int(a)
	}
	return 1
}

// republishConfirmed publishes p to queue through the default exchange,
// mandatory, and waits for its confirm.
func republishConfirmed(ctx context.Context, pub *amqp.Channel, queue string, p amqp.Publishing) error {
	dc, err := pub.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, p)
	if err != nil {
		return err
	}
	ok, err := dc.WaitContext(ctx)
	if err == nil && !ok {
		err = fmt.Errorf("the broker refused the republish to %s", queue)
	}
	return err
}

// retryChannels are a consumer's channel (Qos prefetch, consuming queue)
// and a publishing channel in confirm mode, as AceMQ's consumer has them.
func (r *RawRetry) retryChannels(ctx context.Context, queue string) (deliveries <-chan amqp.Delivery, pub *amqp.Channel, closeAll func(), err error) {
	ch, err := r.raw.conn.Channel()
	if err != nil {
		return nil, nil, nil, err
	}
	pub, err = r.raw.conn.Channel()
	if err != nil {
		_ = ch.Close()
		return nil, nil, nil, err
	}
	closeAll = func() { _ = ch.Close(); _ = pub.Close() }
	if err = pub.Confirm(false); err == nil {
		if err = ch.Qos(prefetch, 0, false); err == nil {
			deliveries, err = ch.ConsumeWithContext(ctx, queue, "", false, false, false, false, nil)
		}
	}
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	return deliveries, pub, closeAll, nil
}

// RetryInConsumer does what AceMQ's Fixed(2, 10ms) does: one goroutine
// decodes each delivery; a first attempt is held retryWait on a timer (no
// goroutine while it waits), then republished to queue with attempt 2,
// confirmed, and acked; a second attempt is acked.
func (r *RawRetry) RetryInConsumer(ctx context.Context, queue string, n int) error {
	deliveries, pub, closeAll, err := r.retryChannels(ctx, queue)
	if err != nil {
		return err
	}
	finished := newCountdown(n)
	errs := make(chan error, 1)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	var timers sync.WaitGroup
	done := make(chan struct{})
	go func() {
		defer close(done)
		for d := range deliveries {
			var p Payload
			if err := json.Unmarshal(d.Body, &p); err != nil {
				fail(fmt.Errorf("decoding: %w", err))
				return
			}
			if attempt := attemptOf(d); attempt > 1 {
				if err := d.Ack(false); err != nil {
					fail(err)
					return
				}
				finished.Tick()
				continue
			}
			timers.Add(1)
			time.AfterFunc(retryWait, func() {
				defer timers.Done()
				if err := republishConfirmed(ctx, pub, queue, retried(d, 2)); err != nil {
					fail(err) // the original stays unacked: the broker has it back on close
					return
				}
				if err := d.Ack(false); err != nil {
					fail(err)
				}
			})
		}
	}()
	err = finished.Wait(ctx, errs)
	timers.Wait()
	closeAll() // ends deliveries, so the goroutine returns
	<-done
	return err
}

// RetryOnTTLQueue is the rung scenario by hand: it consumes the n
// preloaded messages of queue (prefetch 100, 8 goroutines), republishes
// each first attempt to holding (a TTL queue of ttl that dead-letters back
// to queue) with attempt 2, confirmed, then acks it, and acks the second
// attempt when it comes home. Lateness is against the republish's confirm
// + ttl, as AceMQ's rows count it.
func (r *RawRetry) RetryOnTTLQueue(ctx context.Context, queue, holding string, n int, ttl time.Duration) (RungTrip, error) {
	deliveries, pub, closeAll, err := r.retryChannels(ctx, queue)
	if err != nil {
		return RungTrip{}, err
	}
	finished := newCountdown(n)
	errs := make(chan error, 8)
	var mu sync.Mutex
	failed := make(map[string]time.Time, n)
	confirmed := make(map[string]time.Time, n)
	arrived := make(map[string]time.Time, n)
	handle := func(d amqp.Delivery) error {
		var p Payload
		if err := json.Unmarshal(d.Body, &p); err != nil {
			return fmt.Errorf("decoding: %w", err)
		}
		now := time.Now()
		if attempt := attemptOf(d); attempt > 1 {
			mu.Lock()
			_, seen := arrived[d.MessageId]
			if !seen {
				arrived[d.MessageId] = now
			}
			mu.Unlock()
			if !seen {
				finished.Tick()
			}
			return d.Ack(false)
		}
		if err := republishConfirmed(ctx, pub, holding, retried(d, 2)); err != nil {
			return err // the original stays unacked
		}
		at := time.Now()
		mu.Lock()
		failed[d.MessageId], confirmed[d.MessageId] = now, at
		mu.Unlock()
		return d.Ack(false)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for d := range deliveries {
				if err := handle(d); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	err = finished.Wait(ctx, errs)
	closeAll()
	wg.Wait()
	if err != nil {
		return RungTrip{}, err
	}
	return trip(arrived, confirmed, failed, ttl)
}
